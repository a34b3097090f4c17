"""The tool types the engine reasons about: a tool's description (:class:`ToolSpec`), a failed call
(:class:`ToolError`) and its kinds (:data:`ToolFailureKind`).

They sit in ``core`` because the plan check, the expressions and the plan schema judge plans against tool specs;
the sources of tools (:mod:`planwerk.tools`) build and raise them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ToolFailureKind = Literal[
    "error", "timeout", "unavailable", "invalid_arguments", "not_found", "unauthorized", "forbidden"
]
"""The failure kinds a tool source reports (a subset of :data:`planwerk.core.calls.FailureKind`):
``error`` (the tool reported one), ``timeout``, ``unavailable`` (server or service unreachable),
``invalid_arguments``, ``not_found`` (the tool ran and found nothing for the input), ``unauthorized`` (the server
refused planwerk's credentials, after a token refresh) and ``forbidden`` (refused before it was sent: an argument
names a file outside the server's roots)."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the planner and the plan check see it."""

    name: str
    """Unique name the plan uses in ``"name"``."""
    description: str = ""
    """What the tool does, shown to the model."""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON schema of the arguments object."""
    output_schema: Mapping[str, Any] | None = None
    """JSON schema of the result, when the tool declares one (used to check ``$ref`` paths)."""
    server: str | None = None
    """Name of the MCP server (or other origin) that provides the tool, for error messages."""
    destructive: bool = False
    """The tool changes or deletes something: calls pause for a person's approval. MCP tools: only an explicit
    ``destructiveHint: true`` without ``readOnlyHint: true`` (see ``planwerk.tools.mcp``); functions: the names
    given to :class:`~planwerk.tools.base.FunctionToolSource` as ``destructive``."""
    read_only: bool = False
    """The tool only reads: MCP ``readOnlyHint: true``; functions: the names given to :class:`FunctionToolSource`
    as ``read_only``."""
    timeout_s: float | None = None
    """The source's own per-call timeout for this tool (an MCP server's configured ``timeout``); None: the caller's
    default. ``Context.tool_timeout_s`` (``--tool-timeout``) overrides it."""

    @property
    def acts(self) -> bool:
        """Whether a call may change something (MCP: ``destructiveHint``, or no ``readOnlyHint``): an answer that
        says something was done needs a successful call of such a tool (:mod:`planwerk.checks.claims`)."""
        return self.destructive or not self.read_only


class ToolError(Exception):
    """A tool call failed: the tool raised, the server is down, or the call timed out.

    The message is meant for people and for the planner: it names the server and tool and says what happened.
    """

    def __init__(self, message: str, *, tool: str = "", server: str | None = None, kind: ToolFailureKind = "error"):
        super().__init__(message)
        self.tool = tool
        self.server = server
        self.kind: ToolFailureKind = kind
        """Why the call failed; it reaches the verifier unchanged in the call record's ``kind``."""

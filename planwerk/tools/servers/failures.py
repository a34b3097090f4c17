"""Why a tool call failed, sent by an MCP server in a form clients read without parsing its message.

The convention (planwerk's :class:`~planwerk.tools.mcp.MCPToolSource` reads it; any MCP server may send it):
a failed call is an ordinary tool error result, ``isError: true`` with the human message as text content, that
also carries the failure kind under the key ``planwerk/error`` of the result's ``_meta``::

    {"content": [{"type": "text", "text": "Error executing tool geocode: Nominatim found no place …"}],
     "isError": true,
     "_meta": {"planwerk/error": {"kind": "not_found"}}}

``kind`` is one of ``not_found`` (the tool ran and found nothing for the input), ``invalid_arguments`` (the
arguments do not fit, the caller can fix them), ``unavailable`` (a service behind the tool cannot be reached),
``timeout`` and ``error`` (anything else; also what an error result without the key means).

Why ``_meta`` and not ``structuredContent`` or a JSON-RPC error: ``_meta`` is the protocol's place for metadata
on any result, with namespaced keys, and it is outside the tool's declared output schema, which
``structuredContent`` must follow (FastMCP validates a returned ``CallToolResult``'s ``structuredContent``
against the tool's output model, so an error object there fails for every tool with a typed result). A JSON-RPC
error is for protocol failures, not for a tool that ran and found nothing; the MCP SDK's server turns every
exception a tool raises into an ``isError`` result anyway.

On the server side, build the server as :class:`FastMCPWithFailureKinds` (the SDK's FastMCP, one method
overridden) and raise :class:`ToolFailure` from a tool; other exceptions still become plain error results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, ContentBlock, TextContent

from planwerk.core.tools import ToolFailureKind

FAILURE_META_KEY = "planwerk/error"
"""The ``_meta`` key of an error result that holds ``{"kind": <ToolFailureKind>}``."""

_KINDS: frozenset[str] = frozenset(get_args(ToolFailureKind))


class ToolFailure(Exception):
    """Raised by a tool: the call fails with this message and ``kind`` (see the module docstring)."""

    def __init__(self, message: str, *, kind: ToolFailureKind = "error"):
        super().__init__(message)
        self.kind: ToolFailureKind = kind
        """Why the call failed; sent in ``_meta`` under :data:`FAILURE_META_KEY`."""


def failure_result(message: str, kind: ToolFailureKind) -> CallToolResult:
    """The error result a tool call that failed with ``message`` for reason ``kind`` answers with."""
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        isError=True,
        _meta={FAILURE_META_KEY: {"kind": kind}},
    )


def failure_kind(meta: Mapping[str, Any] | None) -> ToolFailureKind:
    """The kind an error result's ``_meta`` names; ``error`` when it names none or one this client does not know."""
    entry = (meta or {}).get(FAILURE_META_KEY)
    kind = entry.get("kind") if isinstance(entry, Mapping) else None
    # An unknown kind from a newer or careless server must not pass as a kind the verifier acts on.
    return kind if isinstance(kind, str) and kind in _KINDS else "error"  # type: ignore[return-value]


def _failure_in(exc: BaseException) -> ToolFailure | None:
    """The :class:`ToolFailure` that caused ``exc`` (FastMCP wraps a tool's exception in its own ToolError)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ToolFailure):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class FastMCPWithFailureKinds(FastMCP):
    """The SDK's FastMCP whose tools may raise :class:`ToolFailure`: the error result then names the kind.

    The message stays the one FastMCP would have sent (``Error executing tool <name>: <message>``).
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any] | CallToolResult:
        """Run the tool; a :class:`ToolFailure` becomes :func:`failure_result` instead of a plain error."""
        try:
            return await super().call_tool(name, arguments)
        except Exception as exc:
            failure = _failure_in(exc)
            if failure is None:
                raise  # FastMCP's own handling: an error result without a kind
            return failure_result(str(exc), failure.kind)

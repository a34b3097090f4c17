"""The tool seam: what the executor needs from any source of tools.

The graph never talks to MCP directly. It sees a :class:`ToolSource`: a catalog of :class:`ToolSpec`
(names plus JSON schemas, used by the planner prompt and the plan check) and one coroutine to call a tool.
MCP (``planwerk.tools.mcp``) is one implementation; :class:`FunctionToolSource` wraps plain async Python
functions (handy for embedding planwerk in an app, and for tests about the engine's own logic).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

from pydantic import TypeAdapter, create_model

from planwerk.core.repair import check_arguments
from planwerk.core.tools import ToolError, ToolSpec

CALL_DEADLINE: ContextVar[float | None] = ContextVar("planwerk_call_deadline", default=None)
"""The event-loop time (``loop.time()``) by which the caller stops waiting for the current tool call, set by
:func:`planwerk.execution.call_one` around :meth:`ToolSource.call`. A source can tell from it that a cancellation
is the caller's timeout (which says the tool did not answer in time) and not, say, a cancelled run."""


@runtime_checkable
class ToolSource(Protocol):
    """Where the executor gets its tools from."""

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """The tools by name."""
        ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call ``name`` with already resolved ``arguments``.

        Returns the normalised result: structured content when the tool gives it, else text parsed as JSON
        when it is JSON, else text. Raises :class:`ToolError` for every failure (never a transport exception).
        """
        ...


ToolFunction = Callable[..., Awaitable[Any]]


class FunctionToolSource:
    """A :class:`ToolSource` over plain ``async def`` functions; schemas come from their type hints.

    Failure kinds: a function that raises :class:`ToolError` chooses its own ``kind`` (e.g. ``not_found``);
    arguments that do not fit the function's schema are ``invalid_arguments`` (checked and repaired before the
    call, as for MCP tools); any other exception is ``error``. A ``LookupError`` or ``KeyError`` is NOT taken to
    mean ``not_found``: inside a function it is as likely a bug as a missing input, and only the function knows.
    """

    def __init__(
        self,
        functions: Mapping[str, ToolFunction] | list[ToolFunction],
        server: str = "local",
        *,
        destructive: Collection[str] = (),
        read_only: Collection[str] = (),
    ):
        """``functions`` by name (or named by ``__name__``); ``destructive``: the names whose calls need approval;
        ``read_only``: the names that only read (every other tool may act, as MCP assumes without annotations)."""
        items = functions.items() if isinstance(functions, Mapping) else ((f.__name__, f) for f in functions)
        self._functions: dict[str, ToolFunction] = dict(items)
        # A misspelt name would silently let a destructive tool run without approval.
        if unknown := sorted(set(destructive) - set(self._functions)):
            raise ValueError(f"destructive names no tool of this source: {', '.join(unknown)}")
        if unknown := sorted(set(read_only) - set(self._functions)):
            raise ValueError(f"read_only names no tool of this source: {', '.join(unknown)}")
        self._server = server
        self._signatures = {name: inspect.signature(fn) for name, fn in self._functions.items()}
        self._specs = {
            name: _spec_from_function(name, fn, server, destructive=name in destructive, read_only=name in read_only)
            for name, fn in self._functions.items()
        }

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """The tools by name."""
        return self._specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call function ``name``; its result (a Pydantic model as a dict), or :class:`ToolError`."""
        server = self._server
        try:
            fn = self._functions[name]
        except KeyError:
            raise ToolError(f"unknown tool {name!r}", tool=name, server=server, kind="invalid_arguments") from None
        args = check_arguments(self._specs[name].input_schema, arguments, tool=name, server=server)
        try:  # the schema allows extra keys; the function's signature does not
            self._signatures[name].bind(**args)
        except TypeError as exc:
            raise ToolError(
                f"invalid arguments for {name} on server {server}: {exc}",
                tool=name,
                server=server,
                kind="invalid_arguments",
            ) from None
        try:
            result = await fn(**args)
        except ToolError as exc:
            # The function chose the kind; only fill in where it came from, if it did not say.
            exc.tool = exc.tool or name
            exc.server = exc.server or server
            raise
        except Exception as exc:  # a tool's own failure is data for the verifier, not a crash
            raise ToolError(f"{name} failed: {type(exc).__name__}: {exc}", tool=name, server=server) from exc
        if hasattr(result, "model_dump"):
            return result.model_dump(mode="json")
        return result


def _spec_from_function(
    name: str, fn: ToolFunction, server: str, *, destructive: bool = False, read_only: bool = False
) -> ToolSpec:
    signature = inspect.signature(fn)
    hints = inspect.get_annotations(fn, eval_str=True)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    input_schema = create_model(f"{name}_input", **fields).model_json_schema()
    output_schema = None
    returns = hints.get("return")
    if returns is not None and returns is not Any:
        try:
            output_schema = TypeAdapter(returns).json_schema()
        except Exception:  # an unschematisable return type just means "no declared output"
            output_schema = None
    return ToolSpec(
        name=name,
        description=inspect.getdoc(fn) or "",
        input_schema=input_schema,
        output_schema=output_schema,
        server=server,
        destructive=destructive,
        read_only=read_only,
    )

"""Per-call settings a caller hands to a tool source without changing ``ToolSource.call``'s signature.

:func:`planwerk.graph.nodes.call_tool.call_tool` sets them around one call: a timeout that overrides the source's own
(``--tool-timeout``, ``Context.tool_timeout_s``), where progress notifications go (``tool_progress`` events) and
whether file arguments must stay inside the server's roots (the profile's ``enforce_roots``).
They travel in a context variable, as :data:`planwerk.tools.base.CALL_DEADLINE` does, so any tool source may read
them and one that does not simply ignores them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class ToolProgress:
    """One progress notification of a running call (MCP ``notifications/progress``)."""

    progress: float
    """How far the call is; increases with every notification."""
    total: float | None = None
    """The value ``progress`` reaches at the end, when the server knows it."""
    message: str | None = None
    """What the server says it is doing, when it says."""


ProgressSink = Callable[[ToolProgress], None]
"""Receives the progress of the current call (called from the session's reader task: it must not block)."""


@dataclass(frozen=True)
class CallOptions:
    """Settings of the current tool call."""

    timeout_s: float | None = None
    """Overrides the source's own per-call timeout (an MCP server's configured ``timeout``); None keeps it."""
    on_progress: ProgressSink | None = None
    """Where progress notifications go; None: the server is not asked for progress (no progress token is sent)."""
    enforce_roots: bool = False
    """Refuse (kind ``forbidden``) a call whose arguments name a file outside the server's roots
    (:mod:`planwerk.tools.paths`); the profile's ``enforce_roots``."""

    def __post_init__(self) -> None:
        timeout = self.timeout_s
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
            raise ValueError(f"CallOptions.timeout_s must be a positive number of seconds or None, got {timeout!r}")


DEFAULT_OPTIONS = CallOptions()
"""No override, no progress: what a call gets outside :func:`call_options`."""
CALL_OPTIONS: ContextVar[CallOptions] = ContextVar("planwerk_call_options", default=DEFAULT_OPTIONS)
"""The options of the call the current task makes."""


@contextlib.contextmanager
def call_options(
    timeout_s: float | None = None, on_progress: ProgressSink | None = None, *, enforce_roots: bool = False
) -> Iterator[CallOptions]:
    """Set the options of the calls made inside the block (in this task and the tasks it starts)."""
    options = CallOptions(timeout_s=timeout_s, on_progress=on_progress, enforce_roots=enforce_roots)
    token = CALL_OPTIONS.set(options)
    try:
        yield options
    finally:
        CALL_OPTIONS.reset(token)

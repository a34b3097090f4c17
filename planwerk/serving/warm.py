"""Warm runs under a server: MCP sessions kept per process across runs, and what a run needs loaded at start.

Without this, every run under ``langgraph dev`` opened its MCP servers anew (a stdio server is a process spawn:
about 0.5 s each, the "Slow graph load" error on every run) and the first run loaded the model and the embedder.

- :class:`ToolPool` keeps one open :class:`~planwerk.tools.mcp.MCPToolSource` per MCP configuration (keyed by a
  digest of the whole configuration, secrets included, so a changed file or header opens new sessions), per owner
  (the authenticated user of the run, :func:`run_owner`: users never share a session, so what a server sends on
  one reaches only runs of its owner) and per event loop. Runs lease it; concurrent runs share its sessions (an MCP
  session takes concurrent calls). A source whose servers went away (after the source's own reconnect) is replaced
  on the next lease, at most every :attr:`ToolPool.reopen_after_s`; the old one closes when its last run is done.
  At most :attr:`ToolPool.max_configs` configurations stay open (the least recently used idle one closes first).
- :func:`warm_start` loads what the default context (or ``PLANWERK_WARM_START_CONTEXT``) names, in the
  background at server start, each step logged with its time: the model (kept by the per-process model cache),
  the MCP sessions (into the pool) and the retriever with its embedder (the per-process retriever cache).
  ``PLANWERK_WARM_START`` picks the parts: ``all`` (default), ``none``, or a comma list of ``model``, ``tools``,
  ``retriever``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import hashlib
import json
import logging
import os
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from planwerk.graph.context import Context
from planwerk.graph.run_context import answer_model_spec_of, model_spec_of, run_context
from planwerk.graph.runtime import shared_retriever
from planwerk.models.specs import load_chat_model
from planwerk.rag.embeddings import load_embedder
from planwerk.tools import mcp  # the module, not open_tools: tests wrap mcp.open_tools
from planwerk.tools.base import ToolSource
from planwerk.tools.config import load_config

log = logging.getLogger(__name__)

WARM_START_ENV = "PLANWERK_WARM_START"
"""What :func:`warm_start` loads: ``all`` (default), ``none``, or a comma list of ``model``, ``tools``,
``retriever``."""
WARM_START_CONTEXT_ENV = "PLANWERK_WARM_START_CONTEXT"
"""A JSON object of :class:`Context` fields for :func:`warm_start` (default: the default context)."""
WarmPart = Literal["model", "tools", "retriever"]
WARM_PARTS: tuple[WarmPart, ...] = ("model", "tools", "retriever")
CLOSE_TIMEOUT_S = 15.0
"""How long closing a pooled source may take (stdio servers get 2 s each to exit, then are terminated)."""


def config_key(config: Any, owner: str | None = None) -> str:
    """A digest of an MCP configuration, secrets included (never the secrets themselves), and of the ``owner``
    whose runs share its sessions (``None``: no authenticated user)."""
    text = json.dumps([dataclasses.asdict(config), owner], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def run_owner(config: Mapping[str, Any] | None) -> str | None:
    """The authenticated user a run belongs to, from its run config: what the server's auth put under
    ``configurable.langgraph_auth_user_id`` (or ``langgraph_auth_user``'s ``identity``); ``None`` without auth.

    Only the server's authentication may set these: the LangGraph server overwrites them from the verified user (and
    the graph factory reads ``ServerRuntime.user`` instead). Aegra 0.6.0 does NOT overwrite what a client sent, so
    its graph reads Aegra's auth context instead (:func:`planwerk.serving.aegra.aegra_owner`), and both servers'
    request check refuses a client that sends these keys (:data:`planwerk.serving.context_check.RESERVED_KEYS`)."""
    configurable = (config or {}).get("configurable") or {}
    owner = configurable.get("langgraph_auth_user_id")
    if not owner:
        user = configurable.get("langgraph_auth_user")
        owner = user.get("identity") if isinstance(user, Mapping) else getattr(user, "identity", None)
    return str(owner) if owner else None


@dataclass(eq=False)
class _Entry:
    """One pooled configuration: its source, owned by ``task`` until ``stop`` is set."""

    key: str
    names: str
    opened_at: float = field(default_factory=time.monotonic)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    source: Any = None
    error: BaseException | None = None
    users: int = 0
    last_used: float = field(default_factory=time.monotonic)
    retired: bool = False
    task: asyncio.Task[None] | None = None
    successor: _Entry | None = None
    """New sessions for the same configuration, opening in the background while runs keep using this entry."""
    spare: bool = False
    """Opened ahead of any run (the warm start) and not yet used: the first authenticated owner who needs this
    configuration takes it over as their own (it has served nobody, so nothing of anyone's is on it)."""

    def retire(self) -> None:
        """Take no new runs; close once the runs using it are done."""
        self.retired = True
        if self.users == 0:
            self.stop.set()


class ToolPool:
    """Open MCP tool sources of one event loop, by configuration (see the module docstring)."""

    def __init__(self, *, max_configs: int = 8, reopen_after_s: float = 30.0):
        self.max_configs = max_configs
        self.reopen_after_s = reopen_after_s
        self._entries: dict[str, _Entry] = {}
        self._retired: set[_Entry] = set()
        self._swaps: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def lease(
        self, config: Any, owner: str | None = None, *, spare: bool = False
    ) -> AsyncIterator[tuple[ToolSource, bool]]:
        """The open source of ``config`` (an :class:`~planwerk.tools.config.MCPConfig`) for one run of ``owner``,
        and whether it was already open (warm). Runs of different owners never share sessions: a server's
        request that arrives on a session (sampling, elicitation) can only reach a run of the session's owner.
        ``spare``: opened ahead of any run (the warm start); the first owner who needs it takes it over."""
        key = config_key(config, owner)
        entry = self._entries.get(key)
        if entry is None and owner is not None:
            entry = self._claim_spare(config, key)
        if entry is not None and self._broken(entry):
            if self._partly_up(entry):
                # Some servers still serve: this run uses them; the down ones are retried in the background, and
                # the new sessions take over once they are up (a dead server's start-up wait is nobody's run).
                self._refresh(entry, config)
            else:
                log.warning("MCP servers %s: %s; opening new sessions", entry.names, _down(entry))
                self._drop(entry)
                entry = None
        warm = entry is not None and entry.ready.is_set()
        if entry is None:
            entry = self._open(key, config)
            entry.spare = spare
        elif not spare:
            entry.spare = False
        entry.users += 1
        entry.last_used = time.monotonic()
        try:
            await entry.ready.wait()
            if entry.error is not None:
                self._drop(entry)
                raise entry.error
            yield entry.source, warm
        finally:
            entry.users -= 1
            entry.last_used = time.monotonic()
            if entry.retired and entry.users == 0:
                entry.stop.set()

    def _claim_spare(self, config: Any, key: str) -> _Entry | None:
        """The warm start's unused sessions of ``config``, moved to ``key`` (an owner's); ``None`` if there are
        none. Only a spare entry nobody has leased since is handed over, so no owner inherits another's."""
        spare = self._entries.get(config_key(config, None))
        if spare is None or not spare.spare or spare.users:
            return None
        del self._entries[spare.key]
        spare.key, spare.spare = key, False
        self._entries[key] = spare
        return spare

    def _broken(self, entry: _Entry) -> bool:
        """Whether ``entry`` should be replaced: its owner ended, or a server is down and it is old enough."""
        if entry.task is not None and entry.task.done():
            return True
        if not entry.ready.is_set() or entry.source is None:
            return False
        return bool(entry.source.unavailable) and time.monotonic() - entry.opened_at >= self.reopen_after_s

    def _partly_up(self, entry: _Entry) -> bool:
        """Whether ``entry``'s owner runs and at least one of its servers is up."""
        if entry.task is None or entry.task.done() or entry.source is None:
            return False
        servers = getattr(entry.source, "server_names", ())
        return len(entry.source.unavailable) < len(servers)

    def _refresh(self, old: _Entry, config: Any) -> None:
        """Open new sessions for ``old``'s configuration in the background (once at a time); they replace ``old``
        when they are up with fewer servers down, else ``old`` stays and is retried after ``reopen_after_s``."""
        if old.successor is not None:
            return
        log.warning("MCP servers %s: %s; reconnecting in the background", old.names, _down(old))
        new = _Entry(key=old.key, names=old.names)
        old.successor = new
        new.task = asyncio.create_task(
            self._own(new, config), name=f"planwerk-mcp-pool-{old.key[:8]}-retry", context=contextvars.Context()
        )
        swap = asyncio.create_task(self._take_over(old, new), context=contextvars.Context())
        self._swaps.add(swap)
        swap.add_done_callback(self._swaps.discard)

    async def _take_over(self, old: _Entry, new: _Entry) -> None:
        await new.ready.wait()
        old.successor = None
        better = (
            new.error is None
            and new.source is not None
            and len(new.source.unavailable) < len(old.source.unavailable if old.source is not None else {})
        )
        if better and self._entries.get(old.key) is old:
            self._entries[old.key] = new
            self._drop(old)
            log.info("MCP servers %s: new sessions took over", new.names)
            return
        old.opened_at = time.monotonic()  # retried again after reopen_after_s
        self._retired.add(new)
        new.retire()

    def _open(self, key: str, config: Any) -> _Entry:
        entry = _Entry(key=key, names=", ".join(config.servers) or "(none)")
        # A fresh context: the sessions outlive the run that opened them and must not hold its context variables
        # (LangGraph's runnable config, tracing callbacks).
        entry.task = asyncio.create_task(
            self._own(entry, config), name=f"planwerk-mcp-pool-{key[:8]}", context=contextvars.Context()
        )
        self._entries[key] = entry
        idle = [e for e in self._entries.values() if e.users == 0 and e is not entry]
        for old in sorted(idle, key=lambda e: e.last_used)[: max(0, len(self._entries) - self.max_configs)]:
            self._drop(old)
        return entry

    def _drop(self, entry: _Entry) -> None:
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        self._retired.add(entry)
        entry.retire()

    async def _own(self, entry: _Entry, config: Any) -> None:
        """Hold ``open_tools(config)`` open until the entry is stopped (the sessions live in this task)."""
        started = time.perf_counter()
        try:
            async with mcp.open_tools(config) as source:
                entry.source = source
                entry.ready.set()
                log.info("MCP servers %s open for runs after %.2f s", entry.names, time.perf_counter() - started)
                await entry.stop.wait()
        except Exception as error:  # handed to the waiting lease; the next lease opens anew
            entry.error = error
        finally:
            entry.ready.set()
            self._retired.discard(entry)
            if self._entries.get(entry.key) is entry:
                del self._entries[entry.key]

    async def aclose(self) -> None:
        """Close every pooled source now (server shutdown); runs still using one lose their sessions."""
        for swap in list(self._swaps):
            swap.cancel()
        successors = [e.successor for e in self._entries.values() if e.successor is not None]
        entries = [*self._entries.values(), *self._retired, *successors]
        self._entries.clear()
        for entry in entries:
            entry.stop.set()
        tasks = [e.task for e in entries if e.task is not None and not e.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)
            for task in pending:
                task.cancel()

    @property
    def open_configs(self) -> int:
        """How many configurations have open (or opening) sessions."""
        return len(self._entries)


def _down(entry: _Entry) -> str:
    unavailable: Mapping[str, str] = entry.source.unavailable if entry.source is not None else {}
    return "; ".join(f"{name} is unavailable ({why})" for name, why in unavailable.items()) or "the sessions ended"


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ToolPool] = weakref.WeakKeyDictionary()


def tool_pool() -> ToolPool:
    """The running event loop's pool (sessions belong to the loop that opened them)."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = ToolPool()
    return pool


async def close_tool_pool() -> None:
    """Close the running event loop's pool, if it has one."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.aclose()


# --- loading at start -----------------------------------------------------------------------------------------


def warm_parts(env: Mapping[str, str] | None = None) -> tuple[WarmPart, ...]:
    """The parts :data:`WARM_START_ENV` names; ``ValueError`` naming the accepted values for anything else."""
    env = os.environ if env is None else env
    text = env.get(WARM_START_ENV, "").strip().lower() or "all"
    if text == "all":
        return WARM_PARTS
    if text == "none":
        return ()
    parts = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in parts if p not in WARM_PARTS]
    if unknown:
        raise ValueError(
            f"{WARM_START_ENV}={text!r}: unknown part(s) {', '.join(unknown)}; expected all, none, or a comma "
            f"list of {', '.join(WARM_PARTS)}"
        )
    return tuple(p for p in WARM_PARTS if p in parts)


def warm_context(env: Mapping[str, str] | None = None) -> Context:
    """The context :func:`warm_start` loads for: :data:`WARM_START_CONTEXT_ENV` (JSON), else the default."""
    env = os.environ if env is None else env
    text = env.get(WARM_START_CONTEXT_ENV, "").strip()
    if not text:
        return Context()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{WARM_START_CONTEXT_ENV}: not valid JSON ({error.msg}, column {error.colno})") from None
    return run_context(value)


async def warm_start(parts: tuple[WarmPart, ...] | None = None, context: Context | None = None) -> dict[str, float]:
    """Load ``parts`` for ``context`` (defaults: from the environment), concurrently, logging each step; the
    seconds each took. A part that fails is logged and left to the first run (which then loads it itself)."""
    try:
        parts = warm_parts() if parts is None else parts
        # In a thread: the run policy resolves paths (blocking calls on the server's loop).
        context = await asyncio.to_thread(warm_context) if context is None else context
        model_spec = model_spec_of(context)  # the profile's model; a broken profile file raises here
        answer_spec = answer_model_spec_of(context)
    except ValueError as error:
        log.error("warm start skipped: %s", error)
        return {}
    if not parts:
        log.info("warm start: nothing to load (%s=none)", WARM_START_ENV)
        return {}
    log.info("warm start: loading %s for model %s, profile %s", ", ".join(parts), model_spec, context.profile)
    timings: dict[str, float] = {}

    async def load(part: WarmPart) -> None:
        started = time.perf_counter()
        try:
            if part == "model":
                await asyncio.to_thread(load_chat_model, model_spec)
                if answer_spec != model_spec:
                    await asyncio.to_thread(load_chat_model, answer_spec)
            elif part == "tools":
                config = await asyncio.to_thread(load_config, context.mcp_config)
                # Spare: with authentication on, the first user's run takes these sessions over.
                async with tool_pool().lease(config, spare=True):
                    pass
            else:
                await shared_retriever(context)
                # The embedder loads lazily (the index opens without it): the retriever and the planner's example
                # ranker use the default one, cached per process.
                await asyncio.to_thread(load_embedder)
        except Exception as error:  # the first run loads it (and reports a real problem) instead
            why = f"{type(error).__name__}: {error}"
            log.warning("warm start: %s failed after %.1f s: %s", part, _since(started), why)
            return
        timings[part] = _since(started)
        log.info("warm start: %s ready after %.1f s", part, timings[part])

    started = time.perf_counter()
    await asyncio.gather(*(load(part) for part in parts))
    log.info("warm start: done after %.1f s", _since(started))
    return timings


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 2)

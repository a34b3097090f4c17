"""The Python API: an agent with thread-based, resumable sessions.

```python
async with Agent(model="replay:demo.json", db="threads.sqlite") as agent:
    reply = await agent.ask("Wie ist heute das Wetter in Barcelona?", thread_id="trip-1")
    async for event in agent.events("Und morgen?", thread_id="trip-1"):
        ...
```
For callers without asyncio: :func:`ask` and :func:`iter_events`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import queue
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

from planwerk.core.approval import parse_approval
from planwerk.graph.builder import build_graph
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.ask_user import answer_problem
from planwerk.graph.nodes.prepare import check_question_text
from planwerk.graph.run_context import answer_model_spec_of, model_spec_of
from planwerk.graph.runtime import PROFILE_RETRIEVER, RetrieverChoice, open_deps
from planwerk.models.specs import parse_model_spec
from planwerk.profiles import get_profile
from planwerk.rag.base import Retriever
from planwerk.serving.locking import DEFAULT_THREAD_WAIT_S, thread_lock
from planwerk.serving.sqlite_saver import DurableSqliteSaver
from planwerk.serving.threads_file import Access, check_threads_file
from planwerk.tools.base import ToolSource

MAX_THREAD_ID_CHARS = 256
"""Longer thread ids are refused: an id is a name, not a payload (it is stored in every checkpoint row)."""

RECURSION_LIMIT = 1_000
"""Supersteps per run: each plan step costs two (resolver and calls), a plan has at most 64 calls, the planner at
most a few attempts; the limit only stops a loop that never ends."""


@dataclass(frozen=True)
class Reply:
    """What one turn produced."""

    thread_id: str
    answer: str | None
    """The answer; ``None`` while the thread waits for the user (see ``question``)."""
    question: str | None = None
    """What the agent asks the user (the thread is interrupted; continue with :meth:`Agent.resume`)."""
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    """The pending interrupts (``ask_user`` or ``approval``) when the thread waits for a person."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every event of the turn, in order."""

    @property
    def metadata(self) -> dict[str, Any]:
        """The ``final_answer`` event's metadata (model calls, tokens, tool calls, duration)."""
        final = next((e for e in reversed(self.events) if e["event"] == "final_answer"), None)
        return dict(final["metadata"]) if final else {}


class Agent:
    """planwerk as an object: owns the MCP sessions, the retriever and the checkpointer for its lifetime."""

    def __init__(
        self,
        *,
        model: str | BaseChatModel | None = None,
        answer_model: str | BaseChatModel | None = None,
        profile: str | None = None,
        mcp_config: str | Path | None = None,
        tools: ToolSource | None = None,
        retriever: Retriever | bool | None = True,
        db: str | Path | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
        context: Context | None = None,
        thread_wait_s: float = DEFAULT_THREAD_WAIT_S,
    ):
        """Configure an agent.

        ``context`` sets every field of the run's :class:`Context`; ``model``, ``answer_model``, ``profile`` and
        ``mcp_config`` override its fields when given (``None`` keeps the context's). ``model`` is a spec string (see
        ``planwerk.models.specs``) or a chat model, and so is ``answer_model``, the model that writes the answers
        (default: the profile's answer model, or ``model``); ``tools`` replaces the MCP servers of the MCP config (the
        bundled ones when empty); ``retriever=True`` opens the profile's index, ``False`` disables retrieval;
        ``db`` keeps threads in a SQLite file, else ``checkpointer`` or memory. With ``db``, a turn holds its
        thread's lock across processes; ``thread_wait_s`` is how long it waits for another process's turn on the
        same thread before it fails with :class:`~planwerk.serving.locking.ThreadBusyError`.
        """
        overrides: dict[str, Any] = {}
        if isinstance(model, str):
            overrides["model"] = model
        if isinstance(answer_model, str):
            overrides["answer_model"] = answer_model
        if profile is not None:
            overrides["profile"] = profile
        if mcp_config is not None:
            overrides["mcp_config"] = str(mcp_config)
        self.context = replace(context or Context(), **overrides)
        get_profile(self.context.profile, mcp_config=self.context.mcp_config)  # fail early on an unknown profile
        self._chat_model = None if model is None or isinstance(model, str) else model
        self._answer_chat_model = None if answer_model is None or isinstance(answer_model, str) else answer_model
        if self._chat_model is None:
            _check_model_spec(model_spec_of(self.context))
        if self._answer_chat_model is None:
            try:
                _check_model_spec(answer_model_spec_of(self.context))
            except ValueError as error:
                raise ValueError(f"answer model: {error}") from None
        self._tools = tools
        self._retriever = retriever
        self._db = Path(db) if db else None
        if (
            isinstance(thread_wait_s, bool)
            or not isinstance(thread_wait_s, int | float)
            or not math.isfinite(thread_wait_s)
            or thread_wait_s < 0
        ):
            raise ValueError(f"thread_wait_s must be a finite number of seconds >= 0, got {thread_wait_s!r}")
        self._thread_wait_s = float(thread_wait_s)
        self._checkpointer = checkpointer
        self._stack: contextlib.AsyncExitStack | None = None
        self._thread_locks: dict[str, tuple[asyncio.Lock, int]] = {}
        """Per thread: the lock that queues its runs, and how many runs hold or wait for it."""
        self.graph: CompiledStateGraph | None = None

    async def __aenter__(self) -> Agent:
        """Resolve the model, open the MCP sessions, the retriever and the checkpointer (:func:`open_deps`)."""
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._db is not None and self._checkpointer is None:
                # Before MCP servers start or the model loads: a bad threads file fails in milliseconds.
                await asyncio.to_thread(check_threads_file, self._db, "write")
            retriever: RetrieverChoice = PROFILE_RETRIEVER
            if self._retriever is False or self._retriever is None:
                retriever = None
            elif self._retriever is not True:
                retriever = self._retriever
            deps = await stack.enter_async_context(
                open_deps(
                    self.context,
                    chat_model=self._chat_model,
                    answer_chat_model=self._answer_chat_model,
                    tools=self._tools,
                    retriever=retriever,
                )
            )
            checkpointer = await _open_checkpointer(stack, self._db, self._checkpointer, access="write")
            self.graph = build_graph(deps, checkpointer=checkpointer)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close what :meth:`__aenter__` opened (MCP sessions, the SQLite connection)."""
        if self._stack is not None:
            await self._stack.aclose()
        self._stack = None

    def _config(self, thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}

    async def events(
        self,
        question: str | None = None,
        *,
        thread_id: str | None = None,
        resume: Any = None,
        interrupt_id: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run one turn and yield its events (:mod:`planwerk.events`: JSON-able dicts with an ``event`` key).

        Give ``question`` for a new turn, ``resume`` to answer the pending interrupt (the ``ask_user`` question,
        or an approval: ``"approve"``, ``"reject"`` or ``{"action": "edit", "args": {...}}``), or neither to
        continue an interrupted (crashed) run of ``thread_id``. With several pending interrupts (approvals of
        calls of one step), ``interrupt_id`` picks one; without it the answer applies to all of them. When the
        run pauses, the last events are ``{"event": "interrupt", "kind": ..., "interrupt_id": ..., ...}``.
        """
        if self.graph is None:
            raise RuntimeError("use the agent inside 'async with Agent(...) as agent'")
        thread_id = uuid.uuid4().hex if thread_id is None else check_thread_id(thread_id)
        if question is not None:
            # Refused before anything is stored: a rejected question never enters the thread's checkpoints.
            check_question_text(question)
        run_input: Any
        run_input = {"messages": [{"role": "user", "content": question}]} if question is not None else None
        config = self._config(thread_id)
        # Runs on one thread are queued, never interleaved (two turns writing one checkpoint would mix): in this
        # process by an asyncio lock, across processes sharing the db by a file lock.
        async with self._thread_lock(thread_id), self._process_lock(thread_id):
            if question is None:
                pending = await self._check_continuable(config, thread_id, answering=resume is not None)
                if resume is not None:
                    run_input = _resume_command(
                        pending, resume, interrupt_id, max_args_bytes=self.context.max_argument_bytes
                    )
            async for mode, chunk in self.graph.astream(
                run_input, config, context=self.context, stream_mode=["custom", "updates"]
            ):
                if mode == "custom":
                    yield {**chunk, "thread_id": thread_id}
                elif mode == "updates" and "__interrupt__" in chunk:
                    for item in chunk["__interrupt__"]:
                        yield {**interrupt_event(item), "thread_id": thread_id}

    @contextlib.asynccontextmanager
    async def _thread_lock(self, thread_id: str) -> AsyncIterator[None]:
        lock, users = self._thread_locks.get(thread_id, (asyncio.Lock(), 0))
        self._thread_locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._thread_locks[thread_id]
            if users <= 1:  # the last user forgets the lock, so the table does not grow with every thread
                del self._thread_locks[thread_id]
            else:
                self._thread_locks[thread_id] = (lock, users - 1)

    def _process_lock(self, thread_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """The thread's lock shared with other processes using the same db file (nothing to share without one)."""
        if self._db is None or self._checkpointer is not None:
            return contextlib.nullcontext()
        return thread_lock(self._db, thread_id, wait_s=self._thread_wait_s)

    async def _check_continuable(
        self, config: dict[str, Any], thread_id: str, *, answering: bool
    ) -> tuple[Interrupt, ...]:
        """The thread's pending interrupts; a clear error instead of LangGraph's ``EmptyInputError`` when there is
        nothing to resume."""
        assert self.graph is not None
        snapshot = await self.graph.aget_state(config)
        if not snapshot.values:
            raise KeyError(f"unknown thread id {thread_id!r}: no checkpoint exists for it")
        if answering and not snapshot.interrupts:
            raise ValueError(f"thread {thread_id!r} is not waiting for an answer; ask a new question instead")
        if not answering and not snapshot.next:
            raise ValueError(f"thread {thread_id!r} has no interrupted run to continue; ask a new question instead")
        return tuple(snapshot.interrupts)

    async def ask(self, question: str, *, thread_id: str | None = None) -> Reply:
        """Run one turn and collect it."""
        if not isinstance(question, str):
            raise TypeError(f"the question must be a string, got {type(question).__name__}")
        thread_id = uuid.uuid4().hex if thread_id is None else thread_id
        return await self._collect(self.events(question, thread_id=thread_id), thread_id)

    async def resume(self, answer: Any = None, *, thread_id: str, interrupt_id: str | None = None) -> Reply:
        """Answer the agent's question or an approval (or, with ``None``, continue an interrupted run)."""
        stream = self.events(thread_id=thread_id, resume=answer, interrupt_id=interrupt_id)
        return await self._collect(stream, thread_id)

    async def _collect(self, stream: AsyncIterator[dict[str, Any]], thread_id: str) -> Reply:
        events = [event async for event in stream]
        final = next((e for e in reversed(events) if e["event"] == "final_answer"), None)
        pending = [e for e in events if e["event"] == "interrupt"] if final is None else []
        return Reply(
            thread_id=thread_id,
            answer=final["answer"] if final else None,
            question=pending[-1].get("question") if pending else None,
            interrupts=pending,
            events=events,
        )

    async def state(self, thread_id: str) -> dict[str, Any]:
        """The thread's current state values (conversation, plan, results, call log, answer)."""
        if self.graph is None:
            raise RuntimeError("use the agent inside 'async with Agent(...) as agent'")
        return await _state_values(self.graph, thread_id)


async def read_state(
    thread_id: str, *, db: str | Path | None = None, checkpointer: BaseCheckpointSaver | None = None
) -> dict[str, Any]:
    """A thread's current state values, read from its checkpoints alone: no MCP server starts, no model loads.

    ``db`` is the SQLite file an :class:`Agent` keeps its threads in (it is not created when missing), else
    ``checkpointer``. ``KeyError`` for an unknown thread, as :meth:`Agent.state`.
    """
    if db is None and checkpointer is None:
        raise ValueError("read_state needs the threads' db file or a checkpointer")
    check_thread_id(thread_id)
    if db is not None and checkpointer is None:
        await asyncio.to_thread(check_threads_file, Path(db), "read")
        if not Path(db).is_file():
            raise KeyError(f"unknown thread id {thread_id!r}: no checkpoint exists for it (no thread file {db})")
    async with contextlib.AsyncExitStack() as stack:
        saver = await _open_checkpointer(stack, Path(db) if db else None, checkpointer, access="read")
        # Deps(): the same topology without tools or a model; reading state runs no node.
        return await _state_values(build_graph(Deps(), checkpointer=saver), thread_id)


async def _state_values(graph: CompiledStateGraph, thread_id: str) -> dict[str, Any]:
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if not snapshot.values:
        raise KeyError(f"unknown thread id {thread_id!r}: no checkpoint exists for it")
    return dict(snapshot.values)


async def _open_checkpointer(
    stack: contextlib.AsyncExitStack,
    db: Path | None,
    checkpointer: BaseCheckpointSaver | None,
    *,
    access: Access,
) -> BaseCheckpointSaver:
    """The given checkpointer, else a SQLite file's (checked first, closed with ``stack``), else memory."""
    if checkpointer is not None:
        return checkpointer
    if db is None:
        return InMemorySaver()
    # A folder, a text file or an unwritable place named as the threads file: one sentence naming it.
    await asyncio.to_thread(check_threads_file, db, access)
    if access == "read":  # committed threads stay readable on a full disk or a read-only mount
        return await stack.enter_async_context(DurableSqliteSaver.read_only(db))
    return await stack.enter_async_context(DurableSqliteSaver.from_conn_string(str(db)))


def check_thread_id(thread_id: str) -> str:
    """``thread_id`` when it can name a thread; ``ValueError`` saying what is expected otherwise."""
    if not isinstance(thread_id, str):
        raise ValueError(f"the thread id must be a string, got {type(thread_id).__name__}")
    if not thread_id.strip():
        raise ValueError("the thread id is empty; expected a name such as trip-1 (or none for a new thread)")
    if len(thread_id) > MAX_THREAD_ID_CHARS:
        raise ValueError(f"the thread id has {len(thread_id)} characters; at most {MAX_THREAD_ID_CHARS} are accepted")
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in thread_id):
        raise ValueError("the thread id holds control characters or bytes that are not UTF-8; expected plain text")
    return thread_id


def interrupt_event(item: Interrupt) -> dict[str, Any]:
    """A LangGraph interrupt as an :class:`~planwerk.events.InterruptEvent`."""
    value = dict(item.value) if isinstance(item.value, dict) else {"question": str(item.value)}
    kind = value.pop("kind", "ask_user")
    return {"event": "interrupt", "kind": kind, "interrupt_id": item.id, **value}


def _resume_command(
    pending: tuple[Interrupt, ...], answer: Any, interrupt_id: str | None, *, max_args_bytes: int | None = None
) -> Command:
    """The ``Command`` that answers the pending interrupt(s); approvals and answers are checked before anything
    runs (a refused one is never stored)."""
    chosen = [i for i in pending if interrupt_id is None or i.id == interrupt_id]
    if not chosen:
        known = ", ".join(i.id for i in pending)
        raise ValueError(f"no pending interrupt {interrupt_id!r} on this thread; pending: {known}")
    for item in chosen:
        if isinstance(item.value, dict) and item.value.get("kind") == "approval":
            parse_approval(answer, max_args_bytes=max_args_bytes)  # ApprovalError (a ValueError) says what is expected
        elif isinstance(item.value, dict) and item.value.get("kind") == "ask_user" and answer_problem(answer):
            raise ValueError(f"{answer_problem(answer)}; send a shorter answer")
    if len(pending) == 1:
        return Command(resume=answer)
    return Command(resume={item.id: answer for item in chosen})


def _check_model_spec(spec: str) -> None:
    """Fail before any server starts when the spec cannot work (no I/O beyond a file check)."""
    if not spec.strip():
        raise ValueError("the model spec is empty; expected e.g. profile, default, hf:<id or folder> or replay:<file>")
    parsed = parse_model_spec(spec)
    if parsed.kind == "replay" and not Path(parsed.target).expanduser().is_file():
        raise ValueError(f"replay file not found: {parsed.target}; expected a JSON array of strings")


def iter_events(question: str, **agent_options: Any) -> Iterator[dict[str, Any]]:
    """Synchronous event iterator for callers that do not use asyncio (runs the agent in a worker thread)."""
    thread_id = agent_options.pop("thread_id", None)
    items: queue.Queue[Any] = queue.Queue()
    done = object()

    async def produce() -> None:
        async with Agent(**agent_options) as agent:
            async for event in agent.events(question, thread_id=thread_id):
                items.put(event)

    def run() -> None:
        try:
            asyncio.run(produce())
        except BaseException as error:  # re-raised in the caller's thread
            items.put(error)
        finally:
            items.put(done)

    worker = threading.Thread(target=run, name="planwerk-events", daemon=True)
    worker.start()
    while (item := items.get()) is not done:
        if isinstance(item, BaseException):
            raise item
        yield item
    worker.join()


def ask(question: str, **agent_options: Any) -> Reply:
    """Plain synchronous call: one question, one :class:`Reply`."""
    thread_id = agent_options.pop("thread_id", None)

    async def run() -> Reply:
        async with Agent(**agent_options) as agent:
            return await agent.ask(question, thread_id=thread_id)

    return asyncio.run(run())

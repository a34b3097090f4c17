"""The graph: the engine's every part is a node Studio can show.

```
START → prepare → retrieve → plan → check ─(rejected, attempts left)→ plan
                                      ├─(ask_user)→ ask_user (interrupt) → plan
                                      ├─(nothing to call / no attempts left)→ answer
                                      └→ resolve_refs ─Send × calls of the next step→ call_tool ─→ resolve_refs
                                              └─(plan done)→ verify ─(done / give up)→ answer
                                                               ├─(self-correct / replan / next round)→ plan
                                                               └─(not found twice)→ ask_user
answer ─(a draft)→ check_answer ─(accepted)→ END
   │                    ├─(rejected, first draft)→ regenerate → check_answer
   │                    └─(rejected, second draft)→ fallback → END
   └─(no plan passed)→ fallback → END
```
``plan`` is the planner (one model call), ``check`` the gate (tolerant parse, step re-ordering, plan check),
``resolve_refs`` the ``$ref`` resolver and step barrier, ``call_tool`` the step executor (one node run per call,
with a retry policy for transient failures and an approval interrupt for destructive tools), ``verify`` the
verifier. The answer loop: ``answer`` writes the first draft (one model call, or the planner's ``final``),
``check_answer`` checks it and delivers it or rejects it, ``regenerate`` writes the second draft naming the
problems (one model call), ``fallback`` builds the deterministic answer. Only a delivered answer becomes a message;
the routing after ``verify``, ``answer`` and ``check_answer`` is a pure function of the state
(:mod:`planwerk.graph.routing`). The topology never depends on which tools are loaded (the LangGraph server
builds the graph on every access).

Every run is checkpointed with ``durability="sync"`` (:class:`DurableGraph`): a step's checkpoint is committed
before the next step's tool calls start, so a call with side effects that finished is never made again after a
crash, even while another process holds the database's write lock (LangGraph's default ``"async"`` lets calls run
ahead of checkpoints that are still waiting for the lock; a ``kill -9`` then loses them all).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, RetryPolicy

from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.derived import DerivedStateGraph, part_with_results
from planwerk.graph.nodes.answer import answer, regenerate
from planwerk.graph.nodes.ask_user import ask_user
from planwerk.graph.nodes.call_tool import call_retry_policy, call_tool
from planwerk.graph.nodes.check import CHECK_ROUTES, check
from planwerk.graph.nodes.check_answer import check_answer
from planwerk.graph.nodes.fallback import fallback
from planwerk.graph.nodes.plan import plan
from planwerk.graph.nodes.prepare import prepare
from planwerk.graph.nodes.resolve_refs import RESOLVE_ROUTES, resolve_refs
from planwerk.graph.nodes.retrieve import retrieve
from planwerk.graph.nodes.verify import verify
from planwerk.graph.routing import after_answer, after_check_answer, after_verify
from planwerk.graph.state import AgentState, CallInput, InputState, OutputState


class DurableGraph(DerivedStateGraph):
    """planwerk's compiled graph: every run with a checkpointer uses ``durability="sync"``, whatever the caller asks.

    The LangGraph server passes ``durability="async"`` unless a client names another, and a run's tool calls may
    have side effects: a step's checkpoint must be committed before the next step's calls start (the README's
    promise that a killed thread resumes without repeating finished calls). ``"exit"`` and ``"async"`` are raised to
    ``"sync"``; the cost per step is measured in BENCHMARKS.md. ``stream`` and ``astream`` are the entry points every
    other way of running goes through (``invoke``, ``astream_events``, the server's run worker).

    What a program reads of a run carries the state's derived keys (``results`` from ``calls``,
    :mod:`planwerk.graph.derived`) as ``get_state`` and the state history do (:class:`DerivedStateGraph`), so a key
    derived rather than stored reads as it did when it was stored.
    """

    def _durable(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        has_checkpointer = bool(self.checkpointer) or CONFIG_KEY_CHECKPOINTER in (config or {}).get("configurable", {})
        kwargs.pop("checkpoint_during", None)  # the deprecated spelling of durability; it would clash with ours
        if has_checkpointer:  # without one LangGraph warns that durability has no effect
            kwargs["durability"] = "sync"
        return kwargs

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        """LangGraph's ``stream`` with ``durability="sync"`` and the derived keys (:mod:`planwerk.graph.derived`)."""
        mode = kwargs.get("stream_mode") or self.stream_mode
        for part in super().stream(input, config, **self._durable(config, kwargs)):
            yield part_with_results(part, mode)

    async def astream(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream`` with ``durability="sync"``, after :meth:`check_pending` (before anything is
        stored), with the derived keys (:mod:`planwerk.graph.derived`)."""
        mode = kwargs.get("stream_mode") or self.stream_mode
        kwargs = self._durable(config, kwargs)
        if "durability" in kwargs:  # a checkpointer keeps threads: what is pending can be known
            await self.check_pending(input, config)
        async for part in super().astream(input, config, **kwargs):
            yield part_with_results(part, mode)

    async def check_pending(self, input: Any, config: RunnableConfig | None) -> None:
        """Refuse, with :class:`PendingInterruptError`, input that would drop or repeat an answer.

        - a resume (``Command(resume=...)``) when the thread waits for nothing (the interrupt was answered
          already: LangGraph would report success and silently drop the second answer), or naming an interrupt
          id that is not pending;
        - new input (a question) while the thread waits for an answer (LangGraph would start a new run and
          silently drop the pending question or approval).
        """
        configurable = (config or {}).get("configurable", {})
        if "thread_id" not in configurable:
            return
        snapshot = await self.aget_state(config)  # type: ignore[arg-type]
        pending = {item.id: item for item in snapshot.interrupts}
        thread = configurable["thread_id"]
        if isinstance(input, Command) and input.resume is not None:
            if not pending:
                raise PendingInterruptError(
                    f"thread {thread!r} is not waiting for an answer (its question was answered already, or it "
                    "never asked one); ask a new question instead"
                )
            by_id = isinstance(input.resume, dict) and input.resume and set(input.resume) <= _interrupt_ids(input)
            if by_id and (stale := sorted(set(input.resume) - set(pending))):
                raise PendingInterruptError(
                    f"thread {thread!r} has no pending interrupt {', '.join(stale)} (answered already?); "
                    f"pending: {', '.join(pending)}"
                )
            return
        if pending and not isinstance(input, Command) and input is not None:
            first = next(iter(pending.values()))
            question = first.value.get("question") if isinstance(first.value, dict) else first.value
            raise PendingInterruptError(
                f"thread {thread!r} is waiting for an answer to {str(question)[:200]!r} (interrupt {first.id}); "
                'answer it first (Command(resume=...), the SDK\'s command={"resume": ...}, planwerk resume), '
                "then ask the new question"
            )


class PendingInterruptError(ValueError):
    """The input would drop a pending question or approval, or answer one that is not pending."""


def _interrupt_ids(command: Command) -> set[str]:
    """The keys of a resume map that look like interrupt ids (LangGraph's are 32 hex digits)."""
    keys = command.resume.keys() if isinstance(command.resume, dict) else ()
    return {k for k in keys if isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)}


def build_graph(
    deps: Deps | None = None,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    call_retry: RetryPolicy | None = None,
) -> DurableGraph:
    """Compile the agent (a :class:`DurableGraph`).

    ``deps`` binds the model, tools and retriever; ``checkpointer`` makes threads durable; ``call_retry`` is the
    per-call node's retry policy for transient failures (default :func:`call_retry_policy`; the run's
    ``Context.tool_retry_attempts`` lowers it per run).
    """
    deps = deps or Deps()
    retry = call_retry or call_retry_policy()
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("prepare", prepare)
    builder.add_node("retrieve", partial(retrieve, deps=deps))
    builder.add_node("plan", partial(plan, deps=deps))
    builder.add_node("check", partial(check, deps=deps), destinations=CHECK_ROUTES)
    builder.add_node("ask_user", ask_user)
    builder.add_node("resolve_refs", partial(resolve_refs, deps=deps), destinations=RESOLVE_ROUTES)
    builder.add_node(
        "call_tool", partial(call_tool, deps=deps, retry=retry), input_schema=CallInput, retry_policy=retry
    )
    builder.add_node("verify", verify)
    builder.add_node("answer", partial(answer, deps=deps))
    builder.add_node("check_answer", partial(check_answer, deps=deps))
    builder.add_node("regenerate", partial(regenerate, deps=deps))
    builder.add_node("fallback", partial(fallback, deps=deps))
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_edge("plan", "check")
    builder.add_edge("ask_user", "plan")
    builder.add_edge("call_tool", "resolve_refs")
    builder.add_conditional_edges("verify", after_verify)
    builder.add_conditional_edges("answer", after_answer)
    builder.add_conditional_edges("check_answer", after_check_answer)
    builder.add_edge("regenerate", "check_answer")
    builder.add_edge("fallback", END)
    compiled = builder.compile(checkpointer=checkpointer, name="planwerk")
    compiled.__class__ = DurableGraph  # same attributes, only the durability differs; ``copy`` keeps the class
    return compiled  # type: ignore[return-value]

"""The graph: the engine's every part is a node Studio can show.

```
START → prepare → retrieve → plan → check ─(rejected, attempts left)→ plan
                                      ├─(ask_user)→ ask_user (interrupt) → plan
                                      ├─(nothing to call / no attempts left)→ finalize → END
                                      └→ resolve_refs ─Send × calls of the next step→ call_tool ─→ resolve_refs
                                              └─(plan done)→ verify ─(done / give up)→ finalize
                                                               ├─(self-correct / replan)→ plan
                                                               └─(not found twice)→ ask_user
```
``plan`` is the planner (one model call), ``check`` the gate (tolerant parse, step re-ordering, plan check),
``resolve_refs`` the ``$ref`` resolver and step barrier, ``call_tool`` the step executor (one node run per call,
with a retry policy for transient failures and an approval interrupt for destructive tools), ``verify`` the
verifier, ``finalize`` the finalizer. The topology never depends on which tools are loaded (the LangGraph server
builds the graph on every access).
"""

from __future__ import annotations

from functools import partial

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy

from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.routing import after_verify
from planwerk.graph.state import AgentState, CallInput, InputState, OutputState
from planwerk.nodes.ask_user import ask_user
from planwerk.nodes.call_tool import call_retry_policy, call_tool
from planwerk.nodes.check import CHECK_ROUTES, check
from planwerk.nodes.finalize import finalize
from planwerk.nodes.plan import plan
from planwerk.nodes.prepare import prepare
from planwerk.nodes.resolve_refs import RESOLVE_ROUTES, resolve_refs
from planwerk.nodes.retrieve import retrieve
from planwerk.nodes.verify import verify


def build_graph(
    deps: Deps | None = None,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    call_retry: RetryPolicy | None = None,
) -> CompiledStateGraph:
    """Compile the agent.

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
    builder.add_node("finalize", partial(finalize, deps=deps))
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_edge("plan", "check")
    builder.add_edge("ask_user", "plan")
    builder.add_edge("call_tool", "resolve_refs")
    builder.add_conditional_edges("verify", after_verify)
    builder.add_edge("finalize", END)
    return builder.compile(checkpointer=checkpointer, name="planwerk")

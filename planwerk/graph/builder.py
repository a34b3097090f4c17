"""The graph: retrieve → plan → execute → verify → finalize, with self-correction and ``ask_user`` interrupts.

```
START → prepare → retrieve → plan ─(ask_user)→ ask_user ─→ plan
                               │ ↺ (reply rejected, bounded)
                               ├─(no tools needed)→ finalize → END
                               └→ execute → verify ─(done / give up)→ finalize
                                              └─(self-correct / replan)→ plan
```
The topology never depends on which tools are loaded (the LangGraph server builds the graph on every access).
"""

from __future__ import annotations

from functools import partial

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.routing import after_plan, after_verify
from planwerk.graph.state import AgentState, InputState, OutputState
from planwerk.nodes.ask_user import ask_user
from planwerk.nodes.execute import execute
from planwerk.nodes.finalize import finalize
from planwerk.nodes.plan import plan
from planwerk.nodes.prepare import prepare
from planwerk.nodes.retrieve import retrieve
from planwerk.nodes.verify import verify


def build_graph(
    deps: Deps | None = None,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    """Compile the agent. ``deps`` binds the model, tools and retriever; ``checkpointer`` makes threads durable."""
    deps = deps or Deps()
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("prepare", prepare)
    builder.add_node("retrieve", partial(retrieve, deps=deps))
    builder.add_node("plan", partial(plan, deps=deps))
    builder.add_node("ask_user", ask_user)
    builder.add_node("execute", partial(execute, deps=deps))
    builder.add_node("verify", verify)
    builder.add_node("finalize", partial(finalize, deps=deps))
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_conditional_edges("plan", after_plan)
    builder.add_edge("ask_user", "plan")
    builder.add_edge("execute", "verify")
    builder.add_conditional_edges("verify", after_verify)
    builder.add_edge("finalize", END)
    return builder.compile(checkpointer=checkpointer, name="planwerk")

"""planwerk's graph for Aegra (``aegra.json``), the open-source Agent Protocol server, on PostgreSQL.

Aegra 0.6.0 loads a graph differently from the LangGraph server: its ``graphs`` entries are FILE paths
(``./file.py:name``, not module paths), it loads each graph ONCE per process (a callable export is awaited with no
arguments, so ``planwerk.serving.server:make_graph``, an async context manager taking a ``ServerRuntime``, cannot be
used), and it runs a copy of that one compiled graph, with its own PostgreSQL checkpointer and store injected, for
every run, state read and schema request.

:data:`graph` bridges that: the same topology as :func:`planwerk.graph.builder.build_graph` (state reads, history,
schemas and the drawing need no tools), and a run (``astream``, which ``astream_events`` goes through too) opens the
run's collaborators with :func:`planwerk.graph.runtime.open_deps` from the run's context (MCP sessions leased from the
per-process pool of :mod:`planwerk.serving.warm`), exactly as the LangGraph server's factory does, and streams the
graph built on them with Aegra's checkpointer and store. So the graph that runs is planwerk's own, unchanged; only
who opens the collaborators differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from planwerk.graph.builder import build_graph
from planwerk.graph.deps import Deps
from planwerk.graph.derived import DerivedStateGraph
from planwerk.graph.run_context import run_context
from planwerk.graph.runtime import open_deps
from planwerk.serving.warm import run_owner, tool_pool
from planwerk.tools.config import load_config


class RunScopedGraph(DerivedStateGraph):
    """planwerk's compiled graph whose runs open their model, MCP sessions and retriever for the run's context.

    Everything but ``astream`` is the plain compiled graph built on empty :class:`Deps` (same topology), with the
    state's derived keys in its snapshots (:class:`~planwerk.graph.derived.DerivedStateGraph`). Aegra's
    ``copy(update={"checkpointer": …, "store": …})`` keeps this class, so the injected savers reach the run.
    """

    async def astream(  # type: ignore[override]
        self,
        input: dict[str, Any] | Command | None,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Stream one run of planwerk's graph built on the collaborators the run's ``context`` names."""
        # Validated once (a bad value fails the run with one clear error; unknown keys are dropped) and handed on
        # as the Context the nodes read.
        run = await asyncio.to_thread(run_context, context)  # resolves paths: off the event loop
        servers = await asyncio.to_thread(load_config, run.mcp_config)
        # MCP sessions pooled per process across runs, as under the LangGraph server (planwerk.serving.warm).
        # Shared only among runs of one authenticated user.
        owner = aegra_owner(config)
        async with tool_pool().lease(servers, owner) as (tools, _), open_deps(run, tools=tools) as deps:
            runnable = build_graph(deps).copy(update={"checkpointer": self.checkpointer, "store": self.store})
            async for part in runnable.astream(input, config, context=run, **kwargs):
                yield part


def aegra_owner(config: RunnableConfig | None) -> str | None:
    """The authenticated user of the run being executed: what Aegra's auth verified, from the auth context it sets
    around every run (``aegra_api.core.auth_ctx``, which no request can set); ``None`` when it set none.

    Not the run config: Aegra 0.6.0 fills ``configurable.langgraph_auth_user`` only when the client did not, so a
    client could name another user there (:mod:`planwerk.serving.context_check` refuses such requests too). Outside
    Aegra (no ``aegra_api``), :func:`~planwerk.serving.warm.run_owner` reads the run config as before.
    """
    try:
        from aegra_api.core.auth_ctx import get_auth_ctx
    except ImportError:  # not under Aegra: e.g. the graph run in-process
        return run_owner(config)
    auth = get_auth_ctx()
    identity = getattr(auth.user, "identity", None) if auth is not None else None
    return str(identity) if identity else None


def build_aegra_graph() -> RunScopedGraph:
    """The graph Aegra serves: planwerk's topology, collaborators opened per run (see the module doc)."""
    compiled = build_graph(Deps())
    compiled.__class__ = RunScopedGraph  # same attributes, only ``astream`` differs; ``copy`` keeps the class
    return compiled  # type: ignore[return-value]


graph: RunScopedGraph = build_aegra_graph()
"""What ``aegra.json`` names (``./planwerk/serving/aegra.py:graph``)."""

"""Retrieval: the chunks of the profile's corpus that are relevant to the question."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from planwerk.events import RetrievalEvent, ServerErrorEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState
from planwerk.nodes.common import context_of, profile_of


async def retrieve(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Top-k hits above the relevance threshold into ``hits`` and a ``retrieval`` event; first a
    ``server_error`` event for every MCP server that is down."""
    context = context_of(runtime)
    # Servers that are down, before anything else: their tools are missing from the plan that follows.
    down: Mapping[str, str] = getattr(deps.tools, "unavailable", {})
    for server, reason in sorted(down.items()):
        runtime.stream_writer(ServerErrorEvent(event="server_error", server=server, error=reason))
    hits: list[Any] = []
    if deps.retriever is not None and profile_of(context).corpus is not None:
        hits = await asyncio.to_thread(deps.retriever.search, state["question"], context.retrieval_k)
        threshold = context.retrieval_threshold
        if threshold is not None:
            hits = [hit for hit in hits if hit["score"] >= threshold]
    runtime.stream_writer(RetrievalEvent(event="retrieval", hits=hits))
    return {"hits": hits}

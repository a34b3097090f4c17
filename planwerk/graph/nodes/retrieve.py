"""Retrieval: the chunks of the profile's corpus that are relevant to the question.

A question asked in another language than the corpus's (the profile's language) is searched in the corpus's
language: the model translates it first (one short call). The default embedder is English-only and the travel
corpus is German, so "What does the Razepato eat?" found only the corpus's introduction, the chunk that names the
animal most, and never the one about its food.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from planwerk.core.language import Language, detect_language
from planwerk.events import RetrievalEvent, ServerErrorEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.common import context_of, lost_model_calls, question_of, reply_text, usage_of
from planwerk.graph.run_context import model_spec_of, profile_of
from planwerk.graph.state import AgentState, add_usage
from planwerk.prompts.texts import texts_for
from planwerk.rag.embeddings import is_multilingual

log = logging.getLogger(__name__)

TRANSLATE_TAGS = ("planwerk:translate", TAG_NOSTREAM)
"""The translation is an internal step: a chat does not show its tokens (the ``retrieval`` event has the query)."""
MAX_TRANSLATION_RATIO = 3.0
"""A "translation" this many times longer than the question is an answer or a ramble, not a translation."""


async def retrieve(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Top-k hits above the relevance threshold into ``hits`` and a ``retrieval`` event; first a
    ``server_error`` event for every MCP server that is down."""
    context = context_of(runtime)
    profile = profile_of(context)
    # Servers that are down, before anything else: their tools are missing from the plan that follows.
    down: Mapping[str, str] = getattr(deps.tools, "unavailable", {})
    for server, reason in sorted(down.items()):
        runtime.stream_writer(ServerErrorEvent(event="server_error", server=server, error=reason))
    # Tools a live server listed but planwerk left out (a schema it must not use): missing from the plan too.
    refused: Mapping[str, str] = getattr(deps.tools, "refused", {})
    for server, reason in sorted(refused.items()):
        runtime.stream_writer(ServerErrorEvent(event="server_error", server=server, error=reason))
    hits: list[Any] = []
    query: str | None = None
    usage: dict[str, float] = {}
    question = question_of(state)
    if deps.retriever is not None and profile.corpus is not None:
        # A multilingual embedder matches across languages; a small model's translation can lose the question.
        translate = context.translate_queries and not is_multilingual(context.embedding_model)
        if translate and detect_language(question, default=profile.language) != profile.language:
            query, usage = await _translated(question, context, deps)
        hits = await asyncio.to_thread(deps.retriever.search, query or question, context.retrieval_k)
        threshold = context.retrieval_threshold
        if threshold is not None:
            hits = [hit for hit in hits if hit["score"] >= threshold]
    event = RetrievalEvent(event="retrieval", hits=hits)
    if query:
        event["query"] = query
    runtime.stream_writer(event)
    return {"hits": hits, "retrieval_query": query, "usage": usage}


async def _translated(question: str, context: Context, deps: Deps) -> tuple[str | None, dict[str, float]]:
    """The question in the profile's language, and the call's usage; ``None`` when the reply is no usable
    translation or the model failed (retrieval then searches the question as asked)."""
    texts = texts_for(profile_of(context))
    messages: list[BaseMessage] = [SystemMessage(texts.translate_question)]
    for asked, translated in texts.translate_examples:  # a small model answers the question unless shown otherwise
        messages += [HumanMessage(asked), AIMessage(translated)]
    messages.append(HumanMessage(question))
    try:
        model = await deps.model_for(model_spec_of(context))
        lost = await lost_model_calls()
        reply = await model.ainvoke(messages, config={"tags": list(TRANSLATE_TAGS)})
    except Exception as error:  # the planner's call will meet the same model; retrieval goes on untranslated
        log.warning("question not translated for retrieval (%s: %s)", type(error).__name__, error)
        return None, {}
    usage = add_usage({}, usage_of(reply, messages) | {"llm_calls": 1 + lost})
    return clean_translation(reply_text(reply), question, profile_of(context).language), usage


def clean_translation(reply: str, question: str, language: Language) -> str | None:
    """The first line of ``reply`` without quotes or a label, if it can be a translation of ``question`` into
    ``language``: not empty, not the question itself, not three times its length, and in that language (the 0.5B
    model answered "What does the Razepato eat?" with "The Razepato eats fish.")."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[0]
    if ":" in line[:20]:  # "Übersetzung: …" / "Translation: …"
        label, _, rest = line.partition(":")
        line = rest.strip() if len(label.split()) == 1 and rest.strip() else line
    line = line.strip("\"'„“”«» ")
    if not line or len(line) > MAX_TRANSLATION_RATIO * max(len(question), 20) or line == question.strip():
        return None
    return line if detect_language(line, default=language) == language else None

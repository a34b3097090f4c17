"""The answer streams into a chat as it is decoded; the plan does not; a rejected draft does not stay (issue 32).

A streaming fake chat model (langchain-core's ``GenericFakeChatModel``, which yields a reply word by word) through
the compiled graph with LangGraph's ``messages`` stream mode, and ``messages`` beside ``values`` the way
agent-chat-ui reads a run (its chunks are merged by message id; each ``values`` event replaces the messages).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.graph.builder import build_graph
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.chat import KIND_KEY
from tests.graph.tools import GEO, WEATHER, plan_json, travel_tools

QUESTION = "Wie ist heute das Wetter in Barcelona?"
ANSWER = "Heute werden in Barcelona höchstens 17.2 °C erwartet."
INVENTED = "Heute 22 °C und sonnig in Barcelona."  # no result says 22 °C: rejected
CONTEXT = Context(today="2026-11-22")


def streaming_model(*replies: str) -> GenericFakeChatModel:
    """The plan first, then the answers; each reply streams word by word."""
    return GenericFakeChatModel(messages=iter([AIMessage(plan_json([GEO], [WEATHER])), *map(AIMessage, replies)]))


async def test_the_answer_streams_token_by_token_and_the_plan_does_not() -> None:
    graph = build_graph(Deps(chat_model=streaming_model(ANSWER), tools=travel_tools()), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "stream"}}
    parts: dict[str, list[str]] = {}
    nodes: dict[str, str] = {}
    async for message, metadata in graph.astream(
        {"messages": [("user", QUESTION)]}, config, context=CONTEXT, stream_mode="messages"
    ):
        parts.setdefault(message.id, []).append(str(message.content))
        nodes[message.id] = metadata["langgraph_node"]
    streamed = {i: p for i, p in parts.items() if nodes[i] == "answer"}
    [(answer_id, tokens)] = streamed.items()
    assert len(tokens) > 5 and "".join(tokens) == ANSWER  # word by word, as the model decodes it
    assert not any('"steps"' in part for p in parts.values() for part in p)  # the planner's JSON never streams
    state = await graph.aget_state(config)
    final = state.values["messages"][-1]
    assert (final.id, final.content) == (answer_id, ANSWER)  # the checked answer took the streamed id
    assert KIND_KEY not in final.response_metadata  # no longer a draft


def chat_view(parts: Iterable[tuple[str, Any]]) -> list[BaseMessage]:
    """What agent-chat-ui shows at the end: chunks merged by id into the messages, each ``values`` event replacing
    them (the JS SDK's stream manager, reduced to what matters here)."""
    shown: list[BaseMessage] = []
    for mode, data in parts:
        if mode == "values":
            shown = list(data["messages"])
            continue
        chunk, _ = data
        index = next((i for i, m in enumerate(shown) if m.id == chunk.id), None)
        if index is None:
            shown.append(chunk)
        else:
            shown[index] = shown[index] + chunk if chunk.type == "AIMessageChunk" else chunk
    return shown


async def test_a_rejected_draft_that_streamed_is_removed_and_the_next_one_streams_under_its_own_id() -> None:
    graph = build_graph(
        Deps(chat_model=streaming_model(INVENTED, ANSWER), tools=travel_tools()), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "rejected"}}
    parts = [
        part
        async for part in graph.astream(
            {"messages": [("user", QUESTION)]}, config, context=CONTEXT, stream_mode=["messages", "values"]
        )
    ]
    drafts: dict[str, str] = {}
    for mode, data in parts:
        if mode == "messages" and data[1]["langgraph_node"] in ("answer", "regenerate"):
            drafts[data[0].id] = drafts.get(data[0].id, "") + str(data[0].content)
    assert list(drafts.values()) == [INVENTED, ANSWER]  # each draft streamed under its own id
    rejected_id, accepted_id = drafts
    shown = [m for m in chat_view(parts) if m.type in ("ai", "AIMessageChunk") and not m.tool_calls]
    assert [m.content for m in shown][-1] == ANSWER and shown[-1].id == accepted_id
    assert all(m.id != rejected_id and m.content != INVENTED for m in shown)  # the rejected draft is gone
    stored = (await graph.aget_state(config)).values["messages"]
    assert [m.content for m in stored].count(ANSWER) == 1 and rejected_id not in {m.id for m in stored}


class PiecewiseModel(GenericFakeChatModel):
    """Streams each reply a few characters at a time (a placeholder arrives in pieces, as a tokenizer splits it)
    and takes grammars (it stands for a local model answering by reference; the grammar itself is not applied)."""

    def with_plan_grammar(self, grammar: str) -> PiecewiseModel:
        return self

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator[Any]:
        text = str(next(self.messages).content)
        for start in range(0, len(text), 3):
            yield ChatGenerationChunk(message=AIMessageChunk(content=text[start : start + 3]))


BY_REFERENCE = "In {geo.name} werden heute bis zu {wx.days.0.temperature_max} erwartet."
RENDERED = "In Barcelona werden heute bis zu 17,2 erwartet."


async def test_an_answer_by_reference_streams_rendered_and_never_shows_a_placeholder() -> None:
    model = PiecewiseModel(messages=iter([AIMessage(plan_json([GEO], [WEATHER])), AIMessage(BY_REFERENCE)]))
    graph = build_graph(Deps(chat_model=model, tools=travel_tools()), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "by-reference"}}
    context = Context(today="2026-11-22", answer_by_reference=True)
    parts = [
        part
        async for part in graph.astream(
            {"messages": [("user", QUESTION)]}, config, context=context, stream_mode=["messages", "values"]
        )
    ]
    pieces: dict[str, list[str]] = {}
    for mode, data in parts:
        if mode == "messages" and data[1]["langgraph_node"] == "answer":
            pieces.setdefault(data[0].id, []).append(str(data[0].content))
    [(answer_id, streamed)] = pieces.items()
    assert "".join(streamed) == RENDERED and len([p for p in streamed if p]) > 5  # in pieces, as it is decoded
    assert not any("{" in piece or "}" in piece for piece in streamed)  # the raw placeholders never stream
    shown = [m for m in chat_view(parts) if m.type in ("ai", "AIMessageChunk") and not m.tool_calls]
    assert (shown[-1].id, shown[-1].content) == (answer_id, RENDERED)
    state = (await graph.aget_state(config)).values
    assert state["draft"]["written"] == [BY_REFERENCE] and state["draft"]["references"]["constrained"] is True

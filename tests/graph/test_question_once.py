"""The question is kept once, as its message: the nodes derive it from the thread's messages (the human message
before ``prepare``'s progress message), and so do the views of a thread's state. An answer to a question asked back
is a human message after it, and never taken for the question."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.graph.nodes.chat import KIND_KEY, question_text
from planwerk.tools.base import FunctionToolSource
from tests.graph.test_derived_results import config, stored_values
from tests.graph.tools import plan_json
from tests.helpers import make_agent

ASK = json.dumps({"ask_user": "Welcher Name?"})
ECHO = {"id": "q", "name": "echo", "arguments": {"text": {"$ref": "user.raw"}, "name": {"$ref": "user.answer"}}}


async def echo(text: str, name: str) -> dict:
    """Return the text and the name."""
    return {"text": text, "name": name}


async def test_an_answer_to_a_question_asked_back_is_not_the_question() -> None:
    saver = InMemorySaver()
    replies = [ASK, plan_json([ECHO]), "Gesagt."]
    async with make_agent(replies, tools=FunctionToolSource([echo]), checkpointer=saver) as agent:
        asked = await agent.ask("Sag meinen Namen.", thread_id="t")
        assert asked.interrupts and (await agent.state("t"))["question"] == "Sag meinen Namen."
        reply = await agent.resume("Anna", thread_id="t")
        state = await agent.state("t")
    assert reply.answer == "Gesagt."
    assert [c["args"] for c in state["calls"]] == [{"text": "Sag meinen Namen.", "name": "Anna"}]
    assert [m.content for m in state["messages"] if isinstance(m, HumanMessage)] == ["Sag meinen Namen.", "Anna"]
    assert state["question"] == "Sag meinen Namen." and state["user"]["raw"] == "Sag meinen Namen."
    assert all("question" not in values for values in await stored_values(saver, "t"))


async def test_a_thread_that_stored_the_question_reads_it_from_its_messages() -> None:
    saver = InMemorySaver()
    async with make_agent([ASK, plan_json([ECHO]), "Gesagt."], tools=FunctionToolSource([echo]),
                          checkpointer=saver) as agent:  # fmt: skip
        await agent.ask("Sag meinen Namen.", thread_id="old")
        latest = await saver.aget_tuple(config("old"))
        assert latest is not None and latest.parent_config is not None
        checkpoint = dict(latest.checkpoint)  # as a version that stored the question wrote it (a stale value)
        checkpoint["channel_values"] = {**checkpoint["channel_values"], "question": "stale"}
        version = saver.get_next_version(None, None)
        checkpoint["channel_versions"] = {**checkpoint["channel_versions"], "question": version}
        await saver.aput(latest.parent_config, checkpoint, latest.metadata, {"question": version})
        reply = await agent.resume("Anna", thread_id="old")
        state = await agent.state("old")
    assert reply.answer == "Gesagt." and state["question"] == "Sag meinen Namen."
    assert [c["args"]["text"] for c in state["calls"]] == ["Sag meinen Namen."]


def test_the_question_is_the_human_message_before_the_progress_message() -> None:
    progress = AIMessage("…", response_metadata={KIND_KEY: "progress"})
    asked_back = AIMessage("Welcher Name?", response_metadata={KIND_KEY: "question"})
    first = [HumanMessage(" Sag meinen Namen. "), progress, asked_back, HumanMessage("Anna")]
    assert question_text(first) == "Sag meinen Namen."  # stripped, as prepare took it
    assert question_text([*first, AIMessage("Anna."), HumanMessage("Und jetzt?"), progress]) == "Und jetzt?"
    assert (
        question_text([HumanMessage("Vor den Fortschrittsnachrichten?"), AIMessage("Ja.")])
        == "Vor den Fortschrittsnachrichten?"
    )
    assert question_text([]) == ""

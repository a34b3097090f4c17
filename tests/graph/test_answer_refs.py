"""Answers by reference through the graph: a replayed answer with placeholders is rendered, checked and kept.

The replay model cannot be constrained, so it gets the usual prompt; its placeholders are written out all the same
(``Context.answer_by_reference``), which is what makes these tests possible. In-process tools
(tests/graph/tools.py): ``wx.days.0.temperature_max`` is 17.2, ``wx.days.0.date`` 2026-11-22.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import Field

from planwerk.agent import Reply
from planwerk.core.answers.grammar import answer_grammar
from planwerk.core.answers.slots import collect_slots
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from tests.graph.tools import GEO, WEATHER, plan_json, replay_agent
from tests.helpers import make_agent

QUESTION = "Wie warm wird es heute in Barcelona?"
PLAN = plan_json([GEO], [WEATHER])


def final(reply: Reply) -> dict[str, Any]:
    return next(e for e in reply.events if e["event"] == "final_answer")["metadata"]


async def test_a_replayed_answer_with_placeholders_is_rendered_and_kept() -> None:
    answer = "Am {wx.days.0.date} werden es in {geo.name} bis zu {wx.days.0.temperature_max}."
    model = ReplayChatModel.of([PLAN, answer])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "Am 22. November 2026 werden es in Barcelona bis zu 17,2."
    metadata = final(reply)
    assert metadata["answer_source"] == "model" and metadata["grounded"] is True and metadata["llm_calls"] == 2
    references = metadata["answer_references"]
    assert references["constrained"] is False  # a replay script decodes no grammar
    assert references["used"] == [["wx.days.0.date", "geo.name", "wx.days.0.temperature_max"]]


async def test_an_english_answer_is_rendered_in_english() -> None:
    model = ReplayChatModel.of([PLAN, "On {wx.days.0.date|weekday} it reaches {wx.days.0.temperature_max}."])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask("How warm will it be in Barcelona today?")
    assert reply.answer == "On Sunday, 22 November 2026 it reaches 17.2."


async def test_a_rejected_answer_is_shown_to_the_model_as_it_wrote_it() -> None:
    # The first answer invents "22 °C" (the check rejects it); the regeneration prompt holds it with its placeholder.
    model = ReplayChatModel.of(
        [PLAN, "In {geo.name} werden es 22 °C.", "In {geo.name} bis zu {wx.days.0.temperature_max}."]
    )
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "In Barcelona bis zu 17,2."
    assert final(reply)["answer_source"] == "regenerated"
    rejected = [m for m in model.prompts[-1] if isinstance(m, AIMessage)]
    assert [str(m.content) for m in rejected] == ["In {geo.name} werden es 22 °C."]


async def test_switched_off_the_answer_is_left_as_written() -> None:
    model = ReplayChatModel.of([PLAN, "In Barcelona bis zu 17,2 °C.", "unused"])
    async with replay_agent(model, answer_by_reference=False) as agent:
        reply = await agent.ask(QUESTION)
    assert final(reply)["answer_references"] is None
    model = ReplayChatModel.of([PLAN, "{geo.name}: bis zu 17,2 °C.", "unused"])
    async with replay_agent(model, answer_by_reference=False) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer.startswith("{geo.name}")


class GrammarRecorder(FakeListChatModel):
    """A fake chat model that can be bound to a grammar: records the grammar and the prompt it answered."""

    grammars: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)

    def with_plan_grammar(self, grammar: str) -> GrammarRecorder:
        self.grammars.append(grammar)
        return self

    def _call(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        self.prompts.append(str(messages[-1].content))
        return super()._call(messages, stop, run_manager, **kwargs)


async def test_a_plain_answer_of_a_model_that_takes_grammars_holds_a_word() -> None:
    # Measured on the travel set (0.5B model, plain answers): 14 of 16 regenerated answers were a bare number.
    from planwerk.core.answers.grammar import prose_grammar

    model = GrammarRecorder(responses=[PLAN, "In Barcelona bis zu 17,2 °C."])
    async with replay_agent(model, answer_by_reference=False) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "In Barcelona bis zu 17,2 °C." and model.grammars == [prose_grammar()]
    # Where the answer is the last result (a calculation), a number alone answers: no grammar.
    calc = GrammarRecorder(responses=["(20 + 22)", "42"])
    async with make_agent(calc, profile="math", retriever=False) as agent:
        reply = await agent.ask("Was ist 20 + 22?")
    assert reply.answer == "42" and not any(g == prose_grammar() for g in calc.grammars)


async def test_a_model_that_takes_grammars_answers_under_the_answer_grammar() -> None:
    model = GrammarRecorder(responses=[PLAN, "In {geo.name} bis zu {wx.days.0.temperature_max}."])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "In Barcelona bis zu 17,2."
    assert final(reply)["answer_references"]["constrained"] is True
    # The planner is bound to no grammar here (JSON plans take a schema), so the one grammar is the answer's …
    assert len(model.grammars) == 1
    grammar = model.grammars[0]
    assert '"wx.days.0.temperature_max"' in grammar and '"geo.lat"' in grammar
    # … and the prompt shows the placeholders with their rendered values.
    assert "{wx.days.0.temperature_max} = 17,2" in model.prompts[-1]


async def test_a_constrained_draft_is_checked_without_the_rules_its_grammar_guarantees() -> None:
    """Answering by reference. The fake model says it decodes under the grammar, so its "22 °C"
    (which the real grammar would refuse: no source has the digits) is taken as constructed and not read again: the
    number rule is skipped. A place no source names is letters, which the grammar does not constrain: still sent
    back. The replay model (no grammar) is checked in full: the same "22 °C" is rejected."""
    answer = "In {geo.name} bis zu {wx.days.0.temperature_max}, abends 22 °C."
    model = GrammarRecorder(responses=[PLAN, answer])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "In Barcelona bis zu 17,2, abends 22 °C."
    assert final(reply)["answer_references"]["constrained"] is True and final(reply)["answer_source"] == "model"
    model = GrammarRecorder(responses=[PLAN, "In Madrid bis zu {wx.days.0.temperature_max}.", answer])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert final(reply)["answer_source"] == "regenerated"
    replay = ReplayChatModel.of([PLAN, answer, "In {geo.name} bis zu {wx.days.0.temperature_max}."])
    async with replay_agent(replay, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert final(reply)["answer_source"] == "regenerated" and reply.answer == "In Barcelona bis zu 17,2."


async def test_a_constrained_answer_that_states_no_value_of_the_results_is_written_again() -> None:
    """The grammar guarantees that a value is one of the results, not that the answer names one: a constrained
    answer that stops before its value goes back to the model. The same words from a replay script (no grammar)
    are checked by the plain rules, which do not ask for a value here."""
    model = GrammarRecorder(responses=[PLAN, "Es wird warm.", "Bis zu {wx.days.0.temperature_max}."])
    async with replay_agent(model, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert final(reply)["answer_source"] == "regenerated" and reply.answer == "Bis zu 17,2."
    replay = ReplayChatModel.of([PLAN, "Es wird warm.", "unused"])
    async with replay_agent(replay, answer_by_reference=True) as agent:
        reply = await agent.ask(QUESTION)
    assert final(reply)["answer_source"] == "model" and reply.answer == "Es wird warm."


def test_the_slots_of_the_test_tools_make_a_grammar() -> None:
    calls = [{"id": "wx", "tool": "get_weather", "status": "ok", "result": {"days": [{"temperature_max": 17.2}]}}]
    assert '"wx.days.0.temperature_max"' in answer_grammar(collect_slots(calls))


def test_the_context_field_is_validated() -> None:
    assert Context().answer_by_reference is False  # the default: plain answers, checked in full
    with pytest.raises(ValueError, match="answer_by_reference must be true or false"):
        Context(answer_by_reference="yes")  # type: ignore[arg-type]


def test_context_numbers_are_admitted_only_when_no_call_delivered() -> None:
    from planwerk.graph.deps import Deps
    from planwerk.graph.nodes.answer_refs import reference_answer
    from planwerk.profiles import get_profile

    hit = {"text": "Die Tiere werden 72 bis 91 cm lang.", "score": 0.9, "source": "Tiere.txt#3"}
    ok = {"id": "wx", "tool": "get_weather", "status": "ok", "args": {}, "result": {"temp_max_c": 17.2}}
    failed = {"id": "wx", "tool": "get_weather", "status": "error", "args": {}, "error": "down"}
    grammars = {}
    for label, call in (("delivered", ok), ("failed", failed)):
        model = GrammarRecorder(responses=["unused"])
        state = {"calls": [call], "hits": [hit], "messages": [HumanMessage("Wie lang wird es?")]}
        refs = reference_answer(state, Context(answer_by_reference=True), get_profile("travel"), "de", Deps(), model)  # type: ignore[arg-type]
        assert refs is not None and refs.constrained
        grammars[label] = refs.grammar or ""
    assert '"72"' not in grammars["delivered"] and '"72"' in grammars["failed"]


def test_only_texts_no_later_call_took_are_quotable() -> None:
    from planwerk.graph.deps import Deps
    from planwerk.graph.nodes.answer_refs import answer_slots

    text = "Bill for December 2026.\nAmount due: 98.70\nPay to the landlord's account."
    read = {"id": "f", "tool": "read_file", "status": "ok", "args": {}, "result": text}
    took = {"id": "x", "tool": "extract", "status": "ok", "args": {}, "result": {"amount": 98.7}}
    extract = {"id": "x", "name": "extract", "arguments": {"text": {"$ref": "f"}, "schema": {"amount": "number"}}}
    read_step = {"description": "", "tools": [{"id": "f", "name": "read_file", "arguments": {}}]}
    alone = {"calls": [read], "plan": {"steps": [read_step], "final": None}}
    then_extract = {
        "calls": [read, took],
        "plan": {"steps": [read_step, {"description": "", "tools": [extract]}], "final": None},
    }
    assert answer_slots(alone, Context(), Deps())["f"].kind == "quote"  # type: ignore[arg-type]
    assert answer_slots(then_extract, Context(), Deps()) == {}  # type: ignore[arg-type]
    assert answer_slots(alone, Context(answer_quotes=False), Deps()) == {}  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="answer_quotes must be true or false"):
        Context(answer_quotes="yes")  # type: ignore[arg-type]

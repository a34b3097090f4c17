"""The agent graph end to end with a replay model: plans, events, self-correction, interrupts, sessions.

Parametrized over checkpointer backends (memory, SQLite, PostgreSQL: tests/graph/conftest.py), as langgraph's own
tests are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel, ReplayExhaustedError
from planwerk.prompts.travel import REFUSAL_OUT_OF_SCOPE
from tests.conftest import FIXTURES
from tests.graph.tools import GEO, WEATHER, plan_json, travel_tools, weather_call

TODAY = Context(today="2026-11-22")
QUESTION = "Wie ist heute das Wetter in Barcelona?"


GOOD_PLAN = plan_json([GEO], [WEATHER])


def agent(model: ReplayChatModel, checkpointer: BaseCheckpointSaver, log: list | None = None, **context: Any) -> Agent:
    return Agent(
        model=model,
        tools=travel_tools(log),
        retriever=False,
        checkpointer=checkpointer,
        context=Context(today="2026-11-22", **context),
    )


async def test_notebook_barcelona_plan_runs_both_tools_in_two_model_calls(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.from_file(FIXTURES / "replay" / "barcelona_weather.json")
    log: list[tuple[str, dict]] = []
    async with agent(model, checkpointer, log) as planwerk:
        reply = await planwerk.ask(QUESTION, thread_id="t1")
        state = await planwerk.state("t1")
    assert model.calls == 2
    assert [name for name, _ in log] == ["geocode", "get_weather"]
    assert log[1][1]["lat"] == 41.3825802 and log[1][1]["lon"] == 2.177073  # coordinates passed through $ref
    assert reply.answer.startswith("Heute (22.11.2026)")
    assert reply.metadata["llm_calls"] == 2 and reply.metadata["tool_calls"] == 2
    assert state["messages"][-1].content == reply.answer
    assert state["results"]["geo_barcelona"]["lat"] == 41.3825802
    assert [c["status"] for c in state["calls"]] == ["ok", "ok"]
    assert state["calls"][1]["args"]["lat"] == 41.3825802 and state["calls"][1]["duration_s"] >= 0


async def test_events_are_json_and_complete(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([GOOD_PLAN, "Sonnig, 17 °C."])
    async with agent(model, checkpointer) as planwerk:
        events = [e async for e in planwerk.events(QUESTION, thread_id="t")]
    kinds = [e["event"] for e in events]
    assert kinds == [
        "start",
        "retrieval",
        "plan",
        "step",
        "tool_call",
        "tool_result",
        "step",
        "tool_call",
        "tool_result",
        "final_answer",
    ]
    for event in events:
        assert json.loads(json.dumps(event)) == event
    call = next(e for e in events if e["event"] == "tool_call" and e["id"] == "wx")
    assert call["args"] == {"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-11-22", "end_date": "2026-11-22"}
    metadata = events[-1]["metadata"]
    assert {"llm_calls", "prompt_tokens", "completion_tokens", "tool_calls", "duration_s"} <= metadata.keys()
    assert metadata["prompt_tokens"] > 100 and metadata["completion_tokens"] > 5


async def test_out_of_scope_question_gets_the_notebook_refusal_in_one_call(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([json.dumps({"steps": [], "final": REFUSAL_OUT_OF_SCOPE}, ensure_ascii=False)])
    log: list = []
    async with agent(model, checkpointer, log) as planwerk:
        reply = await planwerk.ask("Wie funktioniert ein Dieselmotor?")
    assert reply.answer == REFUSAL_OUT_OF_SCOPE
    assert model.calls == 1 and log == []


async def test_rejected_replies_go_back_to_the_planner(checkpointer: BaseCheckpointSaver) -> None:
    unknown_tool = plan_json([{"id": "geo", "name": "geokodieren", "arguments": {"destination": "Barcelona"}}])
    model = ReplayChatModel.of(["Ich plane das gern!", unknown_tool, GOOD_PLAN, "17 °C."])
    log: list = []
    async with agent(model, checkpointer, log) as planwerk:
        reply = await planwerk.ask(QUESTION)
    replans = [e["reason"] for e in reply.events if e["event"] == "replan"]
    assert len(replans) == 2
    assert "no JSON object" in replans[0] and "unknown tool 'geokodieren'" in replans[1]
    # The third planner prompt carries the previous rejected reply and why it was rejected.
    third_prompt = model.prompts[2]
    assert third_prompt[-2].content == unknown_tool
    assert "unknown tool 'geokodieren'" in third_prompt[-1].content
    assert [name for name, _ in log] == ["geocode", "get_weather"]  # no tool ran on a rejected plan
    assert reply.answer == "17 °C." and reply.metadata["llm_calls"] == 4


async def test_planner_attempts_are_bounded_with_an_honest_answer(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of(["nope", "{'steps': 5}", "still no plan"])
    async with agent(model, checkpointer, max_plan_attempts=3) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert model.calls == 3
    assert reply.answer.startswith("Ich konnte für diese Frage keinen ausführbaren Plan erstellen")


async def test_a_failed_call_is_corrected_by_the_planner(checkpointer: BaseCheckpointSaver) -> None:
    wrong = plan_json([{**GEO, "arguments": {"destination": "Barcelonna"}}], [WEATHER])
    model = ReplayChatModel.of([wrong, GOOD_PLAN, "17 °C in Barcelona."])
    log: list = []
    async with agent(model, checkpointer, log) as planwerk:
        reply = await planwerk.ask(QUESTION)
    replan = next(e for e in reply.events if e["event"] == "replan")
    assert "'Barcelonna' not found" in replan["reason"]
    assert "'Barcelonna' not found" in model.prompts[1][-1].content
    assert [name for name, _ in log] == ["geocode", "geocode", "get_weather"]
    assert reply.answer == "17 °C in Barcelona."


async def test_ask_user_interrupts_and_resumes_with_the_answer(checkpointer: BaseCheckpointSaver) -> None:
    ask = json.dumps({"ask_user": "Für welche Stadt möchtest du das Wetter wissen?"})
    by_answer = plan_json([{**GEO, "arguments": {"destination": {"$ref": "user.answer"}}}], [WEATHER])
    model = ReplayChatModel.of([ask, by_answer, "In Barcelona 17 °C."])
    log: list = []
    async with agent(model, checkpointer, log) as planwerk:
        first = await planwerk.ask("Wie ist das Wetter heute?", thread_id="t-ask")
        assert first.answer is None
        assert first.question == "Für welche Stadt möchtest du das Wetter wissen?"
        assert [e["event"] for e in first.events][-2:] == ["ask_user", "interrupt"]
        assert log == []
        second = await planwerk.resume("Barcelona", thread_id="t-ask")
        state = await planwerk.state("t-ask")
    assert second.answer == "In Barcelona 17 °C."
    assert log[0] == ("geocode", {"destination": "Barcelona"})
    assert state["user"]["answer"] == "Barcelona"
    # The question is stored when asked (before the answer), then the plan's tool calls, their results, the answer.
    assert [m.type for m in state["messages"]] == ["human", "ai", "ai", "human", "ai", "tool", "tool", "ai"]
    assert state["messages"][2].content == first.question and state["messages"][3].content == "Barcelona"
    assert [c["name"] for c in state["messages"][4].tool_calls] == ["geocode", "get_weather"]


async def test_second_question_sees_the_first_and_history_is_trimmed(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of(
        [
            GOOD_PLAN,
            "Heute 17 °C.",
            json.dumps({"steps": [], "final": "Ja, 17 °C."}),
            json.dumps({"steps": [], "final": "Gern."}),
        ]
    )
    async with agent(model, checkpointer, history_max_tokens=30) as planwerk:
        await planwerk.ask(QUESTION, thread_id="conv")
        await planwerk.ask("Und ist das warm genug für den Strand?", thread_id="conv")
        await planwerk.ask("Danke!", thread_id="conv")
        state = await planwerk.state("conv")
    second_prompt = [m.content for m in model.prompts[2]]
    assert QUESTION in second_prompt and "Heute 17 °C." in second_prompt
    # The chat's progress, plan and tool messages stay out of the planner's history: questions and answers only.
    assert [m.type for m in model.prompts[2][-3:-1]] == ["human", "ai"] and not any(
        m.type == "tool" or getattr(m, "tool_calls", None) for m in model.prompts[2]
    )
    third_prompt = [m.content for m in model.prompts[3]]
    assert QUESTION not in third_prompt  # trimmed to the window before reaching the model …
    assert "Und ist das warm genug für den Strand?" in third_prompt
    assert len(state["messages"]) == 12  # … never in the checkpoint (3 turns: 6 + 3 + 3 messages)


async def test_prompt_has_persona_date_catalog_and_a_matching_example(checkpointer: BaseCheckpointSaver) -> None:
    rome = plan_json([{**GEO, "arguments": {"destination": "Rom"}}], [weather_call("2026-11-23")])
    model = ReplayChatModel.of([rome, "ok"])
    async with agent(model, checkpointer) as planwerk:
        await planwerk.ask("Wie wird das Wetter morgen in Rom?")
    system, *_, human = model.prompts[0]
    assert system.content.startswith("Du bist ein persönlicher Reiseplaner.")
    assert "- geocode(destination: string)" in system.content and "Ergebnis-Felder: lat, lon, name" in system.content
    assert "Wie wird das Wetter in Rom am 23.01.2026?" in system.content  # the notebook's Rome example
    assert "Daten in der Frage: „morgen“ = 2026-11-23." in human.content  # resolved in code, not by the model


async def test_replay_model_asked_for_too_much_fails_clearly(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([GOOD_PLAN])
    async with agent(model, checkpointer) as planwerk:
        with pytest.raises(ReplayExhaustedError, match="asked for reply 2, but holds only 1"):
            await planwerk.ask(QUESTION)


async def test_empty_and_enormous_questions_and_unknown_threads(checkpointer: BaseCheckpointSaver) -> None:
    async with agent(ReplayChatModel.of([]), checkpointer) as planwerk:
        with pytest.raises(ValueError, match="the question is empty"):
            await planwerk.ask("   ")
        with pytest.raises(ValueError, match="at most 8000 are accepted"):
            await planwerk.ask("x" * 9000)
        with pytest.raises(KeyError, match="unknown thread id 'nope'"):
            await planwerk.state("nope")


async def test_sync_api_ask_and_iter_events(tmp_path: Path) -> None:
    from planwerk.agent import ask, iter_events

    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([GOOD_PLAN, "17 °C.", GOOD_PLAN, "Wieder 17 °C."]), encoding="utf-8")
    options = {
        "model": ReplayChatModel.from_file(replay),
        "tools": travel_tools(),
        "retriever": False,
        "context": TODAY,
    }
    import asyncio

    reply = await asyncio.to_thread(ask, QUESTION, **options)
    assert reply.answer == "17 °C." and reply.metadata["tool_calls"] == 2
    events = await asyncio.to_thread(lambda: list(iter_events(QUESTION, **options)))
    assert events[0]["event"] == "start" and events[-1]["answer"] == "Wieder 17 °C."


async def test_thread_locks_do_not_accumulate() -> None:
    async with agent(ReplayChatModel.of([json.dumps({"steps": [], "final": "ok"})] * 3), InMemorySaver()) as planwerk:
        for thread in ("a", "b", "c"):
            await planwerk.ask("Hallo?", thread_id=thread)
        assert planwerk._thread_locks == {}


async def test_clean_plans_can_be_learned_as_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planwerk.prompts.examples import load_user_examples, select_examples

    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path))
    failing = plan_json([{**GEO, "arguments": {"destination": "Atlantis"}}])
    model = ReplayChatModel.of([GOOD_PLAN, "17 °C.", failing, "Atlantis gibt es nicht."])
    async with agent(model, InMemorySaver(), learn_examples=True, max_plan_attempts=1) as planwerk:
        await planwerk.ask("Wie ist heute das Wetter in Barcelona?")
        await planwerk.ask("Wie ist heute das Wetter in Atlantis?")
    saved = load_user_examples()
    assert [e.question for e in saved] == ["Wie ist heute das Wetter in Barcelona?"]  # the failed run is not kept
    assert json.loads(GOOD_PLAN) == saved[0].plan
    assert (
        select_examples("Wie ist heute das Wetter in Barcelona?", ["geocode", "get_weather"], k=1, ranking="words")[
            0
        ].question
        == "Wie ist heute das Wetter in Barcelona?"
    )

"""A model of its own writes the answers (``Context.answer_model``, ``Agent(answer_model=...)``): the planner's model
plans, the answer model writes the first draft and its regeneration, and a run that names neither keeps one model.

Scripted replies (``ReplayChatModel``) and in-process tools; the regeneration runs over every checkpointer backend
(memory, SQLite, PostgreSQL: tests/graph/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from tests.graph.tools import GEO, WEATHER, travel_tools

QUESTION = "Wie ist heute das Wetter in Barcelona?"
TODAY = Context(today="2026-11-22", tool_retry_attempts=1)
PLAN = json.dumps({"steps": [{"description": "", "tools": [GEO]}, {"description": "", "tools": [WEATHER]}]})
ANSWER = "Heute (22.11.2026) bis zu 17 °C in Barcelona."


async def test_the_answer_model_writes_the_answer_and_the_model_only_plans() -> None:
    planner = ReplayChatModel.of([PLAN])
    writer = ReplayChatModel.of([ANSWER])
    async with Agent(model=planner, answer_model=writer, tools=travel_tools(), retriever=False,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION)
    assert reply.answer == ANSWER and reply.metadata["answer_source"] == "model"
    assert (planner.calls, writer.calls) == (1, 1)
    assert reply.metadata["llm_calls"] == 2  # both models' calls are counted


async def test_a_rejected_answer_is_written_again_by_the_answer_model(checkpointer: BaseCheckpointSaver) -> None:
    planner = ReplayChatModel.of([PLAN])
    writer = ReplayChatModel.of(["Heute werden es 22 °C in Barcelona.", ANSWER])
    async with Agent(model=planner, answer_model=writer, tools=travel_tools(), retriever=False,
                     checkpointer=checkpointer, context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION, thread_id="regen")
    assert reply.answer == ANSWER and reply.metadata["answer_source"] == "regenerated"
    assert (planner.calls, writer.calls) == (1, 2)


async def test_a_given_model_writes_the_answers_of_its_plans_unless_the_run_names_an_answer_model(
    tmp_path: Path,
) -> None:
    # The profile names an answer model of its own; a model object given to the agent still answers its plans
    # (a scripted conversation is one model's), while an answer model the run names is loaded and answers.
    profile = tmp_path / "split.toml"
    profile.write_text('persona = "Du hilfst."\nanswer_model = "qwen2.5-coder-1.5b"\n', encoding="utf-8")
    model = ReplayChatModel.of([PLAN, ANSWER])
    async with Agent(model=model, profile=str(profile), tools=travel_tools(), retriever=False,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION)
    assert reply.answer == ANSWER and model.calls == 2
    replies = tmp_path / "writer.json"
    replies.write_text(json.dumps([ANSWER]), encoding="utf-8")
    planner = ReplayChatModel.of([PLAN])
    async with Agent(model=planner, answer_model=f"replay:{replies}", profile=str(profile), tools=travel_tools(),
                     retriever=False, context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION)
    assert reply.answer == ANSWER and planner.calls == 1


@pytest.mark.model
@pytest.mark.slow
async def test_the_packaged_model_writes_the_answer_to_a_scripted_plan() -> None:
    # The answer model named by spec is loaded by open_deps (the packaged 0.5B model) and writes the answer from the
    # results of the plan another model made; the planner's model is asked nothing else.
    planner = ReplayChatModel.of([PLAN])
    async with Agent(model=planner, answer_model="default", tools=travel_tools(), retriever=False,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION)
    assert planner.calls == 1
    assert reply.metadata["answer_source"] in ("model", "regenerated", "amended"), reply.answer
    assert reply.metadata["llm_calls"] >= 2
    assert "17" in reply.answer, reply.answer  # the forecast's maximum, which only the results hold

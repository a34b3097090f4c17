"""Retries that try something else: after a rejected reply or a failed plan the planner samples and sees other
examples; the number of examples is a Context setting. With the replay model, which records what reached it."""

from __future__ import annotations

import pytest
from langchain_core.messages import BaseMessage

from planwerk.graph.context import Context
from planwerk.graph.run_context import run_context
from planwerk.models.replay import ReplayChatModel
from planwerk.prompts.examples import library
from tests.graph.tools import GEO, plan_json, replay_agent, weather_call

QUESTION = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
WEATHER = weather_call("2026-12-01")


GOOD_PLAN = plan_json([GEO], [WEATHER])
UNKNOWN_TOOL = plan_json([{**GEO, "name": "geokodieren"}], [WEATHER])


def shown_examples(prompt: list[BaseMessage]) -> list[str]:
    """The travel library's questions that the planner's system message shows, in library order."""
    system = str(prompt[0].content)
    return [example.question for example in library("travel") if example.question in system]


async def test_a_rejected_reply_is_retried_sampling_with_other_examples() -> None:
    model = ReplayChatModel.of([UNKNOWN_TOOL, GOOD_PLAN, "17 °C."])
    async with replay_agent(model) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert reply.answer == "17 °C." and model.calls == 3
    first, second = shown_examples(model.prompts[0]), shown_examples(model.prompts[1])
    assert len(first) == len(second) == 2  # Context.plan_examples defaults to 2
    rome = "Wie wird das Wetter in Rom am 23.01.2026?"
    assert rome in first and rome in second  # the closest example stays …
    assert set(first) != set(second)  # … the other one moves on to the next-ranked
    # the first call is greedy; the retry samples, seeded with the attempt number (reproducible); the answer: greedy
    assert model.call_options == [{}, {"temperature": 0.7, "seed": 1, "top_p": 0.8}, {}]


async def test_every_further_retry_samples_with_its_own_seed_and_examples() -> None:
    model = ReplayChatModel.of([UNKNOWN_TOOL, UNKNOWN_TOOL, GOOD_PLAN, "17 °C."])
    async with replay_agent(model, retry_temperature=1.1, retry_top_p=1.0) as planwerk:
        await planwerk.ask(QUESTION)
    sampled = {"temperature": 1.1, "top_p": 1.0}
    assert model.call_options[:3] == [{}, sampled | {"seed": 1}, sampled | {"seed": 2}]
    shown = [frozenset(shown_examples(prompt)) for prompt in model.prompts[:3]]
    assert len(set(shown)) == 3


async def test_a_failed_call_is_replanned_sampling_too() -> None:
    wrong = plan_json([{**GEO, "arguments": {"destination": "Barcelonna"}}], [WEATHER])
    model = ReplayChatModel.of([wrong, GOOD_PLAN, "17 °C."])
    async with replay_agent(model) as planwerk:
        await planwerk.ask(QUESTION)
    assert model.call_options[:2] == [{}, {"temperature": 0.7, "seed": 1, "top_p": 0.8}]


async def test_retry_temperature_zero_keeps_retries_greedy_but_shows_other_examples() -> None:
    model = ReplayChatModel.of([UNKNOWN_TOOL, GOOD_PLAN, "17 °C."])
    async with replay_agent(model, retry_temperature=0) as planwerk:
        await planwerk.ask(QUESTION)
    assert model.call_options == [{}, {}, {}]
    assert shown_examples(model.prompts[0]) != shown_examples(model.prompts[1])


@pytest.mark.parametrize("k", [1, 3])
async def test_plan_examples_sets_how_many_examples_the_planner_sees(k: int) -> None:
    model = ReplayChatModel.of([GOOD_PLAN, "17 °C."])
    async with replay_agent(model, plan_examples=k) as planwerk:
        await planwerk.ask(QUESTION)
    shown = shown_examples(model.prompts[0])
    assert len(shown) == k and "Wie wird das Wetter in Rom am 23.01.2026?" in shown


def test_the_new_context_fields_are_validated() -> None:
    assert Context().plan_examples == 2 and Context().retry_temperature == 0.7 and Context().retry_top_p == 0.8
    assert run_context({"plan_examples": "3", "retry_temperature": "0", "retry_top_p": "0.5"}) == Context(
        plan_examples=3, retry_temperature=0.0, retry_top_p=0.5
    )
    for bad in (
        {"plan_examples": 0},
        {"plan_examples": 1.5},
        {"plan_examples": True},
        {"retry_temperature": -0.1},
        {"retry_temperature": 2.5},
        {"retry_temperature": True},
        {"retry_top_p": 0},
        {"retry_top_p": 1.5},
        {"retry_top_p": True},
    ):
        with pytest.raises(ValueError, match=f"Context.{next(iter(bad))}"):
            Context(**bad)

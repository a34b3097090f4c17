"""Several sampled replies from one batched generation: the tiny random model for the mechanics, the packaged model
with the plan grammar for what self-consistency needs (valid, different, reproducible plans)."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import HumanMessage

from benchmarks.model import plan_messages, travel_specs
from planwerk.core.plan_schema import plan_json_schema
from planwerk.models.base import SupportsBatchSampling
from planwerk.models.hf import GenerationOptions, HFChatModel


def test_one_generate_call_returns_n_reproducible_samples(tiny_model: HFChatModel) -> None:
    options = GenerationOptions(max_new_tokens=12, temperature=1.0, seed=7, use_prefix_cache=False)
    first = tiny_model.runtime.generate_samples([{"role": "user", "content": "w1 w2"}], options, 4)
    again = tiny_model.runtime.generate_samples([{"role": "user", "content": "w1 w2"}], options, 4)
    assert len(first) == 4 and [g.text for g in first] == [g.text for g in again]
    assert len({g.text for g in first}) > 1  # sampled, not four copies of one greedy reply
    assert all(g.output_tokens == 12 and g.finish_reason == "length" for g in first)


def test_several_samples_need_a_temperature(tiny_model: HFChatModel) -> None:
    with pytest.raises(ValueError, match="need n >= 1 and, for n > 1, a temperature above 0"):
        tiny_model.runtime.generate_samples([{"role": "user", "content": "w1"}], GenerationOptions(), 3)


async def test_the_chat_model_samples_in_one_call(tiny_model: HFChatModel) -> None:
    assert isinstance(tiny_model, SupportsBatchSampling)
    model = tiny_model.model_copy(update={"max_new_tokens": 8})
    replies = await model.asample([HumanMessage("w3 w4")], 3, temperature=1.0, seed=1)
    assert len(replies) == 3 and all(r.usage_metadata and r.usage_metadata["output_tokens"] == 8 for r in replies)


@pytest.mark.slow
def test_the_packaged_model_samples_valid_plans_in_one_batch_reproducibly() -> None:
    from planwerk.models.specs import load_chat_model

    specs = travel_specs({"geocode", "get_weather"})
    with pytest.MonkeyPatch.context() as patch:  # batched sampling is the transformers path's
        patch.setenv("PLANWERK_LOCAL_BACKEND", "transformers")
        model = load_chat_model("default")
    assert isinstance(model, HFChatModel)
    planner = model.with_plan_schema(plan_json_schema(specs))
    messages = plan_messages("Wie wird das Wetter in Rom und in Madrid am 3. März 2026?", specs)
    replies = asyncio.run(planner.asample(messages, 3, temperature=1.0, seed=3))
    plans = [json.loads(str(reply.content)) for reply in replies]  # the grammar holds for every sample
    assert all(set(plan) in ({"steps", "final"}, {"ask_user"}) for plan in plans)
    assert len({json.dumps(plan) for plan in plans}) > 1  # sampled: not three copies of one reply
    again = asyncio.run(planner.asample(messages, 3, temperature=1.0, seed=3))
    assert [str(r.content) for r in again] == [str(r.content) for r in replies]  # seeded: reproducible

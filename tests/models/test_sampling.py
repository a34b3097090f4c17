"""Sampling for retries: the local model's options, other chat models through ``bind``, the replay model, and
(slow) the packaged model, whose sampled retry differs from its greedy reply."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableBinding
from pydantic import Field

from planwerk.models.base import SupportsSampling, sampling_variant
from planwerk.models.hf import GenerationOptions, HFChatModel
from planwerk.models.replay import ReplayChatModel


class TemperatureModel(BaseChatModel):
    """A chat model with ``temperature``, ``seed`` and ``top_p`` fields, like ChatOpenAI; records its call kwargs."""

    temperature: float = 0.0
    seed: int | None = None
    top_p: float | None = None
    seen: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "test-temperature"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        self.seen.append(kwargs)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))])


def test_generation_options_default_to_greedy_and_check_their_values() -> None:
    assert not GenerationOptions().sampling
    assert GenerationOptions(temperature=0.7, seed=3).sampling
    for bad in ({"temperature": -1.0}, {"temperature": float("nan")}, {"top_p": 0.0}, {"top_p": 1.5}):
        with pytest.raises(ValueError):
            GenerationOptions(**bad)


def test_local_model_takes_sampling_from_with_sampling_and_from_call_kwargs() -> None:
    model = HFChatModel.model_construct()  # no weights needed: only how options are formed
    assert isinstance(model, SupportsSampling)
    assert not model._options(None, {}).sampling  # greedy by default
    sampled = model.with_sampling(0.7, seed=5)
    options = sampled._options(None, {})
    assert (options.temperature, options.seed, options.top_p) == (0.7, 5, None)
    assert model.temperature is None  # a copy: the shared model stays greedy
    bound = model._options(None, {"temperature": 0.4, "seed": 9, "top_p": 0.9})  # what model.bind(...) passes
    assert (bound.temperature, bound.seed, bound.top_p) == (0.4, 9, 0.9)
    assert not sampled._options(None, {"temperature": 0}).sampling
    with pytest.raises(ValueError, match="temperature"):
        model.with_sampling(-0.5)


def test_other_chat_models_get_temperature_through_bind_where_they_have_it() -> None:
    model = TemperatureModel()
    variant = sampling_variant(model, 0.8, seed=2)
    assert isinstance(variant, RunnableBinding)
    variant.invoke("hi")
    assert model.seen == [{"temperature": 0.8, "seed": 2}]
    sampling_variant(model, 0.7, seed=1, top_p=0.8).invoke("hi")  # the nucleus cut-off too, where there is a field
    assert model.seen[-1] == {"temperature": 0.7, "seed": 1, "top_p": 0.8}
    plain = FakeListChatModel(responses=["x"])  # no temperature field: decodes as it always does
    assert sampling_variant(plain, 0.8, seed=2) is plain


def test_replay_model_accepts_sampling_and_replays_the_same_replies() -> None:
    model = ReplayChatModel.of(["a", "b"])
    assert sampling_variant(model, 0.7, seed=1).invoke("q").content == "a"
    assert model.invoke("q").content == "b"  # the same position: a binding, not a copy
    assert model.call_options == [{"temperature": 0.7, "seed": 1}, {}]


@pytest.mark.slow
def test_packaged_model_samples_a_different_plan_than_greedy_and_reproducibly() -> None:
    from benchmarks.model import plan_messages, travel_specs
    from planwerk.core.plan_schema import plan_json_schema
    from planwerk.models.specs import load_chat_model

    with pytest.MonkeyPatch.context() as patch:  # this module tests the transformers path
        patch.setenv("PLANWERK_LOCAL_BACKEND", "transformers")
        model = load_chat_model("default")
    assert isinstance(model, HFChatModel)
    specs = travel_specs({"geocode", "get_weather"})
    # Few tokens (the JSON stays unfinished): enough for the step description, where the replies part.
    planner = model.with_plan_schema(plan_json_schema(specs)).model_copy(update={"max_new_tokens": 24})
    messages = plan_messages("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", specs)
    greedy = planner.invoke(messages).content
    assert planner.invoke(messages).content == greedy  # greedy repeats itself: why retries must not be greedy
    sampled = [sampling_variant(planner, 1.0, seed=seed).invoke(messages).content for seed in (1, 2, 3)]
    assert any(text != greedy for text in sampled), (greedy, sampled)
    assert sampling_variant(planner, 1.0, seed=1).invoke(messages).content == sampled[0]  # same seed, same reply
    assert all(text.startswith('{"steps":[') for text in sampled)  # the plan grammar still holds while sampling


def test_a_repeat_penalty_is_checked_and_reaches_the_options_of_a_copy() -> None:
    model = HFChatModel.model_construct()
    assert model._options(None, {}).repeat_penalty == 1.0
    penalized = model.with_repeat_penalty(1.05)
    assert penalized._options(None, {}).repeat_penalty == 1.05 and model.repeat_penalty == 1.0
    for bad in (0.9, 2.5, float("nan"), True):
        with pytest.raises(ValueError, match="repeat_penalty"):
            GenerationOptions(repeat_penalty=bad)


def test_the_transformers_penalty_reaches_only_the_replys_own_tokens() -> None:
    import torch

    from planwerk.models.hf import ReplyRepeatPenalty

    # A prompt of tokens 1 and 2, a reply so far of token 3: only token 3's logit changes, divided (positive) or
    # multiplied (negative) by the penalty; transformers' own repetition_penalty would change 1 and 2 as well.
    scores = torch.tensor([[0.0, 2.0, -2.0, 3.0, -1.0]])
    penalized = ReplyRepeatPenalty(prompt_tokens=2, penalty=1.5)(torch.tensor([[1, 2, 3]]), scores)
    assert penalized.tolist() == [[0.0, 2.0, -2.0, 2.0, -1.0]]
    negative = ReplyRepeatPenalty(prompt_tokens=1, penalty=2.0)(torch.tensor([[1, 4]]), scores)
    assert negative.tolist() == [[0.0, 2.0, -2.0, 3.0, -2.0]]
    assert ReplyRepeatPenalty(3, 2.0)(torch.tensor([[1, 2, 3]]), scores) is scores  # nothing produced yet

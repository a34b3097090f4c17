"""The repetition stop: loops end early, ordinary JSON does not."""

from __future__ import annotations

import json

import pytest
import torch

from planwerk.models.stopping import RepetitionPolicy, RepetitionStop, repeating_period

POLICY = RepetitionPolicy(max_period=16, min_repeats=3, min_span=24)


@pytest.mark.parametrize(
    ("tokens", "period"),
    [
        ([7] * 24, 1),
        ([1, 2, 3, 4] + [5, 6, 7, 8, 9, 10] * 5, 6),
        ([9] * 5 + list(range(16)) * 3, 16),
    ],
)
def test_loops_are_detected(tokens, period):
    assert repeating_period(tokens, POLICY) == period


@pytest.mark.parametrize(
    "tokens",
    [
        [7] * 23,  # too short a span
        list(range(40)),
        [1, 2] * 3 + [3],  # the repeat is not at the end
        [ord(c) for c in json.dumps({"steps": [{"a": [0, 0, 0]}, {"b": [1, 1]}], "final": None})],
    ],
)
def test_ordinary_output_is_not_a_loop(tokens):
    assert repeating_period(tokens, POLICY) is None


def test_stopping_criterion_looks_only_at_generated_tokens():
    prompt = [5] * 30  # a repetitive prompt must not count
    stop = RepetitionStop(prompt_length=30, policy=POLICY)
    fresh = torch.tensor([[*prompt, 1, 2, 3]])
    assert not stop(fresh, None).any() and not stop.triggered
    looping = torch.tensor([prompt + [1, 2, 3, 4] * 7])
    assert stop(looping, None).tolist() == [True]
    assert stop.triggered

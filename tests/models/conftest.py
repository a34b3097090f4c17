"""Fixtures of the model tests: a tiny random Llama built from a config (no download, fast)."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from planwerk.models.hf import HFChatModel, build_hf_chat_model
from planwerk.models.stopping import RepetitionPolicy
from tests.helpers import tiny_llama_config, word_tokenizer

MAX_NEW_TOKENS = 3000
"""Enough for the tiny model to generate for well over 2 s when nothing stops it."""
NEVER_LOOPS = RepetitionPolicy(max_period=1, min_repeats=10**9)
"""A random model loops at once; the repetition stop must not be what ends it here."""
SECONDS_PER_STEP = 0.002
"""The tiny model's pace: at least 6 s for MAX_NEW_TOKENS on any machine (unpaced, a fast CI machine generated
all 3000 tokens in under 3 s, and the cancellation tests would have proved nothing)."""


@pytest.fixture(scope="session")
def tiny_model() -> HFChatModel:
    from transformers import LlamaForCausalLM

    tokenizer = word_tokenizer()
    config = tiny_llama_config(MAX_NEW_TOKENS + 64)

    class PacedLlama(LlamaForCausalLM):
        """A Llama that takes at least SECONDS_PER_STEP per forward pass, like a real model on any hardware."""

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            time.sleep(SECONDS_PER_STEP)
            return super().forward(*args, **kwargs)

    model = PacedLlama(config).eval()
    with torch.no_grad():  # the end token's logit is 0, below the likeliest of 254 random ones: it never wins
        model.lm_head.weight[1] = 0.0
    chat = build_hf_chat_model(model, tokenizer, model_id="tiny-random", max_new_tokens=MAX_NEW_TOKENS)
    return chat.model_copy(update={"repetition": NEVER_LOOPS, "use_prefix_cache": False})

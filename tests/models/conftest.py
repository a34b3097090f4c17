"""Fixtures of the model tests: a tiny random Llama built from a config (no download, fast)."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from planwerk.models.hf import HFChatModel, build_hf_chat_model
from planwerk.models.stopping import RepetitionPolicy

MAX_NEW_TOKENS = 3000
"""Enough for the tiny model to generate for well over 2 s when nothing stops it."""
NEVER_LOOPS = RepetitionPolicy(max_period=1, min_repeats=10**9)
"""A random model loops at once; the repetition stop must not be what ends it here."""
SECONDS_PER_STEP = 0.002
"""The tiny model's pace: at least 6 s for MAX_NEW_TOKENS on any machine (unpaced, a fast CI machine generated
all 3000 tokens in under 3 s, and the cancellation tests would have proved nothing)."""


@pytest.fixture(scope="session")
def tiny_model() -> HFChatModel:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<unk>", "<eos>"] + [f"w{i}" for i in range(254)]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<eos>")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(words),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_NEW_TOKENS + 64,
        eos_token_id=1,
        pad_token_id=1,
    )

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

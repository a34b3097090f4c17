"""The planwerk graph as ``langgraph dev`` serves it, plus a paced tiny random Llama loadable through ``hf:<folder>``.

Used by ``test_run_cancel.py`` as the graph of its own ``langgraph.json``: importing this module registers the
model class with transformers' auto classes in the server process, so ``Context.model = "hf:<folder>"`` loads it
through planwerk's real model spec and HF runtime. The graph itself is :func:`planwerk.serving.server.make_graph`,
unchanged.

The model writes one line per forward pass (the time) to the file named by :data:`FORWARD_LOG_ENV`: the test sees
from outside the server whether the model is generating. Each forward pass takes at least
:data:`SECONDS_PER_STEP`, so a generation of ``max_new_tokens`` (512) lasts at least 25 s on any machine; its
logits are random per step (never the end token), so neither the end token nor the repetition stop ends it early.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

from planwerk.serving.server import make_graph as make_graph

# The dev server loads this file by its path, from a temporary folder: the repository root (home of the ``tests``
# package) is on its import path only when this puts it there.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.helpers import END_TOKEN, tiny_llama_config, word_tokenizer

FORWARD_LOG_ENV = "PLANWERK_TEST_FORWARD_LOG"
"""The file the model appends one line (``time.time()``) to per forward pass."""
SECONDS_PER_STEP = 0.05
"""The model's pace: 512 new tokens take at least 25.6 s, however fast the machine."""


class PacedLlamaConfig(LlamaConfig):
    """The config of :class:`PacedLlama` (its own ``model_type``, so the auto classes pick the paced class)."""

    model_type = "planwerk-paced-llama"


class PacedLlama(LlamaForCausalLM):
    """A tiny Llama whose forward pass takes at least :data:`SECONDS_PER_STEP`, logs itself, and whose next-token
    logits are random (seeded), never the end token."""

    config_class = PacedLlamaConfig

    def __init__(self, config: PacedLlamaConfig):
        super().__init__(config)
        self._noise = torch.Generator().manual_seed(0)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Llama's forward pass, paced and logged, with random logits at the last position."""
        time.sleep(SECONDS_PER_STEP)
        out = super().forward(*args, **kwargs)
        logits = torch.rand(out.logits.shape[-1], generator=self._noise) * 10
        logits[END_TOKEN] = -1e4
        out.logits[:, -1, :] = logits.to(out.logits.dtype)
        log = os.environ.get(FORWARD_LOG_ENV)
        if log:
            with open(log, "a", encoding="ascii") as file:
                file.write(f"{time.time():.4f}\n")
        return out


AutoConfig.register(PacedLlamaConfig.model_type, PacedLlamaConfig)
AutoModelForCausalLM.register(PacedLlamaConfig, PacedLlama)


def save_paced_model(folder: Path) -> str:
    """Write the paced model and its word-level tokenizer (with a chat template) to ``folder``; its model spec."""
    tokenizer = word_tokenizer()
    config = tiny_llama_config(16384, PacedLlamaConfig)  # the planner's prompt is a few thousand words
    PacedLlama(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return f"hf:{folder}"

"""Stopping criteria for local generation: loops, and cancellation.

Greedy decoding of a 0.5B model falls into loops (the same call or phrase again and again) until
``max_new_tokens``; detecting that early saves tens of seconds per bad plan. The detector is pure
(:func:`repeating_period`); :class:`RepetitionStop` adapts it to transformers' stopping criteria.

Generation runs in a worker thread, which cancelling the awaiting coroutine (a cancelled run, ``runs.cancel``)
does not stop: it went on at 50-60 % of a core for 40 s and more. :class:`CancelStop` ends it at the next token
once its event is set.

A loop need not repeat tokens: a planner that starts its plan over writes the same calls under new ids.
:class:`TextStop` asks a caller's test of the text so far (the planner's: :func:`planwerk.core.parsing.repeats_a_call`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RepetitionPolicy:
    """When a repeating tail counts as a loop."""

    max_period: int = 64
    """Longest repeated block (in tokens) that is looked for."""
    min_repeats: int = 3
    """The block must occur at least this many times in a row at the end."""
    min_span: int = 48
    """...and the repeats together must cover at least this many tokens (so ``000`` or ``]}]}`` pass)."""


def repeating_period(tokens: Sequence[object], policy: RepetitionPolicy = RepetitionPolicy()) -> int | None:
    """The length of the block that the end of ``tokens`` repeats per ``policy``, or ``None``."""
    n = len(tokens)
    for period in range(1, policy.max_period + 1):
        repeats_needed = max(policy.min_repeats, -(-policy.min_span // period))
        span = period * repeats_needed
        if span > n:
            continue
        tail = tokens[n - span :]
        block = tail[-period:]
        if all(tail[i] == block[i % period] for i in range(span)):
            return period
    return None


class RepetitionStop:
    """A transformers ``StoppingCriteria`` that ends a sequence once its generated tail loops."""

    def __init__(self, prompt_length: int, policy: RepetitionPolicy = RepetitionPolicy()):
        self.prompt_length = prompt_length
        self.policy = policy
        self.triggered = False
        """Set when this criterion stopped the generation (the finish reason is then ``repetition``)."""

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        window = self.policy.max_period * max(self.policy.min_repeats, 2) + self.policy.min_span
        done = []
        for row in input_ids:
            generated = row[self.prompt_length :][-window:].tolist()
            looping = repeating_period(generated, self.policy) is not None
            done.append(looping)
        self.triggered = self.triggered or any(done)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class CancelStop:
    """A transformers ``StoppingCriteria`` that ends every sequence once ``event`` is set (checked per token)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


class TextStop:
    """A transformers ``StoppingCriteria`` that ends a sequence once ``stop_when`` holds for its text so far."""

    def __init__(self, prompt_length: int, tokenizer: Any, stop_when: Callable[[str], bool]) -> None:
        self.prompt_length = prompt_length
        self.tokenizer = tokenizer
        self.stop_when = stop_when
        self.triggered = False
        """Set when this criterion stopped the generation (the finish reason is then ``repetition``)."""

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = [
            self.stop_when(self.tokenizer.decode(row[self.prompt_length :].tolist(), skip_special_tokens=True))
            for row in input_ids
        ]
        self.triggered = self.triggered or any(done)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

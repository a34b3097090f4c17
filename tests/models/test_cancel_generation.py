"""Cancelling the coroutine that awaits a local generation stops the generate thread within 2 s.

A tiny random Llama (built from a config, no download) with a word-level tokenizer stands in for the packaged
model: what is tested is the thread, not the text. Without the cancellation criterion the thread ran on to
``max_new_tokens`` (with a real model: 40 s and more at 50-60 % of a core after ``runs.cancel``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
import torch
from langchain_core.messages import HumanMessage

from planwerk.models.hf import HFChatModel
from planwerk.models.stopping import CancelStop


def generating(model: HFChatModel) -> bool:
    """Whether a generation runs now (the runtime holds its lock for the whole generate call)."""
    return bool(model.runtime._lock.locked())


async def ended_within(model: HFChatModel, seconds: float) -> float | None:
    """Seconds until no generation runs, or None if one still runs after ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if not generating(model):
            return time.monotonic() - started
        await asyncio.sleep(0.02)
    return None


async def cancel_after(task: asyncio.Task[Any], model: HFChatModel, seconds: float) -> None:
    await asyncio.sleep(seconds)
    assert generating(model) and not task.done()  # still generating: the cancel is what must stop it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancelling_ainvoke_stops_the_generate_thread_within_2_s(tiny_model: HFChatModel) -> None:
    task = asyncio.create_task(tiny_model.ainvoke([HumanMessage("w1 w2 w3")]))
    await cancel_after(task, tiny_model, 1.0)
    ended = await ended_within(tiny_model, 2.0)
    assert ended is not None, "the generate thread still runs 2 s after the cancel"


async def test_cancelling_astream_stops_the_generate_thread_within_2_s(tiny_model: HFChatModel) -> None:
    async def consume() -> None:
        async for _ in tiny_model.astream([HumanMessage("w4 w5")]):
            pass

    task = asyncio.create_task(consume())
    await cancel_after(task, tiny_model, 1.0)
    ended = await ended_within(tiny_model, 2.0)
    assert ended is not None, "the generate thread still runs 2 s after the cancel"
    assert not any(t.name == "planwerk-generate" and t.is_alive() for t in threading.enumerate())


def test_the_tiny_model_would_generate_for_longer_than_the_test_waits(tiny_model: HFChatModel) -> None:
    # Guards the two tests above: were generation over within 3 s anyway, they would prove nothing.
    event = threading.Event()
    timer = threading.Timer(3.0, event.set)
    timer.start()
    try:
        started = time.monotonic()
        generation = tiny_model.runtime.generate(
            [{"role": "user", "content": "w1"}], tiny_model._options(None, {}), cancel=event
        )
    finally:
        timer.cancel()
    assert generation.finish_reason == "cancelled" and time.monotonic() - started >= 3.0


def test_cancel_stop_answers_per_sequence() -> None:
    event = threading.Event()
    stop = CancelStop(event)
    ids = torch.zeros((2, 3), dtype=torch.long)
    assert not stop(ids, None).any()
    event.set()
    assert stop(ids, None).all()

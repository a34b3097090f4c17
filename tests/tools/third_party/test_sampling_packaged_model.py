"""(slow) The packaged local model answers a real server's sampling request, its length capped by the policy."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from planwerk.models.hf import HFChatModel
from planwerk.tools.client_features import (
    ElicitationRequest,
    SamplingPolicy,
    call_with_client_features,
    channel_for_call,
)
from planwerk.tools.mcp import open_tools
from tests.third_party import npm_server


def no_person(request: ElicitationRequest) -> Any:
    """This test has nobody to ask."""
    raise AssertionError(f"unexpected elicitation: {request}")


@pytest.mark.slow
async def test_the_packaged_model_answers_a_sampling_request_within_the_token_cap() -> None:
    from planwerk.models.specs import load_chat_model

    with pytest.MonkeyPatch.context() as patch:  # the transformers path (the llama.cpp one has its own tests)
        patch.setenv("PLANWERK_LOCAL_BACKEND", "transformers")
        model = await asyncio.to_thread(load_chat_model, "default")
    assert isinstance(model, HFChatModel)

    async def the_model() -> HFChatModel:
        return model

    events: list[dict[str, Any]] = []
    channel = channel_for_call(
        "c", "trigger-sampling-request", model=the_model, emit=events.append, run_key="packaged",
        policy=SamplingPolicy(max_tokens=8),
    )  # fmt: skip
    config = {"mcpServers": {"everything": {"command": npm_server("mcp-server-everything"), "timeout": 300}}}
    async with open_tools(config) as tools:
        arguments = {"prompt": "Write a long story about the sea.", "maxTokens": 500}
        result = await call_with_client_features(
            lambda: tools.call("trigger-sampling-request", arguments), channel, no_person
        )
    [request, answer] = events
    assert request["event"] == "sampling_request" and request["max_tokens"] == 8  # the server's 500, capped
    assert answer["event"] == "sampling_result" and answer["text"].strip() and "error" not in answer
    assert answer["stop_reason"] == "maxTokens"  # the cap ended it, not the model
    assert len(model.tokenizer(answer["text"], add_special_tokens=False)["input_ids"]) <= 9
    assert f'"text": {json.dumps(answer["text"], ensure_ascii=False)}' in str(result)  # what the server got

"""The packaged default model, really loaded (once per session): planning, caching, streaming, usage."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph

from benchmarks.model import math_specs, plan_messages, travel_specs
from planwerk.core.expression_grammar import expression_grammar
from planwerk.core.expressions import ExpressionParseError, compile_expression, parse_expression_plan
from planwerk.core.plan_schema import plan_json_schema
from planwerk.models.base import SupportsPlanGrammar, SupportsPlanSchema
from planwerk.models.hf import GenerationOptions, HFChatModel, message_dicts
from planwerk.models.specs import load_chat_model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def default_model() -> HFChatModel:
    """The packaged model; load_chat_model caches it per process, so other test modules share this load."""
    with pytest.MonkeyPatch.context() as patch:  # this module tests the transformers path
        patch.setenv("PLANWERK_LOCAL_BACKEND", "transformers")
        model = load_chat_model("default")
    assert isinstance(model, HFChatModel)
    return model


@pytest.fixture(scope="module")
def weather_specs():
    return travel_specs({"geocode", "get_weather"})


def ref_root(value, field: str) -> str | None:
    """The call id a reference value points at, if it is a reference to ``<id>.<field>``."""
    text = value.get("$ref") if isinstance(value, dict) else value[5:] if str(value).startswith("$ref:") else None
    if not isinstance(text, str) or not text.endswith(f".{field}"):
        return None
    return text[: -len(field) - 1]


def test_constrained_plan_geocodes_then_gets_the_weather(default_model, weather_specs):
    assert isinstance(default_model, SupportsPlanSchema)
    planner = default_model.with_plan_schema(plan_json_schema(weather_specs))
    messages = plan_messages("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", weather_specs)
    assert "Rom" in messages[0].content  # the notebook's Rome example was chosen as the few-shot example
    reply = planner.invoke(messages)
    plan = json.loads(reply.content)  # constrained decoding: the raw reply is the JSON plan
    calls = [(i, call) for i, step in enumerate(plan["steps"]) for call in step["tools"]]
    geo_step, geo = next((i, c) for i, c in calls if c["name"] == "geocode")
    wx_step, wx = next((i, c) for i, c in calls if c["name"] == "get_weather")
    assert "Barcelona" in geo["arguments"]["destination"]
    assert wx_step > geo_step
    assert ref_root(wx["arguments"]["lat"], "lat") == geo["id"]
    assert ref_root(wx["arguments"]["lon"], "lon") == geo["id"]
    # The prompt names the question's dates in ISO form (planwerk.core.dates): the model copies 2026-12-01.
    assert wx["arguments"]["start_date"] == "2026-12-01"
    usage = reply.usage_metadata
    assert usage["output_tokens"] > 20 and usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert reply.response_metadata["finish_reason"] == "stop"


def test_prefix_cache_gives_the_same_greedy_output(default_model, weather_specs):
    runtime = default_model.runtime
    messages = message_dicts(plan_messages("What is the weather in Paris on 2026-11-22?", weather_specs))
    ids, prefix_ids = runtime.prompt_ids(messages)
    assert 100 < len(prefix_ids) < len(ids) and ids[: len(prefix_ids)] == prefix_ids
    runtime.prefix_cache.clear()
    options = GenerationOptions(max_new_tokens=12, use_prefix_cache=False)
    plain = runtime.generate(messages, options)
    hits_before = runtime.prefix_cache.stats.hits
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = runtime.generate(messages, GenerationOptions(max_new_tokens=12))
        reused = runtime.generate(messages, GenerationOptions(max_new_tokens=12))
    # The KV cache goes in under the name transformers takes now: the old one printed a FutureWarning per call.
    assert not [w for w in caught if "past_key_values" in str(w.message)], [str(w.message) for w in caught]
    assert plain.cached_prefix_tokens == 0
    assert built.cached_prefix_tokens == reused.cached_prefix_tokens == len(prefix_ids)
    assert runtime.prefix_cache.stats.hits == hits_before + 1
    assert plain.output_tokens == 12 and plain.text == built.text == reused.text
    assert reused.prefill_s < plain.prefill_s  # only the question's tokens were computed


def test_streaming_yields_token_chunks_with_usage_at_the_end(default_model):
    short = default_model.model_copy(update={"max_new_tokens": 16})
    chunks = list(short.stream([SystemMessage("Antworte kurz."), HumanMessage("Nenne drei Farben.")]))
    texts = [c.content for c in chunks if c.content]
    assert len(texts) >= 3
    assert chunks[-1].usage_metadata["output_tokens"] <= 16
    assert chunks[-1].response_metadata["finish_reason"] in ("stop", "length")


async def test_langgraph_messages_stream_gets_model_tokens(default_model):
    short = default_model.model_copy(update={"max_new_tokens": 16})

    async def answer(state: MessagesState) -> dict:
        return {"messages": [await short.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState).add_node("answer", answer).add_edge(START, "answer").compile()
    pieces: list[str] = []
    async for message, metadata in graph.astream(
        {"messages": [HumanMessage("Sag hallo auf Englisch.")]}, stream_mode="messages"
    ):
        assert metadata["langgraph_node"] == "answer"
        if isinstance(message, AIMessageChunk) and message.content:
            pieces.append(message.content)
    final = await graph.ainvoke({"messages": [HumanMessage("Sag hallo auf Englisch.")]})
    assert len(pieces) >= 2
    assert "".join(pieces).strip() == final["messages"][-1].content.strip()
    assert final["messages"][-1].usage_metadata["input_tokens"] > 0


def test_expression_grammar_turns_prose_into_a_calculation_that_compiles(default_model):
    # Asked for words, the model writes words; under the expression grammar the same prompt gives an expression
    # over the loaded tools that compiles into calls (no names, no "^", not its own result).
    specs = math_specs({"add", "subtract", "multiply", "divide"})
    question = "A train goes 120 km in 2 hours, then 60 km in 1 hour. What is its average speed? Show your reasoning."
    messages = [HumanMessage(question)]
    free = default_model.invoke(messages, max_new_tokens=60).content
    with pytest.raises(ExpressionParseError):
        parse_expression_plan(free, specs)
    assert isinstance(default_model, SupportsPlanGrammar)
    # Room to finish: with transformers 5.24 the greedy expression runs past 60 tokens (a cut one does not compile).
    reply = default_model.with_plan_grammar(expression_grammar(specs)).invoke(messages, max_new_tokens=200)
    assert compile_expression(reply.content, specs).steps


def test_bad_grammar_fails_when_bound(default_model):
    from planwerk.models.constrained import SchemaCompileError

    with pytest.raises(SchemaCompileError, match="cannot compile the EBNF grammar"):
        default_model.with_plan_grammar("root ::= missing_rule")


def test_stop_strings_cut_the_output(default_model):
    reply = default_model.invoke([HumanMessage("Zähle von 1 bis 10, durch Kommas getrennt.")], stop=["5"])
    assert "5" not in reply.content and "4" in reply.content
    assert reply.response_metadata["finish_reason"] == "stop"


def test_bad_schema_fails_when_bound_not_mid_generation(default_model):
    from planwerk.models.constrained import SchemaCompileError

    with pytest.raises(SchemaCompileError, match="xgrammar cannot compile"):
        default_model.with_plan_schema({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}})


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA; this machine has no GPU")
def test_default_model_runs_on_the_gpu_in_bf16(default_model):
    runtime = default_model.runtime
    assert runtime.device.type == "cuda"
    assert next(runtime.model.parameters()).dtype in (torch.bfloat16, torch.float16)
    reply = default_model.model_copy(update={"max_new_tokens": 8}).invoke([HumanMessage("Hallo")])
    assert reply.content and reply.usage_metadata["output_tokens"] <= 8

"""The packaged 0.5B GGUF on llama.cpp in this process: constrained JSON and expression plans, streaming,
cancellation. One model load, a few short calls (slow tier)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from benchmarks.model import math_specs, plan_messages, travel_specs
from planwerk.core.expression_grammar import expression_grammar
from planwerk.core.expressions import compile_expression
from planwerk.core.plan_schema import plan_json_schema
from planwerk.models.generation import GenerationOptions
from planwerk.models.llama_cpp_lib import llama_cpp_available
from planwerk.models.llamacpp import LlamaCppChatModel

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed (scripts/setup.d)"),
]


@pytest.fixture(scope="module")
def model() -> LlamaCppChatModel:
    from planwerk.models.specs import load_chat_model

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANWERK_LOCAL_BACKEND", "llama.cpp")
        loaded = load_chat_model("default")
    assert isinstance(loaded, LlamaCppChatModel)
    return loaded


def test_a_constrained_json_plan_parses_and_names_loaded_tools(model: LlamaCppChatModel) -> None:
    specs = travel_specs({"geocode", "get_weather"})
    planner = model.with_plan_schema(plan_json_schema(specs))
    reply = planner.invoke(plan_messages("What is the weather in Barcelona on 2026-11-22?", specs), max_new_tokens=320)
    plan = json.loads(reply.text)  # the grammar admits only JSON of the schema
    names = {tool["name"] for step in plan["steps"] for tool in step["tools"]}
    assert names and names <= set(specs)
    # The dates as the question has them: the tool's pattern ^\\d{4}-\\d{2}-\\d{2}$ admits them (it once admitted
    # only the literal "dddd-d-d-d-d", and the model wrote references to fields that do not exist instead).
    weather = [tool["arguments"] for step in plan["steps"] for tool in step["tools"] if tool["name"] == "get_weather"]
    assert weather and weather[0]["start_date"] == weather[0]["end_date"] == "2026-11-22"
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] > 0
    assert reply.response_metadata["cached_prefix_tokens"] > 0  # the system prefix was evaluated apart and kept


def test_an_expression_plan_compiles(model: LlamaCppChatModel) -> None:
    specs = math_specs({"add", "multiply"})
    planner = model.with_plan_grammar(expression_grammar(specs))
    messages = [
        SystemMessage("Write one expression that computes the answer with the functions add(a, b) and multiply(a, b)."),
        HumanMessage("What is 3 plus 4, times 2?"),
    ]
    reply = planner.invoke(messages, max_new_tokens=24)
    assert reply.response_metadata["finish_reason"] == "stop"
    assert compile_expression(reply.text, specs).steps  # a tool call the loaded tools run


def test_streaming_gives_the_same_text_in_pieces_and_usage_last(model: LlamaCppChatModel) -> None:
    messages = [HumanMessage("Name three colours.")]
    chunks = list(model.stream(messages, max_new_tokens=8))
    texts = [chunk.text for chunk in chunks if chunk.text]
    assert len(texts) > 1
    assert "".join(texts) == model.invoke(messages, max_new_tokens=8).text  # greedy: the same reply
    assert chunks[-1].usage_metadata is not None and chunks[-1].usage_metadata["output_tokens"] == 8


def test_the_nucleus_cut_off_limits_what_sampling_may_pick(model: LlamaCppChatModel) -> None:
    # With a cut-off below the most likely token's share, only that token remains: sampling hot gives the greedy
    # reply. Without one, the same seeds leave it (what retries sampled before Context.retry_top_p).
    messages = [HumanMessage("Write one short sentence about the sea.")]
    greedy = model.invoke(messages, max_new_tokens=16).text
    hot = [model.with_sampling(1.5, seed=seed, top_p=1e-6).invoke(messages, max_new_tokens=16).text for seed in (1, 2)]
    assert hot == [greedy, greedy]
    free = [model.with_sampling(1.5, seed=seed).invoke(messages, max_new_tokens=16).text for seed in (1, 2)]
    assert any(text != greedy for text in free), free


def test_a_text_stop_ends_the_reply_once_its_text_meets_the_condition(model: LlamaCppChatModel) -> None:
    messages = [HumanMessage("Count from one to twenty in words, separated by commas.")]
    free = model.invoke(messages, max_new_tokens=48)
    assert free.text.count(",") >= 3
    seen: list[str] = []

    def third_comma(text: str) -> bool:
        seen.append(text)
        return text.count(",") >= 3

    stopped = model.with_text_stop(third_comma).invoke(messages, max_new_tokens=48)
    assert stopped.response_metadata["finish_reason"] == "repetition"
    assert stopped.text.count(",") == 3 and free.text.startswith(stopped.text)  # ended at the piece that held
    assert seen[-1] == stopped.text  # asked of the whole text so far, piece by piece
    streamed = "".join(chunk.text for chunk in model.with_text_stop(third_comma).stream(messages, max_new_tokens=48))
    assert streamed == stopped.text


def test_cancelling_ends_the_generation_while_decoding_and_while_evaluating(model: LlamaCppChatModel) -> None:
    runtime = model.runtime

    async def first_piece_then_close() -> None:
        stream = model.astream([HumanMessage("Write a long story about the sea.")], max_new_tokens=2000)
        async for chunk in stream:
            if chunk.text:
                break
        await stream.aclose()

    asyncio.run(first_piece_then_close())
    assert runtime.last.finish_reason == "cancelled" and runtime.last.output_tokens < 2000
    cancel = threading.Event()
    cancel.set()  # set before the prompt is evaluated: llama.cpp's abort callback stops the evaluation
    messages = [{"role": "user", "content": "A new prompt that is not cached yet. " * 20}]
    generation = runtime.generate(messages, GenerationOptions(max_new_tokens=50), cancel=cancel)
    assert generation.finish_reason == "cancelled" and generation.output_tokens == 0
    assert model.invoke([HumanMessage("Say yes.")], max_new_tokens=3).text  # the context still works afterwards


def test_a_new_process_reads_the_static_prefix_from_disk_and_answers_the_same(
    model: LlamaCppChatModel, tmp_path: Path
) -> None:
    from planwerk.models.llamacpp import LlamaCppRuntime, load_llama
    from planwerk.models.state_store import StateStore

    path = Path(model.runtime.llama.model_path)
    messages = [SystemMessage("You answer in one short sentence. " * 8), HumanMessage("Name a colour.")]
    replies, stats = [], []
    for _ in range(2):  # two runtimes on fresh contexts, as two processes would be, sharing one folder
        runtime = LlamaCppRuntime(load_llama(path, n_ctx=2048), state_store=StateStore(tmp_path))
        fresh = LlamaCppChatModel(runtime=runtime, model_id="default")
        replies.append(fresh.invoke(messages, max_new_tokens=8).text)
        stats.append(runtime.states.stats)
        del runtime, fresh
    assert (stats[0].prefix_builds, stats[0].disk_loads) == (1, 0)
    assert (stats[1].prefix_builds, stats[1].disk_loads) == (0, 1)  # evaluated once, read back by the second
    assert replies[1] == replies[0]  # greedy from the restored state: the same reply


def test_greedy_decoding_gives_the_tokens_of_the_librarys_own_loop(model: LlamaCppChatModel) -> None:
    # The decode loop asks the grammar about the arg-max token only; llama-cpp-python's Llama.generate masks the
    # whole vocabulary: both must give the same tokens, constrained and free. The prompt asks for markdown, so the
    # JSON grammar refuses the model's first choice at some steps (both paths of the loop run).
    runtime = model.runtime
    schema = {"type": "object", "properties": {"colours": {"type": "array", "items": {"type": "string"}}}}
    messages = [{"role": "user", "content": "Name three colours, as a markdown list."}]
    for grammar, options in (
        (runtime.grammar(schema), GenerationOptions(max_new_tokens=12, schema=schema, use_prefix_cache=False)),
        (None, GenerationOptions(max_new_tokens=12, use_prefix_cache=False)),
    ):
        ours = runtime.generate(messages, options)
        ids, _ = runtime.prompt_ids(messages)
        runtime.llama.reset()
        library = []
        for token in runtime.llama.generate(
            ids, temp=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, grammar=grammar
        ):
            if runtime._is_end(token) or len(library) == 12:
                break
            library.append(token)
        assert ours.text == runtime.llama.detokenize(library).decode("utf-8", "replace")


class CountingEvent(threading.Event):
    """An event that counts how often it is asked (llama.cpp's abort callback asks it per graph operation)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def is_set(self) -> bool:
        self.asked += 1
        return super().is_set()


def test_decoded_tokens_do_not_call_the_abort_callback(model: LlamaCppChatModel) -> None:
    # The callback enters Python (and takes the GIL) after every graph operation: a prompt's evaluation needs it,
    # a decoded token is checked between tokens instead. One new token and nine must ask about equally often.
    runtime = model.runtime
    messages = [{"role": "user", "content": "Count from one to twenty in words."}]
    asked = []
    for tokens in (1, 9):
        cancel = CountingEvent()
        generation = runtime.generate(messages, GenerationOptions(max_new_tokens=tokens), cancel=cancel)
        assert generation.output_tokens == tokens
        asked.append(cancel.asked)
    assert asked[1] - asked[0] < 50, asked


def test_a_repeat_penalty_gives_the_tokens_of_the_librarys_own_loop_and_changes_a_repeating_reply(
    model: LlamaCppChatModel,
) -> None:
    # The fast greedy path applies the penalty itself before its arg-max; llama-cpp-python's loop applies the sampler
    # chain's. Both penalize only the reply's own tokens (the prompt's are never accepted into the chain).
    runtime = model.runtime
    messages = [{"role": "user", "content": "Write the word planwerk eight times, separated by commas."}]
    plain = runtime.generate(messages, GenerationOptions(max_new_tokens=24, use_prefix_cache=False)).text
    options = GenerationOptions(max_new_tokens=24, use_prefix_cache=False, repeat_penalty=1.3)
    ours = runtime.generate(messages, options).text
    ids, _ = runtime.prompt_ids(messages)
    runtime.llama.reset()
    library = []
    for token in runtime.llama.generate(ids, temp=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.3):
        if runtime._is_end(token) or len(library) == 24:
            break
        library.append(token)
    assert ours == runtime.llama.detokenize(library).decode("utf-8", "replace")
    assert ours != plain, plain
    assert model.with_repeat_penalty(1.3)._options(None, {}).repeat_penalty == 1.3

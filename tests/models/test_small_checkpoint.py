"""A small Qwen2 built from a config, saved as a checkpoint folder and loaded through ``hf:<folder>`` as a user's
model is: the device plan (CUDA in bf16 where there is a GPU), generation, and xgrammar's constrained decoding,
greedy and batched. Random weights, a byte-level BPE tokenizer trained here: no download, seconds on a CPU.

On a machine without CUDA the same tests check the CPU plan; the GPU assertions run where a GPU is."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest
import torch
from langchain_core.messages import HumanMessage, SystemMessage

from planwerk.models.device import plan_device
from planwerk.models.hf import HFChatModel
from planwerk.models.specs import load_chat_model

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CHOICE_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"enum": ["Barcelona", "Madrid", "Lissabon"]},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "days": {"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 1, "maxItems": 3},
    },
    "required": ["city", "unit", "days"],
    "additionalProperties": False,
}
"""Every string is an enum and the array is bounded: even random weights must finish a valid object."""


def train_tokenizer() -> object:
    """A byte-level BPE tokenizer (the kind xgrammar needs to map tokens to bytes) with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    text = [json.dumps(CHOICE_SCHEMA), "Wie wird das Wetter in Barcelona?", '{"city":"Madrid","days":[1,2]}'] * 20
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(text, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.chat_template = CHATML
    return tokenizer


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    folder = tmp_path_factory.mktemp("small-qwen2")
    tokenizer = train_tokenizer()
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def small_model(checkpoint: Path) -> HFChatModel:
    model = load_chat_model(f"hf:{checkpoint}")
    assert isinstance(model, HFChatModel)
    return model.model_copy(update={"max_new_tokens": 96})


def test_the_checkpoint_loads_on_the_planned_device_and_dtype(small_model: HFChatModel) -> None:
    plan = plan_device()
    runtime = small_model.runtime
    assert runtime.device.type == plan.device
    assert next(runtime.model.parameters()).dtype == plan.torch_dtype()
    reply = small_model.model_copy(update={"max_new_tokens": 8}).invoke([HumanMessage("Hallo")])
    assert reply.usage_metadata is not None and 0 < reply.usage_metadata["output_tokens"] <= 8


def test_constrained_decoding_gives_schema_valid_json(small_model: HFChatModel) -> None:
    constrained = small_model.with_plan_schema(CHOICE_SCHEMA)
    messages = [SystemMessage("Antworte als JSON."), HumanMessage("Wie wird das Wetter in Madrid?")]
    reply = constrained.invoke(messages)
    jsonschema.validate(json.loads(str(reply.content)), CHOICE_SCHEMA)  # random weights, yet valid
    assert reply.response_metadata["finish_reason"] == "stop"
    free = small_model.with_free_decoding().with_plan_schema(CHOICE_SCHEMA).invoke(messages)
    with pytest.raises((json.JSONDecodeError, jsonschema.ValidationError)):  # the grammar did the work
        jsonschema.validate(json.loads(str(free.content)), CHOICE_SCHEMA)


def test_batched_sampling_keeps_the_grammar_for_every_sequence(small_model: HFChatModel) -> None:
    constrained = small_model.with_plan_schema(CHOICE_SCHEMA)
    messages = [HumanMessage("Wie wird das Wetter in Lissabon?")]
    replies = asyncio.run(constrained.asample(messages, 4, temperature=1.0, seed=5))
    values = [json.loads(str(reply.content)) for reply in replies]
    for value in values:
        jsonschema.validate(value, CHOICE_SCHEMA)
    assert len({json.dumps(v, sort_keys=True) for v in values}) > 1  # four sampled sequences, not one copied


def test_a_text_stop_ends_the_reply_once_its_text_meets_the_condition(small_model: HFChatModel) -> None:
    messages = [HumanMessage("Wie wird das Wetter in Madrid?")]
    free = small_model.invoke(messages)
    assert len(free.text) > 40  # random weights: a long reply, as the setup of this test needs
    stopped = small_model.with_text_stop(lambda text: len(text) >= 12).invoke(messages)
    assert stopped.response_metadata["finish_reason"] == "repetition"
    assert len(stopped.text) >= 12 and free.text.startswith(stopped.text)
    assert len(stopped.text) < len(free.text)  # ended where the condition first held, not where the reply ends
    assert stopped.usage_metadata is not None and free.usage_metadata is not None
    assert stopped.usage_metadata["output_tokens"] < free.usage_metadata["output_tokens"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA; this machine has no GPU")
def test_on_a_gpu_the_model_runs_in_half_precision_on_cuda(small_model: HFChatModel) -> None:
    runtime = small_model.runtime
    assert runtime.device.type == "cuda"
    expected = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    assert next(runtime.model.parameters()).dtype == expected
    before = torch.cuda.max_memory_allocated()
    reply = small_model.with_plan_schema(CHOICE_SCHEMA).invoke([HumanMessage("Barcelona?")])
    jsonschema.validate(json.loads(str(reply.content)), CHOICE_SCHEMA)
    assert torch.cuda.max_memory_allocated() >= before > 0  # the weights and the generation live on the GPU

"""Builders the tests share: the agent factory and the tiny random models (no download, seconds on a CPU).

torch, transformers and tokenizers are imported inside the model builders: a test module that only builds agents
does not pay for them when it is collected.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import ToolSource

if TYPE_CHECKING:
    from transformers import LlamaConfig, PreTrainedTokenizerFast

REPO = Path(__file__).resolve().parents[1]


def bank_server(timeout_s: float = 30) -> dict[str, Any]:
    """The MCP config entry of the bank-like server (``benchmarks/bank_server.py``, the domain bench's) over stdio,
    on the tests' account: the bill's planted instruction, not the bench's planted transfer."""
    args = ["-m", "benchmarks.bank_server", "stdio"]
    return {"command": sys.executable, "args": args, "cwd": str(REPO), "timeout": timeout_s}


TODAY = "2026-11-22"
"""The date the tests' agents run on (the replay fixtures' plans were written for it)."""


def make_agent(
    model: BaseChatModel | list[str],
    *,
    tools: ToolSource | None = None,
    mcp_config: str | Path | None = None,
    profile: str | None = None,
    retriever: Any = False,
    db: Path | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    today: str | None = TODAY,
    **context: Any,
) -> Agent:
    """An :class:`Agent` on ``model`` (a chat model, or replies for a :class:`ReplayChatModel`) without retrieval.

    ``tools`` replaces the MCP servers of ``mcp_config`` (the bundled ones when neither is given); threads live in
    ``db`` (SQLite), else ``checkpointer``, else memory; ``context`` sets further :class:`Context` fields.
    """
    chat = ReplayChatModel.of(list(model)) if isinstance(model, list) else model
    return Agent(
        model=chat,
        profile=profile,
        tools=tools,
        mcp_config=mcp_config,
        retriever=retriever,
        db=db,
        checkpointer=checkpointer,
        context=Context(today=today, **context),
    )


WORDS = ["<unk>", "<eos>"] + [f"w{i}" for i in range(254)]
"""The tiny models' vocabulary: an unknown token, the end token (id 1) and 254 words ``w0`` … ``w253``."""
END_TOKEN = 1
"""The id of ``<eos>`` in :data:`WORDS`."""


def word_tokenizer() -> PreTrainedTokenizerFast:
    """A word-level tokenizer over :data:`WORDS` (split on whitespace) with a chat template that joins the turns."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<eos>")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    return tokenizer


def tiny_llama_config(max_positions: int, config_class: type[LlamaConfig] | None = None) -> LlamaConfig:
    """The config of a two-layer Llama over :data:`WORDS` (hidden size 64), seeding torch so weights repeat."""
    import torch
    from transformers import LlamaConfig

    torch.manual_seed(0)
    return (config_class or LlamaConfig)(
        vocab_size=len(WORDS),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        eos_token_id=END_TOKEN,
        pad_token_id=END_TOKEN,
    )


def conversation(messages: list[Any]) -> list[Any]:
    """The questions, answers and questions asked back of a thread's messages (LangChain messages or the server's
    dicts): not the chat's progress texts, plan messages with tool calls, unchecked drafts or tool results
    (planwerk.graph.nodes.chat)."""

    def kept(message: Any) -> bool:
        get = message.get if isinstance(message, dict) else lambda key, default=None: getattr(message, key, default)
        if get("type") == "tool" or get("tool_calls"):
            return False
        return (get("response_metadata") or {}).get("planwerk") not in ("progress", "plan", "draft")

    return [message for message in messages if kept(message)]

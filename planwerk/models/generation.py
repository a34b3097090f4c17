"""What one local generation is asked to do and what it produced: shared by the local backends (transformers in
:mod:`planwerk.models.hf`, llama.cpp in :mod:`planwerk.models.llamacpp`). Pure: no model, no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata

from planwerk.models.stopping import RepetitionPolicy

DEFAULT_MAX_NEW_TOKENS = 512


@dataclass(frozen=True)
class GenerationOptions:
    """How one call generates."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    schema: Mapping[str, Any] | None = None
    """Constrain the output to this JSON schema (xgrammar); ``None`` decodes freely."""
    grammar: str | None = None
    """Constrain the output to this EBNF grammar (xgrammar; an expression plan's); ignored when ``schema`` is set."""
    use_prefix_cache: bool = True
    stop: tuple[str, ...] = ()
    repetition: RepetitionPolicy = field(default_factory=RepetitionPolicy)
    temperature: float = 0.0
    """0 decodes greedily; above 0 samples at this temperature (after the grammar's mask, so only valid tokens)."""
    top_p: float | None = None
    """Nucleus sampling cut-off when sampling; ``None`` keeps the whole distribution."""
    seed: int | None = None
    """Seeds torch's generator before a sampling call, so the same prompt and seed give the same reply."""
    stop_when: Callable[[str], bool] | None = None
    """Ends the generation (finish reason ``repetition``) once this returns ``True`` for the text so far; asked
    after each new piece of text (a planner's test for a plan that has started over)."""

    def __post_init__(self) -> None:
        # A negative temperature or a top_p outside (0, 1] would fail deep inside generate: say so here.
        if isinstance(self.temperature, bool) or not self.temperature >= 0:
            raise ValueError(f"temperature must be a number >= 0 (0: greedy), got {self.temperature!r}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")

    @property
    def sampling(self) -> bool:
        """Whether this call samples (a temperature above 0) rather than decoding greedily."""
        return self.temperature > 0


@dataclass(frozen=True)
class Generation:
    """What one call produced, with counts and timings."""

    text: str
    input_tokens: int
    output_tokens: int
    finish_reason: str
    """``stop`` (end token or stop string), ``length``, ``repetition`` (a looping tail, or ``stop_when``) or
    ``cancelled``."""
    cached_prefix_tokens: int
    prefill_s: float
    """Time until the first new token was chosen (includes building a prefix cache entry)."""
    decode_s: float
    """Time for the remaining tokens."""

    @property
    def usage(self) -> UsageMetadata:
        """LangChain's usage record."""
        return UsageMetadata(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        """Finish reason and timings for ``response_metadata``."""
        return {
            "finish_reason": self.finish_reason,
            "cached_prefix_tokens": self.cached_prefix_tokens,
            "prefill_s": round(self.prefill_s, 4),
            "decode_s": round(self.decode_s, 4),
        }


def message_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as chat-template dicts (system/user/assistant/tool)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            role = "system"
        elif isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = "tool"
        elif isinstance(message, ChatMessage):
            role = message.role
        else:
            raise ValueError(
                f"cannot send a {type(message).__name__} to a local chat model; "
                "expected SystemMessage, HumanMessage, AIMessage, ToolMessage or ChatMessage"
            )
        out.append({"role": role, "content": message.text})
    if not out:
        raise ValueError("no messages to generate from; expected at least one HumanMessage")
    return out

"""What one local generation is asked to do and what it produced: shared by the local backends (transformers in
:mod:`planwerk.models.hf`, llama.cpp in :mod:`planwerk.models.llamacpp`). Pure: no model, no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from pydantic import BaseModel, Field

from planwerk.models.stopping import RepetitionPolicy

DEFAULT_MAX_NEW_TOKENS = 512

REPEAT_PENALTY_LAST_N = 64
"""How many of a reply's latest tokens a repeat penalty looks back on (llama.cpp's default window)."""


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
    repeat_penalty: float = 1.0
    """Penalty on tokens this reply already produced (the last :data:`REPEAT_PENALTY_LAST_N`; never the prompt's):
    a positive logit is divided by it, a negative one multiplied; 1.0 is none."""
    stop_when: Callable[[str], bool] | None = None
    """Ends the generation (finish reason ``repetition``) once this returns ``True`` for the text so far; asked
    after each new piece of text (a planner's test for a plan that has started over)."""

    def __post_init__(self) -> None:
        # A negative temperature or a top_p outside (0, 1] would fail deep inside generate: say so here.
        if isinstance(self.temperature, bool) or not self.temperature >= 0:
            raise ValueError(f"temperature must be a number >= 0 (0: greedy), got {self.temperature!r}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if isinstance(self.repeat_penalty, bool) or not 1 <= self.repeat_penalty <= 2:
            raise ValueError(f"repeat_penalty must be a number from 1 (none) to 2, got {self.repeat_penalty!r}")

    @property
    def sampling(self) -> bool:
        """Whether this call samples (a temperature above 0) rather than decoding greedily."""
        return self.temperature > 0


class LocalDecoding(BaseModel):
    """The decoding settings both local chat models share (:class:`~planwerk.models.hf.HFChatModel`,
    :class:`~planwerk.models.llamacpp.LlamaCppChatModel`), the ``with_…`` variants that change them on a copy (the
    weights and caches stay shared), and the :class:`GenerationOptions` of one call. A mixin: each model binds plan
    schemas and grammars itself, since each backend checks them its own way."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    plan_schema: dict[str, Any] | None = None
    """When set (``with_plan_schema``) and :attr:`constrained_decoding` is on, output follows it."""
    plan_grammar: str | None = None
    """When set (``with_plan_grammar``) and :attr:`constrained_decoding` is on, output follows this EBNF grammar (a
    bound :attr:`plan_schema` wins)."""
    constrained_decoding: bool = True
    """``False`` keeps decoding free even when a plan schema or grammar is bound (to compare, or to debug)."""
    use_prefix_cache: bool = True
    repetition: RepetitionPolicy = Field(default_factory=RepetitionPolicy)
    temperature: float | None = None
    """``None`` or 0 (the default) decodes greedily; see :meth:`with_sampling`. A ``temperature`` call kwarg
    overrides it. (ChatHuggingFace has the field too; this one, first in the MRO, reaches the local generation.)"""
    top_p: float | None = None
    """Nucleus cut-off while sampling; ``None`` keeps the whole distribution. A ``top_p`` call kwarg overrides it."""
    stop_when: Callable[[str], bool] | None = Field(default=None, exclude=True, repr=False)
    """When set (see :meth:`with_text_stop`), a reply ends once this holds for its text so far."""
    seed: int | None = None
    """Seed of a sampling call (reproducible replies); ``None`` draws a fresh one."""
    repeat_penalty: float = 1.0
    """Penalty on tokens the reply already produced (see :meth:`with_repeat_penalty`); 1.0 is none."""

    def with_sampling(self, temperature: float, *, seed: int | None = None, top_p: float | None = None) -> Self:
        """The same model (shared weights and caches) sampling at ``temperature`` (0: greedy again), seeded with
        ``seed`` for reproducible replies; a bound plan schema still applies (sampling among valid tokens).

        LangChain's ``model.bind(temperature=..., seed=...)`` does the same per call.
        """
        GenerationOptions(temperature=temperature, top_p=top_p)  # a bad value fails here, not mid-graph
        return self.model_copy(update={"temperature": float(temperature), "seed": seed, "top_p": top_p})

    def with_repeat_penalty(self, penalty: float) -> Self:
        """The same model (shared weights and caches) penalizing tokens its reply already produced by ``penalty``
        (1.0: none): the prompt's tokens are not penalized, so values copied from it cost nothing, while a reply
        that goes round in a loop does."""
        GenerationOptions(repeat_penalty=penalty)  # a bad value fails here, not mid-graph
        return self.model_copy(update={"repeat_penalty": float(penalty)})

    def with_text_stop(self, stop_when: Callable[[str], bool]) -> Self:
        """The same model (shared weights and caches), ending each reply once ``stop_when`` holds for its text so
        far (finish reason ``repetition``): the planner's stop for a plan that starts over."""
        return self.model_copy(update={"stop_when": stop_when})

    def with_free_decoding(self) -> Self:
        """The same model with constrained decoding switched off."""
        return self.model_copy(update={"constrained_decoding": False})

    def _options(self, stop: list[str] | None, kwargs: Mapping[str, Any]) -> GenerationOptions:
        """One call's options: the model's settings, overridden by the call's ``max_new_tokens``, ``schema``,
        ``grammar``, ``temperature``, ``top_p``, ``seed`` and ``repeat_penalty`` kwargs."""
        schema = self.plan_schema if self.constrained_decoding else None
        grammar = self.plan_grammar if self.constrained_decoding else None
        return GenerationOptions(
            max_new_tokens=int(kwargs.get("max_new_tokens", self.max_new_tokens)),
            schema=kwargs.get("schema", schema),
            grammar=kwargs.get("grammar", grammar),
            use_prefix_cache=self.use_prefix_cache,
            stop=tuple(stop or ()),
            repetition=self.repetition,
            temperature=float(kwargs.get("temperature", self.temperature) or 0.0),
            top_p=kwargs.get("top_p", self.top_p),
            seed=kwargs.get("seed", self.seed),
            repeat_penalty=float(kwargs.get("repeat_penalty", self.repeat_penalty)),
            stop_when=self.stop_when,
        )


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

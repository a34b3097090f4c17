"""The model seam: planwerk talks to any langchain-core chat model.

A model that can constrain its decoding to a JSON schema implements :class:`SupportsPlanSchema`; the planner
then asks it for a variant bound to the schema of valid plans for the loaded tools. One that can decode under an
EBNF grammar implements :class:`SupportsPlanGrammar`, for plans written as expressions. One that decodes in this
process implements :class:`SupportsTextStop`, so the planner can end a reply that has started over (a plan that
repeats a call it has already written) instead of decoding it to the token limit. A model that can sample
implements :class:`SupportsSampling`; :func:`sampling_variant` also covers LangChain models with a ``temperature``
field (``bind(temperature=...)``), so a retried plan is not decoded greedily into the reply that was just rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig


@runtime_checkable
class SupportsPlanSchema(Protocol):
    """A chat model that can generate under a JSON schema (constrained decoding)."""

    def with_plan_schema(self, schema: Mapping[str, Any]) -> BaseChatModel:
        """A model that generates only text matching ``schema`` (the same model, differently bound)."""
        ...


@runtime_checkable
class SupportsPlanGrammar(Protocol):
    """A chat model that can generate under an EBNF grammar (constrained decoding of expression plans)."""

    def with_plan_grammar(self, grammar: str) -> BaseChatModel:
        """A model that generates only text the EBNF ``grammar`` admits (the same model, differently bound)."""
        ...


@runtime_checkable
class SupportsTextStop(Protocol):
    """A chat model that can end a reply early when its text so far meets a condition (a local decode loop)."""

    def with_text_stop(self, stop_when: Callable[[str], bool]) -> BaseChatModel:
        """The same model, ending each reply (finish reason ``repetition``) once ``stop_when`` returns ``True`` for
        the text decoded so far; it is asked after each new piece of text, so it must be cheap."""
        ...


@runtime_checkable
class SupportsRepeatPenalty(Protocol):
    """A chat model that can penalize tokens its reply already produced (a local decode loop)."""

    def with_repeat_penalty(self, penalty: float) -> BaseChatModel:
        """The same model, dividing a positive logit (multiplying a negative one) by ``penalty`` for each token its
        reply produced lately; the prompt's tokens are not penalized (1.0: none)."""
        ...


@runtime_checkable
class SupportsSampling(Protocol):
    """A chat model that can decode with a temperature instead of greedily."""

    def with_sampling(
        self, temperature: float, *, seed: int | None = None, top_p: float | None = None
    ) -> Runnable[Any, Any]:
        """The same model, sampling at ``temperature`` (0: greedy) from a generator seeded with ``seed`` (``None``:
        not reproducible), among the most likely tokens that together hold ``top_p`` of the probability (``None``:
        all of them)."""
        ...


def sampling_variant(
    model: Runnable[Any, Any], temperature: float, *, seed: int | None = None, top_p: float | None = None
) -> Runnable[Any, Any]:
    """``model`` decoding at ``temperature`` (with the nucleus cut-off ``top_p``, ``None``: none) where it can: its
    own :meth:`SupportsSampling.with_sampling`, else LangChain's ``bind`` for a model with a ``temperature`` field
    (OpenAI-compatible endpoints; ``seed`` and ``top_p`` too where the model has those fields), else ``model``
    unchanged (it decodes as it always does)."""
    if isinstance(model, SupportsSampling):
        return model.with_sampling(temperature, seed=seed, top_p=top_p)
    fields = getattr(type(model), "model_fields", {})
    if "temperature" not in fields:
        return model
    options: dict[str, Any] = {"temperature": temperature}
    if seed is not None and "seed" in fields:
        options["seed"] = seed
    if top_p is not None and "top_p" in fields:
        options["top_p"] = top_p
    return model.bind(**options)


@runtime_checkable
class SupportsBatchSampling(Protocol):
    """A chat model that samples several replies to one prompt in one batched generation."""

    async def asample(
        self, messages: list[BaseMessage], n: int, *, temperature: float, seed: int | None = None
    ) -> Sequence[BaseMessage]:
        """``n`` replies sampled at ``temperature`` (seeded with ``seed``)."""
        ...


async def sample_replies(
    model: Runnable[Any, Any],
    messages: list[BaseMessage],
    n: int,
    *,
    temperature: float,
    seed: int = 0,
    config: RunnableConfig | None = None,
) -> list[BaseMessage]:
    """``n`` sampled replies: one batched generation where the model supports it
    (:class:`SupportsBatchSampling`), else ``n`` calls of :func:`sampling_variant` seeded ``seed``, ``seed + 1``, …
    (an endpoint or a replay model)."""
    if isinstance(model, SupportsBatchSampling):
        return list(await model.asample(messages, n, temperature=temperature, seed=seed))
    replies = []
    for index in range(n):
        replies.append(await sampling_variant(model, temperature, seed=seed + index).ainvoke(messages, config=config))
    return replies

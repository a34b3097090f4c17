"""A local transformers model as a LangChain chat model: ChatHuggingFace over HuggingFacePipeline, extended.

ChatHuggingFace's local-pipeline path (langchain-huggingface 1.2) reports no token usage, raises
``NotImplementedError`` for async generation and cannot take a KV cache or a fresh logits processor per call.
:class:`HFChatModel` keeps ChatHuggingFace's interface (``llm``, ``tokenizer``, ``model_id``) but generates
through :class:`HFRuntime`, which adds:

- greedy decoding with a bounded ``max_new_tokens`` and a stop on repetition loops; sampling with a temperature
  and a seed per call (:meth:`HFChatModel.with_sampling`, or ``temperature=``/``seed=`` as call kwargs, e.g. through
  ``model.bind(temperature=0.7)``),
- ``usage_metadata`` (input/output/total tokens) and timing in ``response_metadata``,
- token streaming (``_stream``/``_astream`` with ``TextIteratorStreamer``), so LangGraph's
  ``stream_mode="messages"`` receives token chunks,
- constrained decoding to a JSON schema with xgrammar (:meth:`HFChatModel.with_plan_schema`),
- reuse of the KV cache of the static system prefix (:mod:`planwerk.models.prefix_cache`).

Generation on one model is serialised by a lock: on a 2-core CPU, parallel generate calls only fight for cores.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_huggingface import ChatHuggingFace
from pydantic import ConfigDict, Field

from planwerk.models.constrained import GrammarCache
from planwerk.models.generation import (
    DEFAULT_MAX_NEW_TOKENS,
    REPEAT_PENALTY_LAST_N,
    Generation,
    GenerationOptions,
    LocalDecoding,
    message_dicts,
)
from planwerk.models.prefix_cache import PrefixCache, cache_keyword
from planwerk.models.stopping import CancelStop, RepetitionStop, TextStop

log = logging.getLogger(__name__)

STREAM_TOKEN_TIMEOUT_S = 300.0
"""Longest wait for the next streamed piece (covers the prefill of a long prompt on a slow CPU)."""


class _Timing:
    """A no-op logits processor that records when the first and last tokens were chosen."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        self.last = now
        return scores


class ReplyRepeatPenalty:
    """A logits processor penalizing the tokens this reply produced lately (the last
    :data:`~planwerk.models.generation.REPEAT_PENALTY_LAST_N`), as llama.cpp's repeat penalty does; transformers' own
    ``repetition_penalty`` also penalizes the prompt's tokens, which would make copying a value from it cost."""

    def __init__(self, prompt_tokens: int, penalty: float) -> None:
        self.prompt_tokens = prompt_tokens
        self.penalty = penalty

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        produced = input_ids[:, self.prompt_tokens :][:, -REPEAT_PENALTY_LAST_N:]
        if produced.shape[1] == 0:
            return scores
        seen = torch.gather(scores, 1, produced)
        penalized = torch.where(seen > 0, seen / self.penalty, seen * self.penalty)
        return scores.scatter(1, produced, penalized)


class HFRuntime:
    """The loaded model and tokenizer plus the state shared by every bound variant of a chat model."""

    def __init__(self, model: Any, tokenizer: Any, *, prefix_cache_entries: int = 4) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = next(model.parameters()).device
        config_eos = model.generation_config.eos_token_id
        eos = set(config_eos if isinstance(config_eos, list) else [config_eos] if config_eos is not None else [])
        if tokenizer.eos_token_id is not None:
            eos.add(tokenizer.eos_token_id)
        self.stop_token_ids: tuple[int, ...] = tuple(sorted(eos))
        pad = model.generation_config.pad_token_id
        self.pad_token_id: int = pad if pad is not None else self.stop_token_ids[0]
        self.prefix_cache = PrefixCache(model, max_entries=prefix_cache_entries)
        self.grammars = GrammarCache(tokenizer, model.config.vocab_size, self.stop_token_ids)
        self._lock = threading.Lock()

    def prompt_ids(self, messages: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
        """The token ids of the whole prompt and of its static prefix (the leading system messages, rendered
        alone); the prefix is empty when it is not a token-exact prefix of the prompt."""
        tokenizer = self.tokenizer
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        n_system = 0
        while n_system < len(messages) and messages[n_system]["role"] == "system":
            n_system += 1
        if n_system == 0 or n_system == len(messages):
            return ids, []
        prefix = tokenizer.apply_chat_template(messages[:n_system], tokenize=False, add_generation_prompt=False)
        if not prompt.startswith(prefix):
            return ids, []
        prefix_ids = list(tokenizer(prefix, add_special_tokens=False)["input_ids"])
        if len(prefix_ids) >= len(ids) or ids[: len(prefix_ids)] != prefix_ids:
            return ids, []  # the template or tokenizer merges across the boundary: no safe reuse
        return ids, prefix_ids

    def generate(
        self,
        messages: list[dict[str, Any]],
        options: GenerationOptions = GenerationOptions(),  # noqa: B008  (frozen: a shared default is safe)
        *,
        streamer: Any = None,
        cancel: threading.Event | None = None,
    ) -> Generation:
        """Generation for chat ``messages``, greedy or sampled (``options``); blocks (run it in a worker thread
        from async code)."""
        return self.generate_samples(messages, options, 1, streamer=streamer, cancel=cancel)[0]

    def generate_samples(
        self,
        messages: list[dict[str, Any]],
        options: GenerationOptions,
        n: int,
        *,
        streamer: Any = None,
        cancel: threading.Event | None = None,
    ) -> list[Generation]:
        """``n`` generations of one prompt in one batched ``generate`` call (``num_return_sequences``): the
        prompt is prefilled once and the ``n`` sequences decode together, which on a CPU costs little more than
        one (decoding is bound by reading the weights). ``n > 1`` needs a sampling ``options`` (a temperature);
        the prefix cache is not used then (its entry holds one sequence). Blocks."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        if n < 1 or (n > 1 and not options.sampling):
            raise ValueError(f"{n} samples need n >= 1 and, for n > 1, a temperature above 0")
        ids, prefix_ids = self.prompt_ids(messages)
        timing = _Timing()
        processors = LogitsProcessorList([timing])
        if options.schema is not None:
            processors.append(self.grammars.logits_processor(options.schema))
        elif options.grammar is not None:
            processors.append(self.grammars.logits_processor(ebnf=options.grammar))
        if options.repeat_penalty != 1.0:
            processors.append(ReplyRepeatPenalty(len(ids), options.repeat_penalty))
        repetition = RepetitionStop(len(ids), options.repetition)
        criteria = StoppingCriteriaList([repetition])
        if cancel is not None:
            criteria.append(CancelStop(cancel))
        text_stop = TextStop(len(ids), self.tokenizer, options.stop_when) if options.stop_when is not None else None
        if text_stop is not None:
            criteria.append(text_stop)
        sampling: dict[str, Any] = {"do_sample": False}
        if options.sampling:
            # top_k off: only temperature (and top_p when asked) shape the distribution; the grammar's mask comes
            # first in transformers' processor order, so a sampled token is always one the grammar allows.
            sampling = {"do_sample": True, "temperature": options.temperature, "top_k": None, "top_p": options.top_p}
        config = GenerationConfig(
            max_new_tokens=options.max_new_tokens,
            **sampling,
            num_return_sequences=n,
            eos_token_id=list(self.stop_token_ids),
            pad_token_id=self.pad_token_id,
            stop_strings=list(options.stop) or None,
        )
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
        extra: dict[str, Any] = {"tokenizer": self.tokenizer} if options.stop else {}
        with self._lock:
            started = time.perf_counter()
            past = None
            if options.use_prefix_cache and prefix_ids and n == 1:
                past = self.prefix_cache.past_for(prefix_ids)
            cached = len(prefix_ids) if past is not None else 0
            if options.sampling and options.seed is not None:
                torch.manual_seed(options.seed)  # under the lock: no other generation draws in between
            with torch.no_grad():
                output = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    generation_config=config,
                    logits_processor=processors,
                    stopping_criteria=criteria,
                    streamer=streamer,
                    **{cache_keyword(self.model): past},
                    **extra,
                )
            ended = time.perf_counter()
        first = timing.first or ended
        last = timing.last or ended
        generations = []
        for row in output:
            new_ids = self._until_stop(row[len(ids) :].tolist())
            text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
            for stop in options.stop:
                if stop in text:
                    text = text[: text.index(stop)]
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
            elif (
                (repetition.triggered or (text_stop is not None and text_stop.triggered))
                and len(new_ids) < options.max_new_tokens
                and not self._ended(new_ids)
            ):
                reason = "repetition"
            elif self._ended(new_ids) or len(new_ids) < options.max_new_tokens:
                reason = "stop"  # an end token, or a stop string cut the generation short
            else:
                reason = "length"
            generations.append(
                Generation(
                    text=text,
                    input_tokens=len(ids),
                    output_tokens=len(new_ids),
                    finish_reason=reason,
                    cached_prefix_tokens=cached,
                    prefill_s=first - started,
                    decode_s=max(last - first, 0.0),
                )
            )
        return generations

    def _ended(self, new_ids: list[int]) -> bool:
        return bool(new_ids) and new_ids[-1] in self.stop_token_ids

    def _until_stop(self, new_ids: list[int]) -> list[int]:
        """A batched row up to and including its first end token (later tokens are padding)."""
        for index, token in enumerate(new_ids):
            if token in self.stop_token_ids:
                return new_ids[: index + 1]
        return new_ids


class HFChatModel(LocalDecoding, ChatHuggingFace):
    """ChatHuggingFace for a local model, with usage, streaming, constrained decoding and prefix caching.

    Build it with :func:`build_hf_chat_model` (or ``planwerk.models.specs.load_chat_model``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    runtime: Any = Field(default=None, exclude=True, repr=False)
    """The shared :class:`HFRuntime` (model, tokenizer, caches)."""

    @property
    def _llm_type(self) -> str:
        return "planwerk-huggingface-local"

    def with_plan_schema(self, schema: Mapping[str, Any]) -> HFChatModel:
        """The same model (shared weights and caches), generating only JSON that matches ``schema``."""
        runtime: HFRuntime = self.runtime
        if self.constrained_decoding:
            runtime.grammars.compiled(schema)  # compile now: a bad schema fails here, not mid-graph
        return self.model_copy(update={"plan_schema": dict(schema)})

    def with_plan_grammar(self, grammar: str) -> HFChatModel:
        """The same model (shared weights and caches), generating only text the EBNF ``grammar`` admits."""
        runtime: HFRuntime = self.runtime
        if self.constrained_decoding:
            runtime.grammars.compiled_ebnf(grammar)  # compile now: a bad grammar fails here, not mid-graph
        return self.model_copy(update={"plan_grammar": grammar})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        stream: bool | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(self.runtime.generate(message_dicts(messages), self._options(stop, kwargs)))

    def _result(self, *generations: Generation) -> ChatResult:
        chats = []
        for generation in generations:
            message = AIMessage(
                content=generation.text,
                usage_metadata=generation.usage,
                response_metadata={"model_name": self.model_id, **generation.metadata},
            )
            chats.append(ChatGeneration(message=message, generation_info=generation.metadata))
        return ChatResult(generations=chats)

    async def asample(
        self, messages: list[BaseMessage], n: int, *, temperature: float, seed: int | None = None
    ) -> list[AIMessage]:
        """``n`` sampled replies to one prompt from one batched generation (see
        :meth:`HFRuntime.generate_samples`); a bound plan schema applies to each. Cancelling the awaiting
        coroutine stops the generation at the next token."""
        model = self.with_sampling(temperature, seed=seed, top_p=self.top_p)
        cancel = threading.Event()
        dicts, options = message_dicts(messages), model._options(None, {})
        try:
            generations = await asyncio.to_thread(self.runtime.generate_samples, dicts, options, n, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        return [generation.message for generation in model._result(*generations).generations]  # type: ignore[misc]

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        stream: bool | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Generation blocks, so it runs in a worker thread (ChatHuggingFace raises here instead). Cancelling this
        # coroutine does not stop a thread: the event does, at the next token (CancelStop).
        cancel = threading.Event()
        dicts, options = message_dicts(messages), self._options(stop, kwargs)
        try:
            generation = await asyncio.to_thread(self.runtime.generate, dicts, options, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        return self._result(generation)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        return self._stream_until(threading.Event(), messages, stop, **kwargs)

    def _stream_until(
        self, cancel: threading.Event, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        """The chunks of one generation; setting ``cancel`` ends it at the next token."""
        from transformers import TextIteratorStreamer

        runtime: HFRuntime = self.runtime
        dicts = message_dicts(messages)
        options = self._options(stop, kwargs)
        streamer = TextIteratorStreamer(
            runtime.tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=STREAM_TOKEN_TIMEOUT_S
        )
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["generation"] = runtime.generate(dicts, options, streamer=streamer, cancel=cancel)
            except BaseException as exc:  # handed to the consuming thread below
                outcome["error"] = exc
                streamer.end()

        worker = threading.Thread(target=work, name="planwerk-generate", daemon=True)
        worker.start()
        finished = False
        try:
            for piece in streamer:
                if piece:
                    yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
            finished = True
        finally:
            if not finished:
                cancel.set()  # the consumer stopped early: end the generation at the next token
            worker.join()
        if "error" in outcome:
            raise outcome["error"]
        generation: Generation = outcome["generation"]
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=generation.usage,
                response_metadata={"model_name": self.model_id, **generation.metadata},
                chunk_position="last",
            ),
            generation_info=generation.metadata,
        )

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        # The sync stream, driven from worker threads as BaseChatModel's default does (ChatHuggingFace's needs a
        # server), plus what the default lacks: when this coroutine is cancelled or closed early, the event ends
        # the generation at the next token instead of letting the thread run to max_new_tokens.
        cancel = threading.Event()
        chunks = self._stream_until(cancel, messages, stop, **kwargs)
        done = object()
        finished = False
        try:
            while (chunk := await asyncio.to_thread(next, chunks, done)) is not done:
                yield chunk
            finished = True
        finally:
            if not finished:
                cancel.set()


def build_hf_chat_model(
    model: Any, tokenizer: Any, *, model_id: str, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
) -> HFChatModel:
    """Wrap a loaded transformers model and tokenizer (a text-generation pipeline underneath)."""
    from langchain_huggingface import HuggingFacePipeline
    from transformers import pipeline

    text_generation = pipeline(
        "text-generation",
        model=model,
        tokenizer=tokenizer,
        max_new_tokens=max_new_tokens,
        do_sample=False,
        return_full_text=False,
    )
    llm = HuggingFacePipeline(pipeline=text_generation, model_id=model_id)
    return HFChatModel(
        llm=llm,
        tokenizer=tokenizer,
        model_id=model_id,
        runtime=HFRuntime(model, tokenizer),
        max_new_tokens=max_new_tokens,
    )

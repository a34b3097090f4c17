"""A GGUF model on the CPU through llama.cpp in this process (llama-cpp-python), as a LangChain chat model.

The weights stay quantized (Q4_K_M: about a third of bf16's bytes per decoded token, and decoding reads every
weight once), where transformers de-quantizes them. :class:`LlamaCppChatModel` offers what
:class:`planwerk.models.hf.HFChatModel` offers: greedy or sampled decoding with a stop on repetition loops, usage
counts and timings, token streaming, constrained decoding (a JSON schema through llama.cpp's converter, an EBNF
grammar as GBNF: :mod:`planwerk.models.gbnf`), and cancellation: a cancelled call ends at the next token, and
inside a prompt's evaluation through llama.cpp's abort callback (checked while the graph computes; it is off while
single tokens are decoded, since it enters Python after every operation of the graph).

The decode loop is planwerk's own (:meth:`LlamaCppRuntime._decode`) over llama-cpp-python's sampler chain: a greedy
step takes the arg-max and asks a grammar about that one token, masking the whole vocabulary only when the grammar
refuses it; the tokens are those of ``Llama.generate`` (``python -m benchmarks decode`` pairs the two loops).

Prompt caching outlives a call (:class:`StateCache`): the static prefix of a prompt (its leading system messages:
persona, protocol, catalog, examples) is evaluated once per process and its KV state kept; after every call the
state of the whole sequence (prompt and reply) is kept as well, so the next turn of a conversation starts from its
longest cached prefix. llama.cpp's context holds one sequence; a call whose prompt shares more with a kept state
than with the context restores that state (``llama_state_seq_set_data``) and evaluates only the rest.

Generation on one model is serialised by a lock (one context; on a 2-core CPU parallel calls only fight for cores).
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import logging
import os
import queue
import random
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field

from planwerk.home import planwerk_home
from planwerk.models.gbnf import GrammarConversionError, ebnf_gbnf, json_schema_gbnf
from planwerk.models.generation import (
    DEFAULT_MAX_NEW_TOKENS,
    REPEAT_PENALTY_LAST_N,
    Generation,
    GenerationOptions,
    LocalDecoding,
    message_dicts,
)
from planwerk.models.llama_cpp_lib import import_llama_cpp
from planwerk.models.prefix_cache import common_prefix_length
from planwerk.models.state_store import StateStore, StoredState, model_key
from planwerk.models.stopping import repeating_period

log = logging.getLogger(__name__)

DEFAULT_N_CTX = 16384
"""Context length: the catalog is capped at 12,000 tokens (``Context.catalog_max_tokens``) plus the rest of a prompt."""
STREAM_PIECE_TIMEOUT_S = 300.0
"""Longest wait for the next streamed piece (covers a long prompt's evaluation on a slow, busy CPU)."""


@dataclass(frozen=True)
class CachedState:
    """The KV state of one sequence of tokens."""

    tokens: tuple[int, ...]
    data: bytes


@dataclass(frozen=True)
class StateCacheStats:
    """Counters for the benchmark and logs."""

    restores: int
    prefix_builds: int
    entries: int
    bytes: int
    disk_loads: int = 0
    """Static prefixes read from the :class:`~planwerk.models.state_store.StateStore` instead of evaluated."""


class StateCache:
    """An LRU of KV states by token sequence, bounded in entries and bytes; :meth:`best` finds the state that shares
    the longest prefix with a prompt. Not thread-safe on its own: the runtime's lock guards it."""

    def __init__(self, max_entries: int = 8, max_bytes: int = 1 << 30) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[int, ...], CachedState] = OrderedDict()
        self.restores = 0
        self.prefix_builds = 0
        self.disk_loads = 0

    @property
    def stats(self) -> StateCacheStats:
        """Restores, prefix builds, entries and bytes held, prefixes read from disk."""
        size = sum(len(entry.data) for entry in self._entries.values())
        return StateCacheStats(self.restores, self.prefix_builds, len(self._entries), size, self.disk_loads)

    def clear(self) -> None:
        """Drop every kept state."""
        self._entries.clear()

    def put(self, state: CachedState) -> None:
        """Keep ``state`` (the newest); older entries go when a bound is passed."""
        self._entries.pop(state.tokens, None)
        self._entries[state.tokens] = state
        while len(self._entries) > self.max_entries or (
            len(self._entries) > 1 and sum(len(e.data) for e in self._entries.values()) > self.max_bytes
        ):
            self._entries.popitem(last=False)

    def best(self, tokens: Sequence[int]) -> tuple[CachedState | None, int]:
        """The kept state sharing the longest prefix with ``tokens``, and that length (``None, 0`` when none)."""
        found, length = None, 0
        for entry in self._entries.values():
            shared = common_prefix_length(entry.tokens, tokens)
            if shared > length:
                found, length = entry, shared
        if found is not None:
            self._entries.move_to_end(found.tokens)
        return found, length

    def holds(self, tokens: Sequence[int]) -> bool:
        """Whether some kept state starts with all of ``tokens``."""
        return self.best(tokens)[1] >= len(tokens)


class LlamaCppRuntime:
    """The loaded llama.cpp model and context plus what every bound variant of a chat model shares."""

    def __init__(
        self,
        llama: Any,
        *,
        state_cache: StateCache | None = None,
        state_store: StateStore | None = None,
        min_prefix_tokens: int = 32,
    ) -> None:
        llama_cpp = import_llama_cpp()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llama = llama
        self.states = state_cache or StateCache()
        self.store = state_store
        """Static prefixes' states on disk, shared by processes (``None``: kept in this process only)."""
        self.min_prefix_tokens = min_prefix_tokens
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError("the GGUF has no chat template (tokenizer.chat_template); expected an instruct model")
        vocab = llama._model.vocab
        self._vocab = vocab
        eos = llama.token_eos()
        bos = llama.token_bos()
        text = lambda token: llama.detokenize([token], special=True).decode("utf-8", "replace")  # noqa: E731
        eos_text, bos_text = (text(eos) if eos >= 0 else ""), (text(bos) if bos >= 0 else "")
        self._chat = Jinja2ChatFormatter(template, eos_text, bos_text, add_generation_prompt=True)
        self._prefix = Jinja2ChatFormatter(template, eos_text, bos_text, add_generation_prompt=False)
        self._is_end = lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))
        self._lock = threading.Lock()
        self._cancel: threading.Event | None = None
        # ctypes keeps no reference to a callback: this attribute does, for the context's lifetime.
        self._abort = llama_cpp.ggml_abort_callback(lambda _data: bool(self._cancel and self._cancel.is_set()))
        llama_cpp.llama_set_abort_callback(llama._ctx.ctx, self._abort, None)
        self._grammars: dict[str, Any] = {}
        self.last: Generation | None = None
        """The most recent generation (its finish reason and counts), for status and tests."""

    @property
    def prefix_cache(self) -> StateCache:
        """The kept KV states (the name :class:`planwerk.models.hf.HFRuntime` gives its prefix cache)."""
        return self.states

    # --- prompts -------------------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """The token ids of ``text`` (special tokens such as ``<|im_start|>`` read as such, no BOS added: the chat
        template writes it where the model wants one)."""
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def prompt_ids(self, messages: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
        """The token ids of the whole prompt and of its static prefix (the leading system messages, rendered
        alone); the prefix is empty when it is not a token-exact prefix of the prompt."""
        prompt = self._chat(messages=messages).prompt
        ids = self.tokenize(prompt)
        n_system = 0
        while n_system < len(messages) and messages[n_system]["role"] == "system":
            n_system += 1
        if n_system == 0 or n_system == len(messages):
            return ids, []
        prefix = self._prefix(messages=messages[:n_system]).prompt
        if not prompt.startswith(prefix):
            return ids, []
        prefix_ids = self.tokenize(prefix)
        if len(prefix_ids) >= len(ids) or ids[: len(prefix_ids)] != prefix_ids:
            return ids, []  # the template or tokenizer merges across the boundary: no safe reuse
        return ids, prefix_ids

    # --- grammars ------------------------------------------------------------------------------------------------
    def grammar(self, schema: Mapping[str, Any] | None = None, *, ebnf: str | None = None) -> Any:
        """The ``LlamaGrammar`` for a JSON schema or an EBNF grammar (exactly one), converted and checked by
        llama.cpp's parser once (cached); raises :class:`GrammarConversionError` for one it refuses."""
        import json

        from llama_cpp import LlamaGrammar

        if (schema is None) == (ebnf is None):
            raise ValueError("grammar takes a JSON schema or an EBNF grammar, exactly one")
        key = "json:" + json.dumps(schema, sort_keys=False) if schema is not None else "ebnf:" + (ebnf or "")
        cached = self._grammars.get(key)
        if cached is None:
            text = json_schema_gbnf(schema) if schema is not None else ebnf_gbnf(ebnf or "")
            self._check(text)
            cached = LlamaGrammar.from_string(text, verbose=False)
            if len(self._grammars) >= 32:
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = cached
        return cached

    def _check(self, gbnf: str) -> None:
        """Parse ``gbnf`` with llama.cpp; a grammar it refuses would put a null sampler into the chain (a crash)."""
        import llama_cpp

        sampler = llama_cpp.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            first = gbnf.splitlines()[0] if gbnf else ""
            raise GrammarConversionError(
                f"llama.cpp's grammar parser refuses the grammar (first rule: {first[:120]!r}); expected GBNF"
            )
        llama_cpp.llama_sampler_free(sampler)

    # --- KV state ------------------------------------------------------------------------------------------------
    def _context_tokens(self) -> list[int]:
        return [int(token) for token in self.llama.input_ids[: self.llama.n_tokens]]

    def _save(self) -> CachedState:
        import llama_cpp

        ctx = self.llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        return CachedState(tuple(self._context_tokens()), bytes(buffer[:written]))

    def _restore(self, state: CachedState) -> None:
        import llama_cpp

        llama = self.llama
        llama.reset()
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        data = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
        if not llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, data, len(state.data), 0):
            llama.reset()
            raise RuntimeError("llama.cpp could not restore a cached KV state")
        llama.input_ids[: len(state.tokens)] = state.tokens
        llama.n_tokens = len(state.tokens)
        llama._requires_eval = True  # the logits are not restored: generate evaluates at least one token
        self.states.restores += 1

    def _advance_to(self, tokens: Sequence[int]) -> None:
        """Bring the context to exactly ``tokens``, keeping what it shares with them."""
        llama = self.llama
        shared = common_prefix_length(self._context_tokens(), tokens)
        llama._ctx.kv_cache_seq_rm(-1, shared, -1)
        llama.n_tokens = shared
        if shared < len(tokens):
            llama.eval(list(tokens[shared:]))

    def _prepare(self, ids: Sequence[int], prefix_ids: Sequence[int], use_cache: bool) -> int:
        """Put the best cached state into the context and make sure the static prefix is cached; the number of
        prompt tokens that need no evaluation."""
        if not use_cache:  # a cold prompt: nothing kept, not even the context's last sequence
            self.llama.reset()
            self.llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            return 0
        wanted_prefix = len(prefix_ids) >= self.min_prefix_tokens
        if wanted_prefix and self.store is not None and not self.states.holds(prefix_ids):
            stored = self.store.load(prefix_ids)
            if stored is not None:
                self.states.put(CachedState(stored.tokens, stored.data))
                self.states.disk_loads += 1
        shared = common_prefix_length(self._context_tokens(), ids)
        state, length = self.states.best(ids)
        if state is not None and length > shared:
            self._restore(state)
            shared = length
        if wanted_prefix and not self.states.holds(prefix_ids):
            started = time.perf_counter()
            self._advance_to(prefix_ids)
            built = self._save()
            self.states.put(built)
            self.states.prefix_builds += 1
            if self.store is not None:
                self.store.save(StoredState(built.tokens, built.data))
            shared = max(shared, len(prefix_ids))
            log.info("cached a %d-token prompt prefix in %.2f s", len(prefix_ids), time.perf_counter() - started)
        return min(shared, len(ids))

    # --- generation ----------------------------------------------------------------------------------------------
    def _abortable(self, on: bool) -> None:
        """Let llama.cpp ask :attr:`_cancel` between the graph's operations (``on``) or not at all.

        The abort callback is a Python function: the compute thread takes the GIL to call it after every operation
        of the graph (about 560 a decoded token of the 0.5B model), while the other threads wait at the barrier
        that follows, and longer when another Python thread holds the GIL (an event loop, a streaming consumer).
        A prompt's evaluation needs it (one call may take seconds); a decoded token is one short evaluation, and
        the decode loop checks the event between tokens."""
        import llama_cpp

        callback = self._abort if on else llama_cpp.ggml_abort_callback()  # an empty one: a null pointer
        llama_cpp.llama_set_abort_callback(self.llama._ctx.ctx, callback, None)

    def _evaluate_prompt(self, ids: Sequence[int]) -> None:
        """Bring the context to ``ids`` with the logits of their last token, as ``Llama.generate`` does: keep the
        prefix the context shares with them and evaluate the rest (at least the last token, unless the context
        holds exactly ``ids`` with their logits from a live evaluation)."""
        llama = self.llama
        tokens = list(ids)
        reset = True
        if llama.n_tokens > 0:
            shared = common_prefix_length(self._context_tokens(), tokens)
            consumed = shared == len(tokens)
            keep = shared - 1 if consumed else shared
            if consumed and llama.n_tokens == len(tokens) and not llama._requires_eval:
                reset, tokens, keep = False, [], 0
            if keep > 0 and llama._ctx.kv_cache_seq_rm(-1, keep, -1):
                reset, tokens = False, tokens[keep:]
                llama.n_tokens = keep
                llama._requires_eval = True
        if reset:
            llama.reset()
        llama.eval(tokens)

    def _decode(self, ids: Sequence[int], options: GenerationOptions, grammar: Any) -> Iterator[int]:
        """The tokens that follow the prompt ``ids``, one at a time, each evaluated when the next is asked for.

        The sampler chain is llama-cpp-python's own for these settings (the same tokens as ``Llama.generate``).
        A greedy step first takes the logits' arg-max and asks only the grammar whether it admits that one token;
        the chain masks the whole vocabulary (151,936 entries for Qwen, several ms a token) only when it does not.
        The result is the same token: the greedy sampler also takes the first maximum, and masking only removes
        candidates."""
        import llama_cpp
        import numpy as np

        llama = self.llama
        self._evaluate_prompt(ids)
        # The chain's penalty looks back on the tokens it accepted: this reply's, never the prompt's.
        chain = llama._init_sampler(
            top_k=0,
            top_p=options.top_p if options.top_p is not None else 1.0,
            min_p=0.0,
            temp=options.temperature,
            repeat_penalty=options.repeat_penalty,
            grammar=grammar,
        )
        penalty = options.repeat_penalty
        produced: deque[int] = deque(maxlen=REPEAT_PENALTY_LAST_N)
        checker = None
        if grammar is not None:
            for index in range(llama_cpp.llama_sampler_chain_n(chain.sampler)):
                sampler = llama_cpp.llama_sampler_chain_get(chain.sampler, index)
                if llama_cpp.llama_sampler_name(sampler) == b"grammar":
                    checker = sampler
        ctx, n_vocab = llama._ctx.ctx, llama.n_vocab()
        one = llama_cpp.llama_token_data()
        candidate = llama_cpp.llama_token_data_array(ctypes.pointer(one), 1, -1, False)
        self._abortable(False)
        try:
            while True:
                if options.sampling:
                    token = llama_cpp.llama_sampler_sample(chain.sampler, ctx, -1)
                else:
                    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
                    if penalty != 1.0 and produced:
                        # The chain's penalty, for the arg-max here (the chain applies its own when it samples).
                        logits = logits.copy()
                        seen = np.fromiter(set(produced), dtype=np.int64)
                        logits[seen] = np.where(logits[seen] > 0, logits[seen] / penalty, logits[seen] * penalty)
                    token = int(logits.argmax())
                    admitted = True
                    if checker is not None:
                        one.id, one.logit, one.p = token, logits[token], 0.0
                        candidate.size, candidate.selected = 1, -1
                        llama_cpp.llama_sampler_apply(checker, ctypes.byref(candidate))
                        admitted = one.logit != float("-inf")
                    if admitted:
                        llama_cpp.llama_sampler_accept(chain.sampler, token)
                    else:
                        token = llama_cpp.llama_sampler_sample(chain.sampler, ctx, -1)
                produced.append(token)
                yield token
                llama.eval([token])
        finally:
            self._abortable(True)
            chain.close()

    def generate(
        self,
        messages: list[dict[str, Any]],
        options: GenerationOptions = GenerationOptions(),  # noqa: B008  (frozen: a shared default is safe)
        *,
        on_text: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Generation:
        """Generation for chat ``messages``, greedy or sampled (``options``); ``on_text`` receives each new piece
        of text as it is decoded. Blocks (run it in a worker thread from async code)."""
        ids, prefix_ids = self.prompt_ids(messages)
        grammar = None
        if options.schema is not None:
            grammar = self.grammar(options.schema)
        elif options.grammar is not None:
            grammar = self.grammar(ebnf=options.grammar)
        if len(ids) + options.max_new_tokens > self.llama.n_ctx():
            raise ValueError(
                f"the prompt has {len(ids)} tokens and {options.max_new_tokens} may follow, more than the context "
                f"of {self.llama.n_ctx()} tokens; expected a shorter prompt (fewer tools or examples)"
            )
        cancel = cancel or threading.Event()
        window = options.repetition.max_period * max(options.repetition.min_repeats, 2) + options.repetition.min_span
        with self._lock:
            self._cancel = cancel
            started = time.perf_counter()
            first: float | None = None
            new_ids: list[int] = []
            text = ""
            reason = "length"
            end_token = False
            cached = 0
            try:
                cached = self._prepare(ids, prefix_ids, options.use_prefix_cache)
                if options.sampling:
                    self.llama.set_seed(options.seed if options.seed is not None else random.getrandbits(31))
                decoder = codecs.getincrementaldecoder("utf-8")("replace")
                tokens = self._decode(ids, options, grammar)
                for token in tokens:
                    if first is None:
                        first = time.perf_counter()
                    if cancel.is_set():
                        reason = "cancelled"
                        break
                    if self._is_end(token):
                        reason, end_token = "stop", True
                        break
                    new_ids.append(token)
                    piece = decoder.decode(self.llama.detokenize([token]))
                    text += piece
                    if options.stop and any(stop in text for stop in options.stop):
                        text = text[: min(text.index(s) for s in options.stop if s in text)]
                        reason = "stop"
                        break
                    if piece and on_text is not None:
                        on_text(piece)
                    if repeating_period(new_ids[-window:], options.repetition) is not None or (
                        piece and options.stop_when is not None and options.stop_when(text)
                    ):
                        reason = "repetition"
                        break
                    if len(new_ids) >= options.max_new_tokens:
                        break
                tokens.close()
                text += decoder.decode(b"", final=True)
            except RuntimeError as error:
                if not cancel.is_set():
                    raise
                log.info("generation cancelled while evaluating (%s)", error)
                reason = "cancelled"
            finally:
                self._cancel = None
            ended = time.perf_counter()
            if options.use_prefix_cache and reason != "cancelled" and self.llama.n_tokens > len(prefix_ids):
                self.states.put(self._save())  # the conversation so far: the next turn starts from it
        first = first or ended
        self.last = Generation(
            text=text,
            input_tokens=len(ids),
            output_tokens=len(new_ids) + end_token,
            finish_reason=reason,
            cached_prefix_tokens=cached,
            prefill_s=first - started,
            decode_s=max(ended - first, 0.0),
        )
        return self.last


class LlamaCppChatModel(LocalDecoding, BaseChatModel):
    """A GGUF model run by llama.cpp in this process, with usage, streaming, constrained decoding, cancellation and
    prompt caching. Build it with :func:`build_llama_cpp_chat_model` (or ``planwerk.models.specs.load_chat_model``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    runtime: Any = Field(default=None, exclude=True, repr=False)
    """The shared :class:`LlamaCppRuntime` (model, context, caches)."""
    model_id: str = "llama.cpp"

    @property
    def _llm_type(self) -> str:
        return "planwerk-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_id": self.model_id}

    def with_plan_schema(self, schema: Mapping[str, Any]) -> LlamaCppChatModel:
        """The same model (shared weights and caches), generating only JSON that matches ``schema``."""
        if self.constrained_decoding:
            self.runtime.grammar(schema)  # convert now: a bad schema fails here, not mid-graph
        return self.model_copy(update={"plan_schema": dict(schema)})

    def with_plan_grammar(self, grammar: str) -> LlamaCppChatModel:
        """The same model (shared weights and caches), generating only text the EBNF ``grammar`` admits."""
        if self.constrained_decoding:
            self.runtime.grammar(ebnf=grammar)  # convert now: a bad grammar fails here, not mid-graph
        return self.model_copy(update={"plan_grammar": grammar})

    def _result(self, generation: Generation) -> ChatResult:
        message = AIMessage(
            content=generation.text,
            usage_metadata=generation.usage,
            response_metadata={"model_name": self.model_id, **generation.metadata},
        )
        return ChatResult(generations=[ChatGeneration(message=message, generation_info=generation.metadata)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(self.runtime.generate(message_dicts(messages), self._options(stop, kwargs)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Generation blocks, so it runs in a worker thread; cancelling this coroutine sets the event, which ends
        # the generation at the next token or inside the prompt's evaluation (the abort callback).
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
        for chunk in self._stream_until(threading.Event(), messages, stop, **kwargs):
            if run_manager is not None and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    def _stream_until(
        self, cancel: threading.Event, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        """The chunks of one generation; setting ``cancel`` (or closing this iterator) ends it at the next token."""
        dicts, options = message_dicts(messages), self._options(stop, kwargs)
        pieces: queue.Queue[tuple[str, Any]] = queue.Queue()

        def work() -> None:
            try:
                generation = self.runtime.generate(
                    dicts, options, on_text=lambda piece: pieces.put(("text", piece)), cancel=cancel
                )
                pieces.put(("done", generation))
            except BaseException as exc:  # handed to the consuming thread below
                pieces.put(("error", exc))

        worker = threading.Thread(target=work, name="planwerk-llama-generate", daemon=True)
        worker.start()
        finished = False
        try:
            while True:
                kind, value = pieces.get(timeout=STREAM_PIECE_TIMEOUT_S)
                if kind == "text":
                    yield ChatGenerationChunk(message=AIMessageChunk(content=value))
                    continue
                if kind == "error":
                    raise value
                generation: Generation = value
                finished = True
                yield ChatGenerationChunk(
                    message=AIMessageChunk(
                        content="",
                        usage_metadata=generation.usage,
                        response_metadata={"model_name": self.model_id, **generation.metadata},
                        chunk_position="last",
                    ),
                    generation_info=generation.metadata,
                )
                return
        finally:
            if not finished:
                cancel.set()  # the consumer stopped early: end the generation at the next token
            worker.join()

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        # The sync stream driven from worker threads; when this coroutine is cancelled or closed early, the event
        # ends the generation instead of letting the thread run to max_new_tokens.
        cancel = threading.Event()
        chunks = self._stream_until(cancel, messages, stop, **kwargs)
        done = object()
        finished = False
        try:
            while (chunk := await asyncio.to_thread(next, chunks, done)) is not done:
                if run_manager is not None and chunk.text:
                    await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                yield chunk
            finished = True
        finally:
            if not finished:
                cancel.set()
                await asyncio.to_thread(chunks.close)


def cpu_threads() -> int:
    """The cores this process may run on (llama.cpp's default counts every core of the machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def load_llama(path: Path, *, n_ctx: int = DEFAULT_N_CTX) -> Any:
    """The ``llama_cpp.Llama`` for the GGUF at ``path`` (weights memory-mapped as stored, quantized), with a context
    of ``n_ctx`` tokens (at most what the model was trained for)."""
    Llama = import_llama_cpp().Llama
    threads = cpu_threads()
    llama = Llama(
        model_path=str(path),
        n_ctx=n_ctx,
        n_batch=512,
        n_threads=threads,
        n_threads_batch=threads,
        last_n_tokens_size=REPEAT_PENALTY_LAST_N,  # the sampler chain's penalty window
        verbose=False,
    )
    trained = int(llama.metadata.get(f"{llama.metadata.get('general.architecture', '')}.context_length", 0) or 0)
    if trained and trained < n_ctx:
        del llama
        llama = Llama(
            model_path=str(path),
            n_ctx=trained,
            n_batch=512,
            n_threads=threads,
            n_threads_batch=threads,
            last_n_tokens_size=REPEAT_PENALTY_LAST_N,
            verbose=False,
        )
    return llama


KV_STATES_ENV = "PLANWERK_KV_STATES"
"""``0`` keeps static prefixes' KV states in memory only; otherwise they are stored under ``$PLANWERK_HOME/kv-states``
(a new process then skips evaluating them: :mod:`planwerk.models.state_store`)."""


def prefix_state_store(path: Path, llama: Any) -> StateStore | None:
    """The on-disk store of static prefixes' states for the model at ``path`` as ``llama`` runs it (a folder per model
    file, llama.cpp version and context size), or ``None`` when :data:`KV_STATES_ENV` is ``0``."""
    if os.environ.get(KV_STATES_ENV, "1").strip() == "0":
        return None
    version = getattr(import_llama_cpp(), "__version__", "?")
    return StateStore(planwerk_home() / "kv-states" / model_key(path, "llama.cpp", version, llama.n_ctx()))


def build_llama_cpp_chat_model(
    path: Path, *, model_id: str, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, n_ctx: int = DEFAULT_N_CTX
) -> LlamaCppChatModel:
    """Load the GGUF at ``path`` with llama.cpp and wrap it as a chat model (static prefixes' states on disk unless
    :data:`KV_STATES_ENV` says ``0``)."""
    started = time.perf_counter()
    llama = load_llama(path, n_ctx=n_ctx)
    runtime = LlamaCppRuntime(llama, state_store=prefix_state_store(path, llama))
    log.info("model %s loaded by llama.cpp in %.1f s", model_id, time.perf_counter() - started)
    return LlamaCppChatModel(runtime=runtime, model_id=model_id, max_new_tokens=max_new_tokens)

"""An OpenAI-compatible model server as planwerk's chat model: the ``endpoint:<url>[#<model>]`` spec.

:class:`EndpointChatModel` is langchain-openai's ``ChatOpenAI`` with what planwerk needs from a server:

- **Plans constrained like local ones.** :meth:`EndpointChatModel.with_plan_schema` binds the same plan JSON schema
  the local model compiles with xgrammar (:func:`planwerk.core.plan_schema.plan_json_schema`), sent as the server's
  ``response_format``. Servers spell it differently: OpenAI, vLLM and llama.cpp's own server take
  ``{"type": "json_schema", "json_schema": {...}}``; llama-cpp-python's server takes ``{"type": "json_object",
  "schema": {...}}`` and rejects the first form (HTTP 500 naming the field; the client retries a 500 once). The
  first constrained call tries the forms in :data:`SCHEMA_FORMATS` order and the model remembers the one the server
  took; a server that takes none gets unconstrained requests (logged once as a warning), and the plan check still
  gates every plan. Expression plans (:meth:`EndpointChatModel.with_plan_grammar`) send their EBNF as the request's
  ``grammar`` (GBNF, which llama.cpp's servers read); a server that refuses the field is asked again without it.
- **Tokens are streamed** (``streaming=True``): LangGraph's callbacks see every token, a server that goes away
  mid-reply is noticed at once, and the timeout bounds the silence between two chunks rather than the whole reply
  (a long answer on a slow CPU is not cut off, a hung server is).
- **Replies are bounded on this side.** A reply ends after :data:`ENDPOINT_MAX_TOKENS` streamed chunks or once its
  text loops (:class:`ReplyGuard`, the in-process model's repetition stop on characters), whatever the server makes
  of ``max_tokens``: langchain-openai sends ``max_completion_tokens``, which llama-cpp-python's server ignores, and
  a 0.5B model looping inside a JSON string then ran to the context's end (12,795 tokens for one NESTFUL question).
- **Every request has a timeout** (``request_timeout``; :data:`planwerk.models.specs.ENDPOINT_TIMEOUT_S` for specs).
- **A server that cannot be reached, hangs or goes away mid-reply** raises :class:`EndpointUnavailableError` (a
  ``ConnectionError``) with one line naming the server and what happened; other refusals raise
  :class:`EndpointError`. Neither is a traceback at the CLI (``planwerk ask`` prints the line, exit code 2).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import ChatOpenAI
from pydantic import Field, PrivateAttr

from planwerk.models.endpoint_keys import endpoint_api_key
from planwerk.models.gbnf import portable_schema
from planwerk.models.stopping import RepetitionPolicy, repeating_period

log = logging.getLogger(__name__)

ENDPOINT_MAX_TOKENS = 512
"""Reply length bound, as the local model's ``max_new_tokens``: a small model looping inside a JSON string stops."""

TEXT_REPETITION = RepetitionPolicy(max_period=160, min_repeats=3, min_span=240)
"""A streamed reply loops when its end repeats a block of up to 160 characters 3 times, over 240 characters or more
(the in-process stop counts tokens; a stream gives text)."""
GUARD_EVERY = 8
"""The loop check runs every this many chunks (it costs a few milliseconds of Python)."""


@dataclass
class ReplyGuard:
    """Watches one streamed reply and says when to end it: ``"length"`` after ``max_chunks`` chunks with text,
    ``"repetition"`` when the text loops. Pure: fed text, it keeps only the tail the loop check needs."""

    max_chunks: int = ENDPOINT_MAX_TOKENS
    policy: RepetitionPolicy = TEXT_REPETITION
    chunks: int = 0
    tail: str = field(default="", repr=False)
    reason: Literal["length", "repetition"] | None = None

    def feed(self, text: str) -> bool:
        """Take the next chunk's text; whether the reply must end after it."""
        if not text:
            return False
        self.chunks += 1
        window = self.policy.max_period * self.policy.min_repeats + self.policy.min_span
        self.tail = (self.tail + text)[-window:]
        if self.chunks >= self.max_chunks:
            self.reason = "length"
        elif self.chunks % GUARD_EVERY == 0 and repeating_period(self.tail, self.policy) is not None:
            self.reason = "repetition"
        return self.reason is not None

    def last_chunk(self) -> ChatGenerationChunk:
        """The chunk that ends a cut reply: no text, the reason as ``finish_reason``."""
        info = {"finish_reason": self.reason}
        return ChatGenerationChunk(message=AIMessageChunk(content="", response_metadata=info), generation_info=info)


SchemaFormat = Literal["json_schema", "json_object_schema"]
"""How a server takes a JSON schema in ``response_format``: OpenAI's ``json_schema`` form, or ``json_object`` with
a ``schema`` (llama-cpp-python's server)."""
SCHEMA_FORMATS: tuple[SchemaFormat, ...] = ("json_schema", "json_object_schema")
"""The forms a constrained call tries, in this order, until the server takes one."""
ConstraintForm = SchemaFormat | Literal["grammar"]
"""How one request is constrained: a ``response_format`` form, or a GBNF ``grammar`` field."""


class EndpointError(RuntimeError):
    """The model server answered, but refused the request (a one-line message: server, status, its reason)."""


class EndpointUnavailableError(ConnectionError):
    """The model server cannot be reached, sent nothing within the timeout, or went away mid-reply (one line)."""


def response_format_for(schema: Mapping[str, Any], form: SchemaFormat) -> dict[str, Any]:
    """The ``response_format`` request field that constrains a reply to ``schema``, in the server's ``form``; its
    regex patterns in the dialect a server's grammar converter reads (:func:`planwerk.models.gbnf.portable_schema`:
    llama-cpp-python's server read ``\\d`` as the letter d, and no plan could carry a date)."""
    schema = portable_schema(schema)
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "plan", "schema": dict(schema), "strict": True}}
    return {"type": "json_object", "schema": dict(schema)}


def rejects_response_format(error: openai.APIStatusError, form: ConstraintForm = "json_schema") -> bool:
    """Whether an error answer is the server refusing the constraint ``form`` (rather than anything else): 400 or 422
    naming the field, or 500 (llama-cpp-python's server answers its own validation errors with 500)."""
    if error.status_code not in (400, 422, 500):
        return False
    text = f"{error.message} {error.body}".lower()
    if form == "grammar":
        return "grammar" in text
    return "response_format" in text or "json_schema" in text


def _transport_reason(error: BaseException) -> str:
    """What the transport said (``[Errno 111] Connection refused``), found below the SDK wrappers' "Connection
    error." (langchain-openai wraps openai's error, which wraps httpx's)."""
    reason = ""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, httpx.TransportError | OSError) and str(current).strip():
            reason = _one_line(current)
        current = current.__cause__ or current.__context__
    return reason or type(error).__name__


def _one_line(text: object, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit] + "…"


class EndpointChatModel(ChatOpenAI):
    """``ChatOpenAI`` for planwerk's ``endpoint:`` spec: schema-constrained plans, streamed tokens, a timeout on
    every request and one-line typed errors (see the module doc)."""

    plan_schema: dict[str, Any] | None = Field(default=None, exclude=True)
    """When set (see :meth:`with_plan_schema`), replies are constrained to this JSON schema where the server can."""
    plan_grammar: str | None = Field(default=None, exclude=True)
    """When set (see :meth:`with_plan_grammar`), replies are constrained to this GBNF grammar where the server can."""
    _accepted_format: dict[str, ConstraintForm | None] = PrivateAttr(default_factory=dict)
    # Shared with every copy made by with_plan_schema (model_copy copies private attributes shallowly), so the
    # form the server took is found once per model, not once per plan.

    def with_plan_schema(self, schema: Mapping[str, Any]) -> EndpointChatModel:
        """The same model (same client, same server), its replies constrained to ``schema``."""
        return self.model_copy(update={"plan_schema": dict(schema), "plan_grammar": None})

    def with_plan_grammar(self, grammar: str) -> EndpointChatModel:
        """The same model (same client, same server), its replies constrained to the EBNF/GBNF ``grammar``."""
        return self.model_copy(update={"plan_grammar": grammar, "plan_schema": None})

    def _constraint_key(self) -> str:
        return "grammar" if self.plan_grammar is not None else "form"

    @property
    def schema_format(self) -> SchemaFormat | None:
        """The ``response_format`` form the server took (``None``: not known yet, or the server takes none)."""
        return self._accepted_format.get("form")  # type: ignore[return-value]  # "grammar" is kept apart

    @property
    def takes_grammar(self) -> bool | None:
        """Whether the server took a ``grammar`` field (``None``: not known yet)."""
        if "grammar" not in self._accepted_format:
            return None
        return self._accepted_format["grammar"] == "grammar"

    def _format_candidates(self) -> list[ConstraintForm | None]:
        """The forms to try for this request, ``None`` meaning unconstrained."""
        if self.plan_schema is None and self.plan_grammar is None:
            return [None]
        if (key := self._constraint_key()) in self._accepted_format:
            return [self._accepted_format[key]]
        return ["grammar", None] if self.plan_grammar is not None else [*SCHEMA_FORMATS, None]

    def _request_kwargs(self, form: ConstraintForm | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        if form is None:
            return kwargs
        # extra_body, not response_format: langchain-openai would send a response_format through the SDK's
        # parse helpers, which know only OpenAI's forms; extra_body goes into the request JSON as it is.
        extra_body = {**(self.extra_body or {}), **(kwargs.get("extra_body") or {})}
        if form == "grammar" and self.plan_grammar is not None:
            extra_body["grammar"] = self.plan_grammar
        elif form != "grammar" and self.plan_schema is not None:
            extra_body["response_format"] = response_format_for(self.plan_schema, form)
        else:
            return kwargs
        return {**kwargs, "extra_body": extra_body}

    def _refused(self, form: ConstraintForm | None, error: openai.APIStatusError, candidates: list[Any]) -> bool:
        """Note a refused constraint form; whether the next candidate should be tried."""
        if form is None or not rejects_response_format(error, form) or form is candidates[-1]:
            return False
        log.info("model server %s refused %s: %s", self.openai_api_base, form, _one_line(error))
        if candidates[candidates.index(form) + 1] is None:
            what = "grammar field" if form == "grammar" else "JSON-schema response_format"
            log.warning(
                "model server %s takes no %s; plans are not constrained (the plan check still gates them)",
                self.openai_api_base,
                what,
            )
            self._accepted_format[self._constraint_key()] = None
        return True

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        candidates = self._format_candidates()
        for form in candidates:
            started = False
            guard = ReplyGuard(max_chunks=self._reply_bound(kwargs))
            chunks = super()._stream(messages, stop, run_manager, **self._request_kwargs(form, kwargs))
            try:
                for chunk in chunks:
                    started = True
                    yield chunk
                    if guard.feed(chunk.text):
                        chunks.close()  # closes the response: the server sees the client go
                        self._cut(guard)
                        yield guard.last_chunk()
                        break
            except (openai.APIStatusError, openai.APIConnectionError, httpx.TransportError) as error:
                if self._try_next_form(error, form, candidates, started):
                    continue
                raise self._translated(error) from error
            self._finished(form, started)
            return

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        candidates = self._format_candidates()
        for form in candidates:
            started = False
            guard = ReplyGuard(max_chunks=self._reply_bound(kwargs))
            achunks = super()._astream(messages, stop, run_manager, **self._request_kwargs(form, kwargs))
            try:
                async for chunk in achunks:
                    started = True
                    yield chunk
                    if guard.feed(chunk.text):
                        await achunks.aclose()  # type: ignore[attr-defined]
                        self._cut(guard)
                        yield guard.last_chunk()
                        break
            except (openai.APIStatusError, openai.APIConnectionError, httpx.TransportError) as error:
                if self._try_next_form(error, form, candidates, started):
                    continue
                raise self._translated(error) from error
            self._finished(form, started)
            return

    def _try_next_form(
        self, error: Exception, form: ConstraintForm | None, candidates: list[Any], started: bool
    ) -> bool:
        """Whether a failed request should be retried with the next response form (the server refused this one
        before sending anything); otherwise the caller raises the translated error."""
        return isinstance(error, openai.APIStatusError) and not started and self._refused(form, error, candidates)

    def _reply_bound(self, kwargs: Mapping[str, Any]) -> int:
        """The call's own ``max_tokens`` (a sampling request's 256), else the model's."""
        bound = kwargs.get("max_tokens") or kwargs.get("max_completion_tokens") or self.max_tokens
        return int(bound or ENDPOINT_MAX_TOKENS)

    def _cut(self, guard: ReplyGuard) -> None:
        log.info("model server %s: reply cut after %d chunks (%s)", self.openai_api_base, guard.chunks, guard.reason)

    def _finished(self, form: ConstraintForm | None, started: bool) -> None:
        """After a stream ended: an empty one is an error; a constrained one remembers the form the server took."""
        if not started:  # a server that ignored stream=true (a plain JSON reply) or sent nothing at all
            raise EndpointError(f"model server {self.openai_api_base} sent no streamed reply (stream=true)")
        if self.plan_schema is not None or self.plan_grammar is not None:
            self._accepted_format.setdefault(self._constraint_key(), form)

    def _translated(self, error: Exception) -> Exception:
        """One typed, one-line error for a failed request (the original stays as ``__cause__``)."""
        server = self.openai_api_base
        if isinstance(error, openai.APITimeoutError | httpx.TimeoutException | TimeoutError):
            return EndpointUnavailableError(
                f"model server {server} sent nothing for {self.request_timeout} s (timeout); is it overloaded or hung?"
            )
        if isinstance(error, openai.APIConnectionError | httpx.TransportError):
            reason = _transport_reason(error)
            return EndpointUnavailableError(
                f"model server {server} is unreachable or went away mid-reply ({reason}); is it running?"
            )
        if isinstance(error, openai.APIStatusError) and error.status_code in (502, 503, 504):
            return EndpointUnavailableError(
                f"model server {server} is unavailable (HTTP {error.status_code}: {_one_line(error.message)})"
            )
        if isinstance(error, openai.APIStatusError):
            return EndpointError(
                f"model server {server} refused the request (HTTP {error.status_code}: {_one_line(error.message)})"
            )
        return error


def endpoint_chat_model(
    base_url: str, model_name: str = "", *, timeout_s: float, api_key: str | None = None
) -> EndpointChatModel:
    """The chat model for an OpenAI-compatible server at ``base_url`` (ending in ``/v1``): greedy, streaming, one
    retry on a failed connection, every request bounded by ``timeout_s`` of silence.

    ``api_key`` defaults to the operator's ``PLANWERK_ENDPOINT_API_KEY``; that key is attached only where
    ``PLANWERK_ALLOWED_ENDPOINTS`` (when set) allows it (:func:`planwerk.models.endpoint_keys.endpoint_api_key`)."""
    return EndpointChatModel(
        base_url=base_url,
        model=model_name or "default",
        api_key=endpoint_api_key(base_url, api_key),  # type: ignore[arg-type]
        timeout=timeout_s,
        # langchain-openai's own watchdog between streamed chunks (120 s unless set) would otherwise cut a reply
        # that planwerk's timeout allows: measured in CI, a loaded CPU server's first chunk of a plan took longer.
        stream_chunk_timeout=timeout_s,
        max_retries=1,
        temperature=0,
        max_tokens=ENDPOINT_MAX_TOKENS,  # type: ignore[call-arg]
        streaming=True,
        stream_usage=True,
    )

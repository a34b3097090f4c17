"""What planwerk offers MCP servers as a client: elicitation, sampling and roots, and which tools it does not offer.

Design and reasons: ``docs/capabilities.md``. In short:

- **Every session advertises elicitation (form and URL) and sampling**; roots only for a server whose config lists
  ``roots``. A server's requests arrive in the session's receive loop (the MCP SDK awaits the callback there, so
  it must not wait for a person), are attributed to the call they belong to (:class:`ServerFeatures`) and handed
  to that call's :class:`CallChannel`. Over streamable HTTP the transport says which call a request belongs to (it
  comes on the stream of that call's POST, :data:`SERVER_REQUEST_ORIGIN`): it goes to that call while it is in
  flight and is refused otherwise (after the call returned, or on the server's own stream, related to no call), so
  a late request never reaches another run. Over stdio nothing says so: a request goes to the one call in flight
  on that server, and is refused when none or several are. Pooled sessions are shared only by runs of one user
  (:mod:`planwerk.serving.warm`), so over stdio, too, a request can only reach a run of the same user.
- **Elicitation is a LangGraph interrupt, and the call is made again on resume.** The ``call_tool`` node runs the
  call as a task and watches its channel (:func:`call_with_client_features`). An elicitation request makes the node
  call ``interrupt()`` in its own task: on the first run that raises, the pending request is answered ``cancel``
  and the call is cancelled on the server (``notifications/cancelled``), and the thread pauses with the request's
  message and schema. On resume LangGraph re-runs the node: the call is made again, the server asks again, and
  ``interrupt()`` now returns the person's answer (LangGraph matches interrupts to answers by their order within
  the node), which is checked against the schema (``planwerk.core.elicitation``; a wrong answer is asked again,
  naming the problem) and returned to the server. Nothing waits for a person while a call or a session is open.
- **Sampling** is answered by the run's own model, bounded by :class:`SamplingPolicy` (tokens, time, requests per
  run), and shown in the stream as ``sampling_request`` / ``sampling_result`` events.
- **Tools that require task augmentation** (``execution.taskSupport: "required"``) are not offered
  (:func:`offered_tools` logs why): tasks are experimental and deprecated in the installed ``mcp`` SDK and
  langchain-mcp-adapters cannot call a tool as a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from mcp.shared.context import RequestContext
from mcp.types import (
    INVALID_REQUEST,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    RequestId,
    Root,
    TextContent,
    Tool,
)
from pydantic import FileUrl

from planwerk.core.elicitation import ElicitationAnswerError, describe_form, parse_elicitation_answer
from planwerk.core.hitl import DecisionError, hitl_request, is_decision, read_decision
from planwerk.core.repair import repair_arguments

log = logging.getLogger(__name__)

SAMPLING_CONFIG: RunnableConfig = {"tags": ["planwerk:sampling", TAG_NOSTREAM]}
"""A server's sampling request is the server's business, not the chat's: ``nostream`` keeps it out of a chat's
``messages`` stream when the call runs inside a graph node."""

T = TypeVar("T")

MAX_ELICITATION_ASKS = 3
"""An answer that does not fit the form is asked again (naming the problem) this many times in all; then the
request is answered ``cancel``."""


@dataclass(frozen=True)
class SamplingPolicy:
    """Bounds on answering a server's ``sampling/createMessage`` with the run's model."""

    max_tokens: int = 256
    """The most tokens one answer may have (the server's ``maxTokens`` is capped to it)."""
    timeout_s: float = 120.0
    """The longest one answer may take; then the server gets an error."""
    max_requests_per_run: int = 3
    """Sampling requests answered per run (all calls of the run together); later ones get an error."""
    max_prompt_chars: int = 20_000
    """The longest prompt (system prompt and messages) accepted; a longer one gets an error."""


DEFAULT_SAMPLING_POLICY = SamplingPolicy()


@dataclass(frozen=True)
class ElicitationRequest:
    """A server's elicitation request as the person sees it."""

    server: str
    message: str
    schema: Mapping[str, Any] | None
    """The requested JSON schema (a flat object); None for a URL request."""
    url: str | None = None
    """For a URL request: where the person should go."""

    @classmethod
    def from_params(cls, server: str, params: ElicitRequestParams) -> ElicitationRequest:
        """The request of the MCP parameters (form or URL mode)."""
        if isinstance(params, ElicitRequestURLParams):
            return cls(server=server, message=params.message, schema=None, url=params.url)
        return cls(server=server, message=params.message, schema=dict(params.requestedSchema))

    def interrupt_payload(self, call_id: str, tool: str) -> dict[str, Any]:
        """The value the thread's interrupt carries (``kind: "elicitation"``)."""
        payload: dict[str, Any] = {
            "kind": "elicitation",
            "question": self.message,
            "id": call_id,
            "tool": tool,
            "server": self.server,
            "schema": dict(self.schema) if self.schema is not None else None,
            "form": describe_form(self.schema),
        }
        if self.url is not None:
            payload["url"] = self.url
        # A chat UI's view: a form is edited (its fields with their defaults) or declined; a URL request is
        # accepted (the person went there) or declined.
        properties = (self.schema or {}).get("properties") or {}
        fields = {
            name: spec.get("default", "") if isinstance(spec, Mapping) else "" for name, spec in properties.items()
        }
        allowed: tuple[Any, ...] = ("edit", "reject") if fields else ("approve", "reject")
        description = self.message if self.url is None else f"{self.message}\n{self.url}"
        return {**payload, **hitl_request(tool, fields, description, allowed)}


@dataclass(eq=False)
class PendingElicitation:
    """An elicitation request waiting for the node's answer (the server's session waits on ``answer``)."""

    request: ElicitationRequest
    answer: asyncio.Future[ElicitResult | ErrorData]


class SamplingBudget:
    """How many sampling requests a run has had; shared by the run's calls."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def take(self) -> bool:
        """Count one request; False when the run has used its limit."""
        if self.used >= self.limit:
            return False
        self.used += 1
        return True


class SamplingBudgets:
    """The budgets of the latest runs by run key (bounded: the oldest are forgotten)."""

    def __init__(self, keep: int = 1024):
        self._keep = keep
        self._budgets: OrderedDict[str, SamplingBudget] = OrderedDict()

    def for_run(self, key: str, limit: int) -> SamplingBudget:
        """The budget of run ``key`` (created with ``limit`` on first use)."""
        budget = self._budgets.pop(key, None) or SamplingBudget(limit)
        self._budgets[key] = budget
        while len(self._budgets) > self._keep:
            self._budgets.popitem(last=False)
        return budget


RUN_BUDGETS = SamplingBudgets()
"""The process's sampling budgets, keyed by LangGraph run id (the thread id when the run has none)."""

Emit = Callable[[dict[str, Any]], None]
ModelFactory = Callable[[], Awaitable[BaseChatModel]]


@dataclass(eq=False)
class Sampler:
    """Answers a call's sampling requests with the run's model, within ``policy`` and the run's ``budget``."""

    model: ModelFactory
    budget: SamplingBudget
    emit: Emit
    call_id: str
    tool: str
    policy: SamplingPolicy = DEFAULT_SAMPLING_POLICY

    async def sample(self, server: str, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        """The model's answer to the server's messages, or an error saying which bound stopped it."""
        max_tokens = max(1, min(params.maxTokens, self.policy.max_tokens))
        event = {"id": self.call_id, "tool": self.tool, "server": server}
        try:
            messages = sampling_messages(params, self.policy.max_prompt_chars)
        except ValueError as error:
            return self._refused(event, str(error))
        if not self.budget.take():
            return self._refused(event, f"this run has used its {self.budget.limit} sampling requests (SamplingPolicy)")
        prompt = messages[-1].content if messages else ""
        self.emit({"event": "sampling_request", **event, "prompt": str(prompt)[:500], "max_tokens": max_tokens})
        started = time.perf_counter()
        try:
            model = await self.model()
            async with asyncio.timeout(self.policy.timeout_s):
                reply = await model.ainvoke(messages, config=SAMPLING_CONFIG, **_token_limit(model, max_tokens))
        except TimeoutError:
            return self._refused(event, f"the model did not answer within {self.policy.timeout_s:g} s")
        except Exception as error:  # the server gets an error result; the run goes on
            return self._refused(event, f"the model failed: {type(error).__name__}: {error}")
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        stop = "maxTokens" if _finish_reason(reply) == "length" else "endTurn"
        duration = round(time.perf_counter() - started, 3)
        self.emit({"event": "sampling_result", **event, "text": text, "stop_reason": stop, "duration_s": duration})
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model=_model_name(model), stopReason=stop
        )

    def _refused(self, event: dict[str, Any], why: str) -> ErrorData:
        log.warning("sampling request of server %s (call %s) refused: %s", event["server"], self.call_id, why)
        self.emit({"event": "sampling_result", **event, "error": why})
        return ErrorData(code=INVALID_REQUEST, message=f"planwerk did not sample: {why}")


def sampling_messages(params: CreateMessageRequestParams, max_chars: int) -> list[BaseMessage]:
    """The server's messages as chat messages; text only (ValueError naming what else came, or a too-long prompt)."""
    out: list[BaseMessage] = [SystemMessage(params.systemPrompt)] if params.systemPrompt else []
    for index, message in enumerate(params.messages):
        parts = []
        for block in message.content_as_list:
            if not isinstance(block, TextContent):
                raise ValueError(f"message {index} holds {block.type} content; planwerk samples text only")
            parts.append(block.text)
        text = "\n".join(parts)
        out.append(HumanMessage(text) if message.role == "user" else AIMessage(text))
    if params.tools:
        raise ValueError("the request offers tools; planwerk samples text without tools")
    size = sum(len(str(m.content)) for m in out)
    if size > max_chars:
        raise ValueError(f"the prompt has {size} characters, over the limit of {max_chars}")
    return out


def _token_limit(model: BaseChatModel, max_tokens: int) -> dict[str, int]:
    """The keyword that bounds the answer's length for this kind of model (none for a replay model)."""
    if "max_new_tokens" in type(model).model_fields:  # planwerk's local transformers / GGUF models
        return {"max_new_tokens": max_tokens}
    if "max_tokens" in type(model).model_fields:  # OpenAI-compatible endpoints
        return {"max_tokens": max_tokens}
    return {}


def _finish_reason(reply: BaseMessage) -> str | None:
    metadata = getattr(reply, "response_metadata", None) or {}
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return str(reason) if reason else None


def _model_name(model: BaseChatModel) -> str:
    for attribute in ("model_id", "model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


@dataclass(eq=False)
class CallChannel:
    """One tool call's link between the MCP session's callbacks and the ``call_tool`` node that made it."""

    call_id: str
    tool: str
    sampler: Sampler | None = None
    """Answers sampling requests; None: the call was made outside a graph run (no model is bound)."""
    context: contextvars.Context | None = None
    """The node's context (a copy): sampling runs in it, so that the stream writer and LangChain's run config
    work as in the node (the session's callbacks run in the session's own task)."""
    in_run: bool = True
    """The call belongs to a graph run whose node can interrupt for a person; False: elicitation is cancelled."""
    elicitations: asyncio.Queue[PendingElicitation] = field(default_factory=asyncio.Queue)
    request_ids: set[RequestId] = field(default_factory=set)
    """The JSON-RPC ids of the requests the call sent (noted by the session): a server's request over HTTP names
    the one it belongs to."""

    async def elicit(self, request: ElicitationRequest) -> ElicitResult | ErrorData:
        """Hand ``request`` to the node and wait for its answer (the node answers at once: it never waits)."""
        pending = PendingElicitation(request, asyncio.get_running_loop().create_future())
        await self.elicitations.put(pending)
        return await pending.answer


@dataclass(frozen=True)
class RequestOrigin:
    """Where a server's request (sampling, elicitation) came from, as far as its transport tells."""

    told: bool = False
    """Whether the transport tells at all (streamable HTTP does; stdio does not)."""
    related_request_id: RequestId | None = None
    """The id of planwerk's request on whose response stream it came; ``None`` with ``told``: the server's own
    stream, related to no request of ours (the MCP spec: such messages SHOULD be unrelated to running requests)."""


SERVER_REQUEST_ORIGIN: ContextVar[RequestOrigin | None] = ContextVar("planwerk_server_request_origin", default=None)
"""Set by :class:`planwerk.tools.transport.CancellingSession` while a server's request is handled (``None``: the
transport does not tell)."""

CURRENT_CALL: ContextVar[CallChannel | None] = ContextVar("planwerk_current_call", default=None)
"""The channel of the tool call being made in this context (set by :func:`call_with_client_features`; read by
``planwerk.tools.mcp`` when the call starts, to register it with the server's :class:`ServerFeatures`)."""


class ServerFeatures:
    """One server's side of the client capabilities: the calls in flight and the callbacks the session gets."""

    def __init__(self, server: str, roots: Sequence[Any] = ()):
        """``roots``: the server's configured roots (``planwerk.tools.config.Root``); empty: roots not offered."""
        self.server = server
        self.roots = tuple(roots)
        self._calls: list[CallChannel] = []

    @property
    def in_flight(self) -> tuple[CallChannel, ...]:
        """The channels of the calls in flight on this server."""
        return tuple(self._calls)

    @staticmethod
    def current_channel() -> CallChannel:
        """The channel current in the caller's context (:data:`CURRENT_CALL`), or one for a call outside a graph
        run (it counts as in flight too, so that a request during it is never taken for another call's)."""
        return CURRENT_CALL.get() or CallChannel(call_id="", tool="", in_run=False)

    def track(self, call: asyncio.Future[Any], channel: CallChannel | None = None) -> None:
        """Count ``call`` as in flight on this server until it is done, with ``channel`` (default
        :meth:`current_channel`); the call's task should run with it as :data:`CURRENT_CALL`, so the session notes
        the ids of its requests there."""
        channel = self.current_channel() if channel is None else channel
        self._calls.append(channel)
        call.add_done_callback(lambda _: self._calls.remove(channel))

    def session_kwargs(self) -> dict[str, Any]:
        """The ``ClientSession`` callbacks; they also make the session advertise the capabilities."""
        kwargs: dict[str, Any] = {"sampling_callback": self.sample, "elicitation_callback": self.elicit}
        if self.roots:
            kwargs["list_roots_callback"] = self.list_roots
        return kwargs

    def _channel(self, what: str) -> CallChannel | str:
        """The call in flight a request belongs to, or why there is none (see the module doc)."""
        origin = SERVER_REQUEST_ORIGIN.get()
        if origin is not None and origin.told:
            if origin.related_request_id is None:
                return (
                    f"{what} of server {self.server} came on its own stream, related to no planwerk call (a request "
                    "for a call comes on that call's stream)"
                )
            for channel in self._calls:
                if origin.related_request_id in channel.request_ids:
                    return channel
            return f"{what} of server {self.server} came for a call that is no longer in flight"
        if len(self._calls) == 1:
            return self._calls[0]
        if not self._calls:
            return f"{what} arrived while no planwerk call to server {self.server} was in flight"
        # Over stdio a server's request names no call; with several in flight, answering for the wrong one
        # could give one call's data to another, so none is chosen.
        return (
            f"{what} arrived while {len(self._calls)} calls to server {self.server} were in flight; it cannot "
            "be told which call asks (plan those calls in separate steps)"
        )

    async def elicit(self, context: RequestContext[Any, Any], params: ElicitRequestParams) -> ElicitResult | ErrorData:
        """``elicitation_callback``: the request goes to its call's node, which interrupts the thread."""
        channel = self._channel("an elicitation request")
        if isinstance(channel, str):
            log.warning("%s; answered cancel", channel)
            return ElicitResult(action="cancel")
        if not channel.in_run:
            log.warning(
                "an elicitation request of server %s came during a call made outside a planwerk run, where "
                "no person can answer; answered cancel",
                self.server,
            )
            return ElicitResult(action="cancel")
        return await channel.elicit(ElicitationRequest.from_params(self.server, params))

    async def sample(
        self, context: RequestContext[Any, Any], params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        """``sampling_callback``: the run's model answers, within the run's sampling policy."""
        channel = self._channel("a sampling request")
        if isinstance(channel, str):
            log.warning("%s; refused", channel)
            return ErrorData(code=INVALID_REQUEST, message=f"planwerk did not sample: {channel}")
        if channel.sampler is None:
            why = "the call was made outside a planwerk run, where no model is bound"
            return ErrorData(code=INVALID_REQUEST, message=f"planwerk did not sample: {why}")
        sampling = channel.sampler.sample(self.server, params)
        if channel.context is None:
            return await sampling
        return await asyncio.create_task(sampling, context=channel.context)

    async def list_roots(self, context: RequestContext[Any, Any]) -> ListRootsResult:
        """``list_roots_callback``: the server's configured roots."""
        return ListRootsResult(roots=[Root(uri=FileUrl(r.uri), name=r.name) for r in self.roots])


async def call_with_client_features(
    make_call: Callable[[], Awaitable[T]],
    channel: CallChannel,
    answer: Callable[[ElicitationRequest], ElicitResult],
) -> T:
    """Make the call (``make_call``) with ``channel`` current, answering its elicitation requests with ``answer``.

    ``answer`` runs in the caller's task (the ``call_tool`` node: it calls ``interrupt()``). When it raises (the
    interrupt that pauses the thread), the pending request is answered ``cancel``, the call is cancelled, and the
    exception propagates.
    """
    token = CURRENT_CALL.set(channel)
    try:
        call = asyncio.ensure_future(make_call())  # the task copies the context, with the channel in it
    finally:
        CURRENT_CALL.reset(token)
    try:
        while True:
            waiting = asyncio.ensure_future(channel.elicitations.get())
            try:
                await asyncio.wait({call, waiting}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not waiting.done():
                    waiting.cancel()
            if not waiting.cancelled() and waiting.done():
                pending = waiting.result()
                if call.done():  # the call ended meanwhile (the server stopped waiting): nobody is asked
                    _settle(pending, ElicitResult(action="cancel"))
                    return call.result()
                try:
                    result: ElicitResult | ErrorData = answer(pending.request)
                except BaseException:
                    _settle(pending, ElicitResult(action="cancel"))
                    raise
                _settle(pending, result)
                continue
            return call.result()
    finally:
        while not channel.elicitations.empty():  # requests that came too late: the server must not hang
            _settle(channel.elicitations.get_nowait(), ElicitResult(action="cancel"))
        if not call.done():
            call.cancel()
            with contextlib.suppress(BaseException):
                await call


def _settle(pending: PendingElicitation, result: ElicitResult | ErrorData) -> None:
    if not pending.answer.done():
        pending.answer.set_result(result)


def answer_by_interrupt(
    request: ElicitationRequest, call_id: str, tool: str, interrupt: Callable[[Any], Any]
) -> ElicitResult:
    """Ask the person through ``interrupt`` (LangGraph's) until the answer fits the request; the server's result.

    Each wrong answer is asked again with an ``error`` naming the problem, :data:`MAX_ELICITATION_ASKS` times in
    all; then ``cancel``.
    """
    payload = request.interrupt_payload(call_id, tool)
    for _ in range(MAX_ELICITATION_ASKS):
        try:
            checked = parse_elicitation_answer(elicitation_answer(interrupt(payload), request.schema), request.schema)
        except (ElicitationAnswerError, DecisionError) as error:
            payload = {**payload, "error": str(error)}
            continue
        content = dict(checked.content) if checked.content is not None else None
        return ElicitResult(action=checked.action, content=content)
    log.warning("no usable answer to the elicitation of %s (call %s); answered cancel", tool, call_id)
    return ElicitResult(action="cancel")


def elicitation_answer(answer: Any, schema: Mapping[str, Any] | None) -> Any:
    """A chat UI's decision (:mod:`planwerk.core.hitl`) as an elicitation answer: ``edit`` accepts the edited
    fields (a UI sends every field as text: numbers and booleans are read by the schema, as a model's arguments
    are), ``approve`` accepts, ``reject`` declines; any other answer is returned as it is."""
    if not is_decision(answer):
        return answer
    decision = read_decision(answer)
    if decision.type == "approve":
        return {"action": "accept"}
    if decision.type == "reject":
        return {"action": "decline"}
    if decision.type == "respond":
        return decision.message
    # A field the person left empty was left out (the form shows every field, filled or not).
    required = set((schema or {}).get("required") or ())
    content = {k: v for k, v in decision.args.items() if v != "" or k in required}
    content = repair_arguments(schema, content) if schema else content
    return {"action": "accept", "content": content}


TaskSupport = Literal["forbidden", "optional", "required"]


def task_support(tool: Tool) -> TaskSupport:
    """The tool's ``execution.taskSupport`` (``forbidden`` when it says nothing)."""
    execution = tool.execution
    support = execution.taskSupport if execution is not None else None
    return support or "forbidden"


def offered_tools(tools: Sequence[Tool], server: str) -> list[Tool]:
    """The tools planwerk can call: those that require task augmentation are left out, each with a log line."""
    offered = []
    for tool in tools:
        if task_support(tool) == "required":
            log.warning(
                "MCP tool %s of server %s is not offered: it requires task-augmented execution "
                '(execution.taskSupport "required"), which planwerk does not support (see docs/capabilities.md)',
                tool.name,
                server,
            )
            continue
        offered.append(tool)
    return offered


def run_key(execution_info: Any) -> str:
    """The key of the run's sampling budget: LangGraph's run id, else the thread (a run without a run id: the
    Python API), else one key for everything."""
    if execution_info is None:
        return "-"
    return str(execution_info.run_id or execution_info.thread_id or "-")


def channel_for_call(
    call_id: str,
    tool: str,
    *,
    model: ModelFactory,
    emit: Emit,
    run_key: str,
    policy: SamplingPolicy = DEFAULT_SAMPLING_POLICY,
) -> CallChannel:
    """The channel of one call of a graph run: sampling with the run's model and the run's budget, in the
    caller's (the node's) context."""
    budget = RUN_BUDGETS.for_run(run_key, policy.max_requests_per_run)
    sampler = Sampler(model=model, budget=budget, emit=emit, call_id=call_id, tool=tool, policy=policy)
    return CallChannel(call_id=call_id, tool=tool, sampler=sampler, context=contextvars.copy_context())

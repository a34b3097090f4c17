"""planwerk's events: one typed definition for the nodes that emit them, the Python API and the CLI.

The graph's nodes write them to LangGraph's ``custom`` stream; :class:`planwerk.agent.Agent` adds ``thread_id``
and turns LangGraph interrupts into :class:`InterruptEvent`. Every event is a JSON-able dict with an ``event`` key,
so ``planwerk ask --json`` prints them as they are. In the order a run emits them::

    start → (server_error …) → retrieval → plan | replan … → step → (approval_required) → tool_call → (tool_progress …)
          → tool_result | tool_error …
          → (ask_user) → (answer_rejected …) → final_answer
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from planwerk.core.calls import FailureKind
from planwerk.core.plan import PlanData
from planwerk.rag.base import Hit


class _Tagged(TypedDict):
    thread_id: NotRequired[str]
    """Added by :class:`~planwerk.agent.Agent` (the graph itself does not know it)."""


class StartEvent(_Tagged):
    """A question starts (``prepare``)."""

    event: Literal["start"]
    question: str


class ServerErrorEvent(_Tagged):
    """An MCP server is down as a question starts (``retrieve``): it failed to start, or it went away and could not
    be reconnected. Its tools are missing from the plan, and a call to one fails with kind ``unavailable``."""

    event: Literal["server_error"]
    server: str
    """The server's name in the MCP config."""
    error: str
    """What happened (redacted: no configured secret appears)."""


class CatalogCappedEvent(_Tagged):
    """More tools are loaded than fit the planner's window (``plan``): only the most relevant to the question are
    shown (``Context.catalog_max_tokens``; see :mod:`planwerk.prompts.catalog_budget`)."""

    event: Literal["catalog_capped"]
    shown: int
    """Tools in the planner's catalog."""
    left_out: int
    """Tools left out of it (still callable)."""
    max_tokens: int
    """The catalog's budget in tokens."""


class RetrievalEvent(_Tagged):
    """The chunks retrieved for the question (``retrieve``); empty without a corpus or a match."""

    event: Literal["retrieval"]
    hits: list[Hit]
    query: NotRequired[str]
    """What was searched when it is not the question as asked: the question in the corpus's language."""


class PlanEvent(_Tagged):
    """A plan passed the check and will run (``check``), or, with ``from_context``, the empty plan that answers
    from the retrieved context."""

    event: Literal["plan"]
    plan: PlanData
    attempt: int
    reordered: bool
    """The planner's steps contradicted its references and were re-ordered in code into valid steps."""
    completed: NotRequired[list[str]]
    """Places the question names that the planner left out, planned in code by copying its chain for the one
    place it planned (:func:`planwerk.core.scope.complete_missing_places`)."""
    named: NotRequired[list[dict[str, str]]]
    """Place arguments that named a city only in the genitive, written as its name in code, each as
    ``{"call_id": "geo", "old": "Barcelonas", "new": "Barcelona"}``: the plan check takes the genitive for the
    city, a geocoder does not (:func:`planwerk.core.scope.name_inflected_places`)."""
    from_context: NotRequired[bool]
    """The planner's plan was rejected, and the retrieved context answers the question by itself while the plan's
    tools fit nothing it asks: nothing is called, the answer is written from the context (``check``)."""
    substituted: NotRequired[list[dict[str, Any]]]
    """The one place the planner invented (a few-shot example's city) replaced in code by the one it left out,
    as ``{"old": "Palma", "new": "Barcelona", "calls": ["geo_barcelona"], "renamed": {"geo_palma":
    "geo_barcelona", "parks_palma": "parks_barcelona"}}``: ``calls`` are the calls whose arguments named it (by
    their new ids), ``renamed`` the ids that contained it (:func:`planwerk.core.scope.substitute_invented_place`)."""
    swapped: NotRequired[list[str]]
    """Calls the planner wrote again as they had run although their result contradicted a clock time the question
    gives for a place, run with their two place arguments swapped in code (``check``)."""


class ReplanEvent(_Tagged):
    """The planner is asked again: its reply was rejected (``check``) or calls failed (``verify``); ``ask_user``:
    its plan needed a value nobody gave, and the user is asked instead."""

    event: Literal["replan"]
    reason: str
    decision: Literal["rejected", "self_correct", "replan", "next_round", "ask_user"]
    attempt: int


class StepEvent(_Tagged):
    """The resolver dispatches a step: these calls start now, concurrently (``resolve_refs``)."""

    event: Literal["step"]
    index: int
    calls: list[str]


class ApprovalRequiredEvent(_Tagged):
    """A call waits for a person's approval before it runs (``resolve_refs``; the thread then interrupts)."""

    event: Literal["approval_required"]
    id: str
    tool: str
    args: dict[str, Any]


class ToolCallEvent(_Tagged):
    """A tool call starts with its resolved arguments (``call_tool``)."""

    event: Literal["tool_call"]
    id: str
    tool: str
    args: dict[str, Any]
    attempt: int


class ToolProgressEvent(_Tagged):
    """A running tool call reported progress (``call_tool``; an MCP ``notifications/progress``).

    Sent as the server sends them, between the call's ``tool_call`` and its ``tool_result`` or ``tool_error``.
    """

    event: Literal["tool_progress"]
    id: str
    tool: str
    progress: float
    """How far the call is; increases with every notification."""
    total: float | None
    """The value ``progress`` reaches at the end; None when the server does not know it."""
    message: str | None
    """What the server says it is doing; None when it says nothing."""


class ToolResultEvent(_Tagged):
    """A tool call returned (``call_tool``)."""

    event: Literal["tool_result"]
    id: str
    tool: str
    result: Any
    duration_s: float


class ToolErrorEvent(_Tagged):
    """A tool call failed, was skipped, or its references could not be resolved (``call_tool``, ``resolve_refs``)."""

    event: Literal["tool_error"]
    id: str
    tool: str
    error: str
    kind: FailureKind
    retrying: bool
    """The call is tried again (a transient failure under the retry policy)."""


class SamplingRequestEvent(_Tagged):
    """A server asked, during a tool call, for the run's model to answer a prompt (MCP sampling; ``call_tool``)."""

    event: Literal["sampling_request"]
    id: str
    """The call during which the server asked."""
    tool: str
    server: str
    prompt: str
    """The last message of the server's prompt (at most 500 characters)."""
    max_tokens: int
    """The answer's token limit: the server's ``maxTokens`` capped by planwerk's sampling policy."""


class SamplingResultEvent(_Tagged):
    """The run's model answered a server's sampling request, or planwerk refused it (``error``)."""

    event: Literal["sampling_result"]
    id: str
    tool: str
    server: str
    text: NotRequired[str]
    """The model's answer, as the server gets it."""
    stop_reason: NotRequired[Literal["endTurn", "maxTokens"]]
    duration_s: NotRequired[float]
    error: NotRequired[str]
    """Why planwerk did not sample (a bound of the sampling policy, non-text content, the model failed)."""


class AskUserEvent(_Tagged):
    """The agent asks the user (``check`` or ``verify``); the thread then interrupts."""

    event: Literal["ask_user"]
    question: str


class AnswerRejectedEvent(_Tagged):
    """The finalizer's answer failed the answer check (``check_answer``): it states something no result, retrieved
    text or question holds, names no failed service, or misses the last result or the context's facts."""

    event: Literal["answer_rejected"]
    answer: str
    """The rejected answer."""
    problems: list[str]
    """What is wrong, in words (the answer's language)."""
    attempt: int
    """1 for the first answer, 2 for the regenerated one."""
    next: Literal["regenerate", "fallback"]
    """What follows: one regeneration naming the problems, or the deterministic answer built from the results."""


class FinalAnswerEvent(_Tagged):
    """The answer, with what it cost (``check_answer`` for an accepted draft, ``fallback`` for the deterministic
    answer or the no-plan text)."""

    event: Literal["final_answer"]
    answer: str
    metadata: dict[str, Any]


class InterruptEvent(_Tagged):
    """The run paused (emitted by :class:`~planwerk.agent.Agent`, from LangGraph's interrupt).

    ``kind`` is ``ask_user`` (answer with text), ``approval`` (answer ``approve``, ``reject`` or
    ``{"action": "edit", "args": {...}}``) or ``elicitation`` (a server asks during a call: answer the content as a
    JSON object, ``decline`` or ``cancel``; see ``docs/capabilities.md``); ``interrupt_id`` tells several pending
    interrupts apart.
    """

    event: Literal["interrupt"]
    kind: Literal["ask_user", "approval", "elicitation"]
    interrupt_id: str
    question: NotRequired[str]
    """For ``ask_user``: what the agent asks; for ``approval``: a sentence naming the call."""
    id: NotRequired[str]
    tool: NotRequired[str]
    args: NotRequired[dict[str, Any]]
    server: NotRequired[str]
    """For ``elicitation``: the server that asks."""
    schema: NotRequired[dict[str, Any] | None]
    """For ``elicitation``: the requested JSON schema of the answer (None for a URL request)."""
    form: NotRequired[str]
    """For ``elicitation``: the schema's fields in one line."""
    url: NotRequired[str]
    """For an ``elicitation`` in URL mode: where the person should go."""
    error: NotRequired[str]
    """Why the previous answer was not accepted (asked again)."""


Event = (
    StartEvent
    | ServerErrorEvent
    | RetrievalEvent
    | CatalogCappedEvent
    | PlanEvent
    | ReplanEvent
    | StepEvent
    | ApprovalRequiredEvent
    | ToolCallEvent
    | ToolProgressEvent
    | ToolResultEvent
    | ToolErrorEvent
    | SamplingRequestEvent
    | SamplingResultEvent
    | AskUserEvent
    | AnswerRejectedEvent
    | FinalAnswerEvent
    | InterruptEvent
)
"""Any planwerk event."""

EventName = Literal[
    "start",
    "server_error",
    "retrieval",
    "catalog_capped",
    "plan",
    "replan",
    "step",
    "approval_required",
    "tool_call",
    "tool_progress",
    "tool_result",
    "tool_error",
    "sampling_request",
    "sampling_result",
    "ask_user",
    "answer_rejected",
    "final_answer",
    "interrupt",
]
"""The ``event`` key of every event."""

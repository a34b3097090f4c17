"""planwerk's events: one typed definition for the nodes that emit them, the Python API and the CLI.

The graph's nodes write them to LangGraph's ``custom`` stream; :class:`planwerk.agent.Agent` adds ``thread_id``
and turns LangGraph interrupts into :class:`InterruptEvent`. Every event is a JSON-able dict with an ``event`` key,
so ``planwerk ask --json`` prints them as they are. In the order a run emits them::

    start → retrieval → plan | replan … → step → (approval_required) → tool_call → tool_result | tool_error …
          → (ask_user) → (answer_rejected …) → final_answer
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from planwerk.core.calls import FailureKind
from planwerk.rag.base import Hit


class _Tagged(TypedDict):
    thread_id: NotRequired[str]
    """Added by :class:`~planwerk.agent.Agent` (the graph itself does not know it)."""


class StartEvent(_Tagged):
    """A question starts (``prepare``)."""

    event: Literal["start"]
    question: str


class RetrievalEvent(_Tagged):
    """The chunks retrieved for the question (``retrieve``); empty without a corpus or a match."""

    event: Literal["retrieval"]
    hits: list[Hit]


class PlanEvent(_Tagged):
    """A plan passed the check and will run (``check``)."""

    event: Literal["plan"]
    plan: dict[str, Any]
    attempt: int
    reordered: bool
    """The planner's steps contradicted its references and were re-ordered in code into valid steps."""


class ReplanEvent(_Tagged):
    """The planner is asked again: its reply was rejected (``check``) or calls failed (``verify``)."""

    event: Literal["replan"]
    reason: str
    decision: Literal["rejected", "self_correct", "replan"]
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


class AskUserEvent(_Tagged):
    """The agent asks the user (``check`` or ``verify``); the thread then interrupts."""

    event: Literal["ask_user"]
    question: str


class AnswerRejectedEvent(_Tagged):
    """The finalizer's answer failed the answer check (``finalize``): it states something no result, retrieved
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
    """The answer, with what it cost (``finalize``)."""

    event: Literal["final_answer"]
    answer: str
    metadata: dict[str, Any]


class InterruptEvent(_Tagged):
    """The run paused (emitted by :class:`~planwerk.agent.Agent`, from LangGraph's interrupt).

    ``kind`` is ``ask_user`` (answer with text) or ``approval`` (answer ``approve``, ``reject`` or
    ``{"action": "edit", "args": {...}}``); ``interrupt_id`` tells several pending interrupts apart.
    """

    event: Literal["interrupt"]
    kind: Literal["ask_user", "approval"]
    interrupt_id: str
    question: NotRequired[str]
    """For ``ask_user``: what the agent asks; for ``approval``: a sentence naming the call."""
    id: NotRequired[str]
    tool: NotRequired[str]
    args: NotRequired[dict[str, Any]]


Event = (
    StartEvent
    | RetrievalEvent
    | PlanEvent
    | ReplanEvent
    | StepEvent
    | ApprovalRequiredEvent
    | ToolCallEvent
    | ToolResultEvent
    | ToolErrorEvent
    | AskUserEvent
    | AnswerRejectedEvent
    | FinalAnswerEvent
    | InterruptEvent
)
"""Any planwerk event."""

EventName = Literal[
    "start",
    "retrieval",
    "plan",
    "replan",
    "step",
    "approval_required",
    "tool_call",
    "tool_result",
    "tool_error",
    "ask_user",
    "answer_rejected",
    "final_answer",
    "interrupt",
]
"""The ``event`` key of every event."""

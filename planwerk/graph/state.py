"""The graph's typed state. ``typing_extensions.TypedDict`` so the LangGraph server can build schemas (Py 3.11)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from planwerk.core.calls import CallRecord
from planwerk.core.plan import PlanData
from planwerk.core.vote import Candidate
from planwerk.rag.base import Hit

Verdict = Literal["done", "self_correct", "replan", "ask_user", "give_up", "next_round"]

AnswerSource = Literal["no_plan", "planner", "model", "regenerated", "amended", "fallback"]
"""Where the final answer came from: the fixed no-plan text, the planner's ``final``, the answer model's first or
second answer, a model answer amended in code (an unnamed failed service, a missing source), or the deterministic
answer built from the results."""

DraftVerdict = Literal["unchecked", "accepted", "rejected"]
"""Where a draft stands in the answer loop: written, not yet checked; accepted (delivered); rejected by the check."""


def append_calls(current: list[CallRecord] | None, update: list[CallRecord] | None) -> list[CallRecord]:
    """The call log grows; ``None`` resets it for a new question."""
    if update is None:
        return []
    return [*(current or []), *update]


def add_usage(current: dict[str, float] | None, update: dict[str, float] | None) -> dict[str, float]:
    """Model usage counters add up; ``None`` resets them for a new question."""
    if update is None:
        return {}
    merged = dict(current or {})
    for key, value in update.items():
        merged[key] = merged.get(key, 0) + value
    return merged


class Draft(TypedDict):
    """An answer on its way through the answer loop (``answer`` → ``check_answer`` → ``regenerate`` | ``fallback``)."""

    text: str
    """The answer as the user would read it (placeholders written out)."""
    written: list[str]
    """The model's answers as it wrote them, before rendering (the regeneration shows the model its own)."""
    message_id: str | None
    """The model reply's id while the text is that reply's, so a chat that saw it shows the answer once."""
    source: AnswerSource
    attempt: int
    """1 for the first answer, 2 for the regenerated one."""
    verdict: DraftVerdict
    problems: list[str]
    """What the check found wrong with the first answer, in words (the ``grounding_problems`` metadata)."""
    repair: str | None
    """The request for a second answer naming the problems, written for the model (never shown to people)."""
    kept_calls: list[str] | None
    """The call ids the answer reports (self-consistency: the winning sample's), ``None`` for all."""
    votes: dict[str, int] | None
    references: dict[str, Any] | None
    """What answering by reference did (``answer_references`` metadata), ``None`` when it was off."""


class InputState(TypedDict):
    """What a caller sends: LangGraph's chat convention (Studio's chat view uses it)."""

    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(InputState):
    """Everything a thread keeps between steps and across restarts."""

    user: NotRequired[dict[str, Any]]
    """The user's answers to ``ask_user`` (``answer``), for ``user.*`` references; ``user.raw``, the question, is
    derived from the question where references are resolved (:func:`planwerk.core.refs.user_fields`) and where a
    program reads the state (:mod:`planwerk.graph.derived`). The question itself is kept once, as its message in
    ``messages`` (:func:`planwerk.graph.nodes.chat.question_index`); the views of the whole state carry it as
    ``question``."""
    hits: NotRequired[list[Hit]]
    """Retrieved chunks with score and source."""
    retrieval_query: NotRequired[str | None]
    """The question as searched, in the corpus's language, when it was asked in another (``None``: as asked)."""
    reply: NotRequired[str | None]
    """The planner's last raw reply, waiting for the check."""
    replies: NotRequired[list[str] | None]
    """All sampled replies of the last planner call when it sampled several (self-consistency), else ``None``."""
    candidates: NotRequired[list[Candidate] | None]
    """The distinct sampled plans inside a merged plan, for the vote (self-consistency), else ``None``."""
    plan: NotRequired[PlanData | None]
    """The plan that runs (or ran) for the current question, after any re-ordering of its steps: validated once by
    ``check``, read through :meth:`planwerk.core.plan.Plan.from_stored` (plain data, so every checkpointer
    stores it)."""
    unanchored: NotRequired[bool]
    """The plan was anchored in nothing the person said when the check asked whether it was meant, and it was
    written again as it was: its calls wait for a person's approval (``Profile.approve_unanchored``)."""
    next_step: NotRequired[int]
    """Index of the plan's next step for the resolver; steps before it have finished."""
    plan_errors: NotRequired[list[str]]
    """Why the last reply or plan was rejected, or which calls failed (for people and Studio)."""
    feedback: NotRequired[list[dict[str, str]]]
    """``{"reply", "problems"}`` pairs the planner sees on its next attempt (self-correction)."""
    clarifications: NotRequired[list[dict[str, str]]]
    """``{"question", "answer"}`` pairs from ``ask_user`` interrupts for the current question."""
    calls: NotRequired[Annotated[list[CallRecord], append_calls]]
    """The call log: tool, step, resolved arguments, result or error with its kind, duration. The one place a
    result is kept: results by call id are derived from it (:func:`planwerk.core.calls.results_of`); a step's
    records are in the checkpoint when the step ends."""
    attempts: NotRequired[int]
    """Planner attempts for the current question (in the current planning round)."""
    rounds: NotRequired[int]
    """Planning rounds that followed the first for the current question (plans that said ``"next_round"``)."""
    verdict: NotRequired[Verdict | None]
    """The verifier's decision (``None`` until it decided for the current question)."""
    plan_message: NotRequired[str | None]
    """The id of the AI message that carries the running plan's ``tool_calls`` (:mod:`planwerk.graph.nodes.chat`)."""
    pending_question: NotRequired[str | None]
    """What to ask the user (set by the check or the verifier)."""
    answer: NotRequired[str | None]
    """The final answer for the current question."""
    draft: NotRequired[Draft | None]
    """The answer loop's current draft for the current question."""
    usage: NotRequired[Annotated[dict[str, float], add_usage]]
    """Model calls and tokens for the current question."""
    started_at: NotRequired[float]
    """Wall-clock start of the current question (``time.time()``)."""


THREAD_KEYS = frozenset({"messages", "user", "started_at"})
"""The keys a new question sets itself (``prepare``) or that carry over from earlier questions."""

QUESTION_START: Mapping[str, Any] = MappingProxyType(
    {
        "hits": [],
        "retrieval_query": None,
        "reply": None,
        "replies": None,
        "candidates": None,
        "plan": None,
        "unanchored": False,
        "next_step": 0,
        "plan_errors": [],
        "feedback": [],
        "clarifications": [],
        "calls": None,
        "attempts": 0,
        "rounds": 0,
        "verdict": None,
        "plan_message": None,
        "pending_question": None,
        "answer": None,
        "draft": None,
        "usage": None,
    }
)
"""Every other key of :class:`AgentState` with the value a new question starts it at (``None`` empties a channel
with a reducer). One declared set: a key added to the state must be listed here or in :data:`THREAD_KEYS` (a test
holds the two against the state's annotations), so no question sees what the one before left."""


class CallTask(TypedDict):
    """The per-call node's input, sent by the resolver: one call with its references resolved."""

    id: str
    tool: str
    step: int
    args: dict[str, Any]
    approval: bool
    """Whether a person must approve the call before it runs (an interrupt)."""
    tool_call_id: NotRequired[str]
    """The id of this call in the plan's AI message: the call's ``ToolMessage`` answers it."""
    origins: NotRequired[list[str]]
    """For an approval: each argument value taken from an ``extract`` of untrusted text, and where it came from."""
    language: NotRequired[str]
    """For an approval: the language of the question, which the person reads the approval request in."""


class CallInput(TypedDict):
    """What the resolver sends to the per-call node (one key, so the graph gains one channel, not five)."""

    call: CallTask


class OutputState(TypedDict):
    """What a run returns: the conversation, the answer, and what produced it."""

    messages: list[AnyMessage]
    answer: NotRequired[str | None]
    plan: NotRequired[PlanData | None]
    results: NotRequired[dict[str, Any]]
    """Results by call id, derived from ``calls`` where a run's output or a thread's state is read
    (:class:`planwerk.graph.builder.DurableGraph`); never written by a node, so never stored."""
    calls: NotRequired[list[CallRecord]]
    hits: NotRequired[list[Hit]]

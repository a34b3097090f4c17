"""Asking the user: a LangGraph interrupt, resumed with ``Command(resume="<answer>")`` or a chat UI's decision.

The interrupt value is in LangChain's human-in-the-loop schema (:mod:`planwerk.core.hitl`): one action
``ask_user`` whose argument ``answer`` the person fills in (agent-chat-ui draws it as a field), so a UI resumes
with ``{"decisions": [{"type": "edit", "edited_action": {"name": "ask_user", "args": {"answer": "..."}}}]}``;
agent-inbox's ``{"type": "response", "args": "..."}`` and a plain string work too.

The ``ask_user`` event and the question as an AI message come from the node that decided to ask (``check`` or
``verify``), not from here: LangGraph runs this node again from the top on resume, and both must appear once, the
message before the interrupt (a chat UI draws the interrupt under the last AI message).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from planwerk.core.hitl import ANSWER_ARG, ASK_ACTION, DecisionError, hitl_request, is_decision, read_decision
from planwerk.graph.context import Context
from planwerk.graph.nodes.common import context_of, person_texts, question_of
from planwerk.graph.nodes.prepare import MAX_QUESTION_CHARS
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState

MAX_ANSWER_CHARS = MAX_QUESTION_CHARS
"""A longer answer is refused like a longer question: it would be kept in every later checkpoint and prompt."""
MAX_ANSWER_ASKS = 3
"""An answer over the limit is asked for again (naming the problem) this many times, then replaced by a note."""


def answer_text(answer: Any) -> str:
    """The text of a resume value: Studio and the SDK resume with a string; a form may send ``{"answer": ...}``;
    a chat UI sends a decision (the edited ``answer`` argument, or the text of a ``respond`` or ``reject``).
    Raises :class:`~planwerk.core.hitl.DecisionError` for a decision that is none of the accepted forms."""
    if is_decision(answer):
        decision = read_decision(answer)
        if decision.type == "edit":
            return str(decision.args.get(ANSWER_ARG, ""))
        return decision.message
    return str(answer.get("answer", answer)) if isinstance(answer, dict) else str(answer)


def answer_problem(answer: Any) -> str | None:
    """Why ``answer`` cannot be taken (too long, an empty or unreadable decision), or ``None``."""
    try:
        text = answer_text(answer)
    except DecisionError as error:
        return str(error)
    if is_decision(answer) and not text.strip():
        return f'the answer is empty; fill in "{ANSWER_ARG}"'
    length = len(text)
    if length > MAX_ANSWER_CHARS:
        return f"the answer has {length:,} characters; at most {MAX_ANSWER_CHARS:,} are accepted"
    return None


async def ask_user(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause the thread with the question; the answer becomes ``user.answer`` and goes to the planner."""
    profile = profile_of(context_of(runtime))
    question = state.get("pending_question") or person_texts(question_of(state), profile).default_clarification
    request: dict[str, Any] = {
        "kind": "ask_user",
        "question": question,
        **hitl_request(ASK_ACTION, {ANSWER_ARG: ""}, question, ("edit", "respond")),
    }
    for _ in range(MAX_ANSWER_ASKS):
        answer = interrupt(request)
        problem = answer_problem(answer)
        if problem is None:
            text = answer_text(answer)
            break
        request = {**request, "error": problem}  # asked again: the thread keeps waiting, the text is not kept
    else:
        text = f"[answer rejected: {problem}]"
    return {
        "messages": [HumanMessage(text)],  # the question is in the messages already (asked_message)
        "user": {**state.get("user", {}), "answer": text},
        "clarifications": [*state.get("clarifications", []), {"question": question, "answer": text}],
        "pending_question": None,
        "plan": None,
        "feedback": [],
    }

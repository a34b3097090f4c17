"""What a run adds to the thread's ``messages``, the LangChain way, so chat UIs show what happened.

- a short progress text the moment a question is taken (before the planner runs, which may take minutes); it also
  marks where the question is, which the state keeps only as its message (:func:`question_index`);
- the accepted plan as an ``AIMessage`` with ``tool_calls`` (one per planned call; its arguments as planned, then
  as resolved once its step runs);
- each call's outcome as a ``ToolMessage`` (``status="error"`` for a failure), its content clipped;
- a question asked back as an ``AIMessage`` the moment it is asked (a chat UI draws the interrupt under it);
- then the answer (the answer loop: ``answer`` … ``check_answer``). A model's draft streams as it is decoded (the
  chat model call is not tagged ``nostream``, see :data:`STREAMED_ANSWER_TAGS`) and is stored as a ``draft`` message
  under the id its tokens streamed with; the checked answer replaces it (same id, the amended text where code
  amended it), and a rejected draft is removed (``RemoveMessage``) before the next one is written. A chat that
  follows the state (agent-chat-ui: ``values`` beside ``messages-tuple``) therefore ends with the checked answer
  only, never a rejected draft.

The programs' view stays the ``custom`` events and the state's ``calls`` and ``results``; the messages carry a
clipped copy of each result only. The planner's history leaves the progress, plan and tool messages out
(:func:`is_conversation`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage

from planwerk.core.calls import CallRecord, clip_error
from planwerk.core.plan import Plan

MessageKind = Literal["progress", "plan", "question", "draft"]
"""What an AI message planwerk adds between the question and the answer says."""
KIND_KEY = "planwerk"
"""The key in an AI message's ``response_metadata`` that names its :data:`MessageKind`."""
MAX_TOOL_MESSAGE_CHARS = 4_000
"""A tool message's content is cut to this many characters (errors are cut the same way): the full result stays in
the state's ``results``, and the message is kept in every later checkpoint."""


def _id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def progress_message(text: str) -> AIMessage:
    """The first sign of a run in a chat."""
    return AIMessage(text, id=_id("progress"), response_metadata={KIND_KEY: "progress"})


def question_index(messages: Sequence[BaseMessage]) -> int | None:
    """Where the current question is in a thread's ``messages``: the last human message before the progress message
    ``prepare`` wrote when it took the question. Neither the last human message nor its place tells: an answer to a
    question asked back is a human message after the question, and a new question sent while such an answer is
    awaited follows the question asked back as an answer does. A thread stored before progress messages were
    written: its last human message. ``None`` without any. Before ``prepare`` took a new question, this is still
    the one before (as the stored ``question`` was)."""
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage) and message.response_metadata.get(KIND_KEY) == "progress":
            start = index
            break
    return next((i for i in range(start - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)


def question_text(messages: Sequence[BaseMessage]) -> str:
    """The current question's text as ``prepare`` took it (stripped; :func:`question_index`), ``""`` without one.
    Derived, never stored: the question is kept once, as its message."""
    index = question_index(messages)
    return messages[index].text.strip() if index is not None else ""


def question_message(question: str) -> AIMessage:
    """A question asked back, stored when it is asked."""
    return AIMessage(question, id=_id("question"), response_metadata={KIND_KEY: "question"})


STREAMED_ANSWER_TAGS = ("planwerk:answer",)
"""The tags of an answer model call whose tokens a chat may see as they are decoded (no ``nostream``): a model's
plain answer, checked after it streamed and replaced or removed by id (:func:`draft_message`). The planner's,
the translator's, the extractor's and the sampling calls are ``nostream``; so is an answer by reference, whose
tokens are placeholders until rendered."""


def draft_message(text: str, message_id: str) -> AIMessage:
    """A streamed draft, not yet checked, under the id its tokens streamed with (a chat shows it once)."""
    return AIMessage(text, id=message_id, response_metadata={KIND_KEY: "draft"})


def is_draft(messages: Sequence[BaseMessage], message_id: str | None) -> bool:
    """Whether ``messages`` hold the draft ``message_id`` (it streamed: the checked answer must take its id)."""
    return message_id is not None and any(
        m.id == message_id and m.response_metadata.get(KIND_KEY) == "draft" for m in messages
    )


def removed_draft(messages: Sequence[BaseMessage], message_id: str | None) -> list[RemoveMessage]:
    """The removal of a rejected draft from ``messages`` (none when it is not there: it did not stream)."""
    return [RemoveMessage(id=message_id)] if message_id is not None and is_draft(messages, message_id) else []


def tool_call_id(message_id: str, call_id: str) -> str:
    """The id of planned call ``call_id`` in the plan message ``message_id`` (unique in the thread, stable)."""
    return f"{message_id}.{call_id}"


def plan_message(plan: Plan, text: str) -> AIMessage:
    """The plan as an AI message with one tool call per planned call; ``text`` takes ``{tools}``."""
    message_id = _id("plan")
    calls = [call for _, call in plan.calls()]
    tools = ", ".join(dict.fromkeys(call.name for call in calls))
    return AIMessage(
        text.format(tools=tools),
        id=message_id,
        tool_calls=[
            {
                "name": call.name,
                "args": dict(call.arguments),
                "id": tool_call_id(message_id, call.id),
                "type": "tool_call",
            }
            for call in calls
        ],
        response_metadata={KIND_KEY: "plan"},
    )


def with_resolved_args(
    messages: Sequence[BaseMessage], message_id: str | None, resolved: Mapping[str, dict[str, Any]]
) -> AIMessage | None:
    """The plan message ``message_id`` with the arguments of the calls in ``resolved`` (call id → arguments) as
    they were resolved (same id: ``add_messages`` replaces it); ``None`` when it is not in ``messages``."""
    if message_id is None:
        return None
    message = next((m for m in reversed(messages) if m.id == message_id and isinstance(m, AIMessage)), None)
    if message is None:
        return None
    by_tool_call = {tool_call_id(message_id, call_id): args for call_id, args in resolved.items()}
    calls = [{**call, "args": dict(by_tool_call.get(call["id"], call["args"]))} for call in message.tool_calls]
    return message.model_copy(update={"tool_calls": calls})


def tool_message(record: CallRecord, tool_call: str) -> ToolMessage:
    """A call's outcome as a tool message answering ``tool_call``: the result as text (JSON for data) or the
    error, cut to :data:`MAX_TOOL_MESSAGE_CHARS`."""
    if record["status"] == "ok":
        result = record["result"]
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    else:
        text = record["error"] or record["status"]
    return ToolMessage(
        clip_error(text, MAX_TOOL_MESSAGE_CHARS),
        tool_call_id=tool_call,
        name=record["tool"],
        status="success" if record["status"] == "ok" else "error",
    )


def is_conversation(message: BaseMessage) -> bool:
    """Whether ``message`` is part of the conversation a planner or answer model sees: questions, answers and
    questions asked back, not progress texts, plans, unchecked drafts or tool results (those are in the state, and
    in the prompt)."""
    if isinstance(message, ToolMessage):
        return False
    if isinstance(message, AIMessage):
        if message.tool_calls:
            return False
        return message.response_metadata.get(KIND_KEY) not in ("progress", "plan", "draft")
    return True

"""Interrupts in LangChain's human-in-the-loop schema (``HumanInTheLoopMiddleware``), the one chat UIs draw.

An interrupt value carries ``action_requests`` (``[{name, args, description}]``) and ``review_configs``
(``[{action_name, allowed_decisions}]``) beside planwerk's own keys (``kind``, ``question``, ...), so
agent-chat-ui draws it with buttons and fields, and programs keep reading ``kind``. A UI answers with
``{"decisions": [{"type": "approve"}]}``, ``{"type": "edit", "edited_action": {"name", "args"}}`` or
``{"type": "reject", "message": "..."}``; the older agent-inbox form (a list of ``{"type": "accept" | "edit" |
"response" | "ignore", "args": ...}``) is read too. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""What a person decided: LangChain's three, and ``respond`` (a free-text reply, agent-inbox's ``response``)."""

ASK_ACTION = "ask_user"
"""The action name of a question asked back: its one argument is the answer (:data:`ANSWER_ARG`)."""
ANSWER_ARG = "answer"
"""The argument a UI fills in to answer a question asked back (drawn as an editable field)."""

_LEGACY_TYPES: dict[str, DecisionType] = {
    "approve": "approve",
    "accept": "approve",
    "edit": "edit",
    "reject": "reject",
    "ignore": "reject",
    "respond": "respond",
    "response": "respond",
}


class DecisionError(ValueError):
    """A resume value that looks like a HITL decision but is none of the accepted forms."""


@dataclass(frozen=True)
class HumanDecision:
    """One decision, whatever form it came in."""

    type: DecisionType
    args: dict[str, Any] = field(default_factory=dict)
    """For ``edit``: the edited action's arguments."""
    message: str = ""
    """For ``reject``: why (may be empty); for ``respond``: the reply."""


def hitl_request(
    name: str, args: Mapping[str, Any], description: str, allowed: tuple[DecisionType, ...]
) -> dict[str, Any]:
    """The ``action_requests`` and ``review_configs`` of one action (merge them into an interrupt value)."""
    # ``respond`` is no LangChain decision type: UIs that check allowed_decisions only know the other three.
    shown = [kind for kind in allowed if kind != "respond"]
    return {
        "action_requests": [{"name": name, "args": dict(args), "description": description}],
        "review_configs": [{"action_name": name, "allowed_decisions": shown}],
    }


def is_decision(value: Any) -> bool:
    """Whether ``value`` is a resume value in the HITL schema (new or agent-inbox form), not a plain answer."""
    if isinstance(value, Mapping):
        if "decisions" in value:
            return True
        return isinstance(value.get("type"), str) and value["type"] in _LEGACY_TYPES and set(value) <= {
            "type", "args", "message", "edited_action"}  # fmt: skip
    if isinstance(value, list) and len(value) == 1:
        return is_decision(value[0])
    return False


def read_decision(value: Any) -> HumanDecision:
    """The one decision in a resume value: ``{"decisions": [d]}``, ``[d]`` or ``d``, ``d`` in the LangChain form or
    agent-inbox's. Raises :class:`DecisionError` saying what was wrong and what is expected."""
    expected = (
        'expected {"decisions": [{"type": "approve"}]}, [{"type": "edit", "edited_action": {"name": ..., "args": '
        '{...}}}] or {"type": "reject", "message": "..."}'
    )
    if isinstance(value, Mapping) and "decisions" in value:
        value = value["decisions"]
    if isinstance(value, list):
        if len(value) != 1:
            raise DecisionError(f"one decision is expected per interrupt, got {len(value)}; {expected}")
        value = value[0]
    if not isinstance(value, Mapping):
        raise DecisionError(f"a decision must be an object, got {type(value).__name__}; {expected}")
    kind = _LEGACY_TYPES.get(str(value.get("type", "")).strip().lower())
    if kind is None:
        raise DecisionError(f"unknown decision type {str(value.get('type'))[:40]!r}; {expected}")
    if kind == "edit":
        edited = value.get("edited_action")
        if edited is None:  # agent-inbox: {"type": "edit", "args": {"action": ..., "args": {...}}}
            edited = value.get("args")
        args = edited.get("args") if isinstance(edited, Mapping) else None
        if not isinstance(args, Mapping):
            raise DecisionError(f'"edit" needs "edited_action": {{"name": ..., "args": {{...}}}}; {expected}')
        return HumanDecision("edit", args=dict(args))
    if kind == "respond":
        text = value.get("message", value.get("args"))
        return HumanDecision("respond", message="" if text is None else str(text))
    if kind == "reject":
        text = value.get("message", value.get("args"))
        return HumanDecision("reject", message="" if text is None else str(text))
    return HumanDecision("approve")

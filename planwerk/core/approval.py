"""A person's answer to an approval interrupt: approve, edit the arguments, or reject. Pure: no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from planwerk.core.hitl import DecisionError, is_decision, read_decision

ApprovalAction = Literal["approve", "edit", "reject"]

EXPECTED = 'expected "approve", "reject", {"action": "reject", "reason": "..."} or {"action": "edit", "args": {...}}'
"""What an approval answer may be, for error messages."""


class ApprovalError(ValueError):
    """An answer to an approval interrupt that is none of the accepted forms."""


@dataclass(frozen=True)
class ApprovalDecision:
    """What to do with a call that waited for approval."""

    action: ApprovalAction
    args: dict[str, Any] = field(default_factory=dict)
    """For ``edit``: the arguments to call the tool with instead."""
    reason: str = ""
    """For ``reject``: why, when the person said."""


_APPROVE_WORDS = {"approve", "approved", "yes", "y", "ok", "ja", "j"}
_REJECT_WORDS = {"reject", "rejected", "no", "n", "nein", "deny"}


def parse_approval(value: Any, *, max_args_bytes: int | None = None) -> ApprovalDecision:
    """Read a resume value: ``True``/``"approve"``/``"yes"``, ``False``/``"reject"``/``"no"``, or a dict with
    ``action`` (``approve``, ``edit`` with ``args``, ``reject`` with an optional ``reason``).

    Edited ``args`` larger than ``max_args_bytes`` as JSON are refused, as the plan's resolved arguments are
    (``Context.max_argument_bytes``): they would be kept in every later checkpoint.

    A chat UI's decision in LangChain's human-in-the-loop schema (:mod:`planwerk.core.hitl`) is read too:
    ``{"decisions": [{"type": "approve"}]}``, ``edit`` with ``edited_action.args``, ``reject`` with ``message``
    (a free-text ``respond`` is a rejection with that reason).

    Raises :class:`ApprovalError` saying what was wrong and what is expected.
    """
    if is_decision(value):
        try:
            decision = read_decision(value)
        except DecisionError as error:
            raise ApprovalError(str(error)) from None
        if decision.type == "approve":
            return ApprovalDecision("approve")
        if decision.type == "edit":
            value = {"action": "edit", "args": decision.args}
        else:
            return ApprovalDecision("reject", reason=decision.message[:500])
    if isinstance(value, bool):
        return ApprovalDecision("approve" if value else "reject")
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _APPROVE_WORDS:
            return ApprovalDecision("approve")
        if word in _REJECT_WORDS:
            return ApprovalDecision("reject")
        raise ApprovalError(f"unknown approval answer {value[:80]!r}; {EXPECTED}")
    if isinstance(value, Mapping):
        action = str(value.get("action", "")).strip().lower()
        if action == "approve":
            return ApprovalDecision("approve")
        if action == "reject":
            return ApprovalDecision("reject", reason=str(value.get("reason") or "")[:500])
        if action == "edit":
            args = value.get("args")
            if not isinstance(args, Mapping):
                raise ApprovalError(f'"edit" needs "args", an object of the new arguments; {EXPECTED}')
            if max_args_bytes is not None:
                size = len(json.dumps(args, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
                if size > max_args_bytes:
                    raise ApprovalError(
                        f"the edited arguments are {size:,} bytes of JSON, over the limit of {max_args_bytes:,}; "
                        "send smaller arguments"
                    )
            return ApprovalDecision("edit", args=dict(args))
        raise ApprovalError(f"unknown approval action {action!r}; {EXPECTED}")
    raise ApprovalError(f"an approval answer cannot be a {type(value).__name__}; {EXPECTED}")

"""Answers to an approval interrupt."""

from __future__ import annotations

from typing import Any

import pytest

from planwerk.core.approval import ApprovalDecision, ApprovalError, parse_approval


@pytest.mark.parametrize(
    ("value", "decision"),
    [
        (True, ApprovalDecision("approve")),
        ("approve", ApprovalDecision("approve")),
        (" Ja ", ApprovalDecision("approve")),
        (False, ApprovalDecision("reject")),
        ("no", ApprovalDecision("reject")),
        ({"action": "reject", "reason": "zu teuer"}, ApprovalDecision("reject", reason="zu teuer")),
        ({"action": "edit", "args": {"key": "k2"}}, ApprovalDecision("edit", args={"key": "k2"})),
        ({"action": "approve"}, ApprovalDecision("approve")),
    ],
)
def test_accepted_answers(value: Any, decision: ApprovalDecision) -> None:
    assert parse_approval(value) == decision


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("vielleicht", "unknown approval answer 'vielleicht'"),
        ({"action": "edit"}, '"edit" needs "args"'),
        ({"action": "edit", "args": [1]}, '"edit" needs "args"'),
        ({"action": "launch"}, "unknown approval action 'launch'"),
        (42, "cannot be a int"),
    ],
)
def test_other_answers_say_what_is_expected(value: Any, problem: str) -> None:
    with pytest.raises(ApprovalError, match="expected") as info:
        parse_approval(value)
    assert problem in str(info.value)

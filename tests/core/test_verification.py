"""The verifier decides on failure kinds, never on the wording of an error."""

from __future__ import annotations

import pytest

from planwerk.core.calls import FailureKind, call_record
from planwerk.core.verification import verify_calls


def failed(kind: FailureKind, error: str = "boom", call_id: str = "x") -> dict:
    return call_record(call_id, "tool", error=error, kind=kind)


def test_all_ok_is_done() -> None:
    assert verify_calls([call_record("a", "t", result=1)], 1, 3).decision == "done"


@pytest.mark.parametrize(
    ("kinds", "attempts", "decision"),
    [
        (["invalid_arguments"], 1, "self_correct"),
        (["ref", "skipped"], 1, "self_correct"),
        (["not_found"], 1, "self_correct"),
        (["not_found"], 2, "ask_user"),
        (["unclear"], 1, "ask_user"),  # the value is in a text the planner never reads: ask at once
        (["unclear", "skipped"], 3, "ask_user"),  # even with no attempts left
        (["error"], 1, "replan"),
        (["error", "invalid_arguments"], 1, "replan"),
        (["unavailable"], 1, "give_up"),
        (["timeout", "skipped"], 1, "give_up"),
        (["rejected", "invalid_arguments"], 1, "give_up"),
        (["invalid_arguments"], 3, "give_up"),
    ],
)
def test_decisions_follow_the_kinds(kinds: list[FailureKind], attempts: int, decision: str) -> None:
    calls = [failed(kind, call_id=f"c{i}") for i, kind in enumerate(kinds)]
    assert verify_calls(calls, attempts, 3).decision == decision


def test_message_text_does_not_decide() -> None:
    # Words that the old substring verifier reacted to, under kinds that say otherwise.
    assert verify_calls([failed("error", "place not found, server unavailable, timed out")], 2, 3).decision == "replan"
    assert verify_calls([failed("not_found", "keine Treffer")], 2, 3).decision == "ask_user"


def test_ask_user_names_the_call_that_found_nothing() -> None:
    outcome = verify_calls([failed("error", call_id="a"), failed("not_found", "no place", call_id="b")], 2, 3)
    assert outcome.decision == "ask_user" and outcome.not_found is not None and outcome.not_found["id"] == "b"
    assert "- b (tool, not_found): no place" in outcome.reason

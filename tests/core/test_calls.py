"""Results by call id are derived from the call log exactly as the graph's former ``results`` channel merged them."""

from __future__ import annotations

from typing import Any

import pytest

from planwerk.core.calls import CallRecord, call_record, results_of


def channel(records: list[CallRecord]) -> dict[str, Any]:
    """What the former channel held: each successful record's ``{id: result}`` merged in as the node wrote it."""
    held: dict[str, Any] = {}
    for record in records:
        if record["status"] == "ok":
            held = {**held, **{record["id"]: record["result"]}}
    return held


def ok(call_id: str, result: Any, step: int = 0) -> CallRecord:
    return call_record(call_id, "tool", step=step, args={}, result=result)


def failed(call_id: str, kind: Any = "error") -> CallRecord:
    return call_record(call_id, "tool", error="went wrong", kind=kind)


CASES = {
    "no calls": [],
    "one step": [ok("a", 1), ok("b", {"x": 2})],
    "a later round adds": [ok("a", 1), ok("b", 2, step=1), ok("c", 3, step=2)],
    "a retry that succeeds replaces nothing it did not run": [failed("a", "timeout"), ok("a", 1)],
    "a corrected plan reuses an id": [ok("a", 1), ok("a", 2)],
    "a failed rerun keeps the earlier result": [ok("a", 1), failed("a", "invalid_arguments")],
    "a skipped call has no result": [failed("a"), failed("b", "skipped")],
    "a falsy result is a result": [ok("a", None), ok("b", 0), ok("c", "")],
}


@pytest.mark.parametrize("records", CASES.values(), ids=CASES.keys())
def test_results_are_what_the_channel_held(records: list[CallRecord]) -> None:
    assert results_of(records) == channel(records)


def test_the_latest_success_of_a_reused_id_wins_and_failures_leave_it() -> None:
    records = [ok("a", 1), ok("b", 2), ok("a", 3), failed("b"), failed("c", "ref")]
    assert results_of(records) == {"a": 3, "b": 2}
    assert list(results_of(records)) == ["a", "b"]  # the order the ids first succeeded in, as the channel's dict


def test_results_are_read_from_any_iterable_of_records() -> None:
    assert results_of(iter([ok("a", {"v": 1})])) == {"a": {"v": 1}}

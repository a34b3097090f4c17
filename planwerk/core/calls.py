"""The call log: one record per tool call, with a typed failure kind the verifier decides on. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from typing_extensions import TypedDict

CallStatus = Literal["ok", "error", "skipped"]
"""``ok``: the call returned a result; ``error``: it failed; ``skipped``: it never ran (an upstream call failed)."""

FailureKind = Literal[
    "timeout",
    "unavailable",
    "unauthorized",
    "forbidden",
    "invalid_arguments",
    "ref",
    "skipped",
    "not_found",
    "unclear",
    "rejected",
    "error",
]
"""Why a call failed, from the tool source (or the resolver) to the verifier:

- ``timeout``: the call did not finish in time;
- ``unavailable``: the server or service cannot be reached (down, crashed, connection refused);
- ``unauthorized``: the server refused planwerk's credentials (HTTP 401 after a token refresh, or 403); the
  operator's configuration must change, so it is not retried;
- ``forbidden``: planwerk refused the call before sending it (an argument names a file outside the server's
  ``roots`` while the profile enforces them);
- ``invalid_arguments``: the arguments do not fit the tool (the planner can fix them);
- ``ref``: a ``$ref`` could not be resolved against the earlier results (the planner can fix it);
- ``skipped``: not run because a call it depends on failed;
- ``not_found``: the tool ran and found nothing for the given input (e.g. an unknown place);
- ``unclear``: not sent, because a value it takes from an ``extract`` is not in the text read, or not as one
  value (two account numbers); only the user can say which (the verifier asks);
- ``rejected``: a person declined the call at the approval interrupt;
- ``error``: any other failure the tool reported.
"""

TRANSIENT_KINDS: frozenset[FailureKind] = frozenset({"timeout", "unavailable"})
"""Failures that may go away when the same call is tried again (the per-call retry policy retries these)."""


class CallRecord(TypedDict):
    """One entry of the call log."""

    id: str
    """The call's id in the plan."""
    tool: str
    """The tool's name."""
    step: int
    """The plan step the call ran in (after any re-ordering)."""
    args: dict[str, Any] | None
    """The arguments as resolved (``None`` when resolution failed or the call was skipped)."""
    result: Any
    """The normalised result (``None`` on failure)."""
    error: str | None
    """What went wrong, for people and for the planner (``None`` on success)."""
    status: CallStatus
    kind: FailureKind | None
    """Why it failed (``None`` on success)."""
    duration_s: float
    """Wall time of the call itself (0 for calls that never ran)."""


MAX_ERROR_CHARS = 4_000
"""A longer error text is kept cut, with a note: it goes into every later checkpoint and the planner's and the
answer's prompts (results are capped the same way, ``ExecutionPolicy.max_result_chars``)."""


def clip_error(error: str, max_chars: int = MAX_ERROR_CHARS) -> str:
    """``error`` if it has at most ``max_chars`` characters, else its start and a note saying how long it was."""
    if len(error) <= max_chars:
        return error
    return f"{error[:max_chars]} [error of {len(error):,} characters cut to {max_chars:,}]"


def call_record(
    call_id: str,
    tool: str,
    *,
    step: int = 0,
    args: dict[str, Any] | None = None,
    result: Any = None,
    error: str | None = None,
    kind: FailureKind | None = None,
    duration_s: float = 0.0,
) -> CallRecord:
    """A :class:`CallRecord`; a record with an ``error`` must name its ``kind`` (``error`` when unsure)."""
    if error is not None and kind is None:
        kind = "error"
    if error is not None:
        error = clip_error(error)
    status: CallStatus = "ok" if error is None else ("skipped" if kind == "skipped" else "error")
    return CallRecord(
        id=call_id,
        tool=tool,
        step=step,
        args=args,
        result=result if error is None else None,
        error=error,
        status=status,
        kind=kind if error is not None else None,
        duration_s=round(duration_s, 4),
    )


def results_of(calls: Iterable[CallRecord]) -> dict[str, Any]:
    """The results by call id, derived from the call log (the state keeps each result once, in its record).

    Every successful record in log order: a later record of the same id (a later round, a retry, a corrected plan
    reusing the id) replaces the earlier result; a failed or skipped record leaves an earlier result of its id in
    place. This is what the graph's former ``results`` channel held after merging each successful call's result.
    """
    return {record["id"]: record["result"] for record in calls if record["status"] == "ok"}

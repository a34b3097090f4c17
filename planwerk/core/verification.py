"""The verifier's decision after execution: done, self-correct, replan, ask the user, or give up. Pure.

It decides on the calls' failure kinds (:data:`planwerk.core.calls.FailureKind`), set where the failure happened
(the tool source, the resolver, the approval step), never on the wording of an error message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from planwerk.core.calls import CallRecord, FailureKind

Decision = Literal["done", "self_correct", "replan", "ask_user", "give_up"]

FIXABLE_KINDS: frozenset[FailureKind] = frozenset({"invalid_arguments", "ref", "skipped"})
"""Failures the planner can fix with other arguments or references (self-correction)."""
SERVICE_KINDS: frozenset[FailureKind] = frozenset({"timeout", "unavailable", "unauthorized"})
"""A service that is down (or refuses planwerk's credentials) stays so for the next plan too: answer honestly with
what there is instead."""


@dataclass(frozen=True)
class Verification:
    """What to do next, and why (the reason goes to the planner and into the ``replan`` event)."""

    decision: Decision
    reason: str = ""
    not_found: CallRecord | None = None
    """For ``ask_user``: the call that found nothing (the question to the user names it)."""


def verify_calls(calls: Sequence[CallRecord], attempts: int, max_attempts: int) -> Verification:
    """Decide from the latest record of each call of the plan that ran.

    - every call succeeded: ``done``;
    - a person rejected a call, or it was forbidden (a path outside the server's roots): ``give_up`` (planning
      around their decision is not the agent's call);
    - services unreachable, timed out or refusing the credentials (and only skips besides): ``give_up``, an
      honest answer;
    - no planner attempts left: ``give_up``;
    - a value an ``extract`` did not find unambiguously in a text (kind ``unclear``): ``ask_user`` at once;
    - something the user named was not found, on the second attempt or later: ``ask_user``;
    - only fixable failures (bad arguments, references, skips), or a first "not found": ``self_correct``;
    - other tool errors: ``replan`` (another tool or other arguments).
    """
    failed = [c for c in calls if c["status"] != "ok"]
    if not failed:
        return Verification("done")
    reason = "\n".join(f"- {c['id']} ({c['tool']}, {c['kind']}): {c['error']}" for c in failed)
    kinds = {c["kind"] or "error" for c in failed}
    if kinds & {"rejected", "forbidden"}:  # a person's or the operator's decision: not the agent's to plan around
        return Verification("give_up", reason)
    if kinds <= SERVICE_KINDS | {"skipped"} and kinds & SERVICE_KINDS:
        return Verification("give_up", reason)
    if "unclear" in kinds:  # the value is in a text the planner must not read: another plan cannot find it
        return Verification("ask_user", reason, not_found=next(c for c in failed if c["kind"] == "unclear"))
    if attempts >= max_attempts:
        return Verification("give_up", reason)
    if "not_found" in kinds:
        if attempts >= 2:
            first = next(c for c in failed if c["kind"] == "not_found")
            return Verification("ask_user", reason, not_found=first)
        return Verification("self_correct", reason)
    if kinds <= FIXABLE_KINDS:
        return Verification("self_correct", reason)
    return Verification("replan", reason)

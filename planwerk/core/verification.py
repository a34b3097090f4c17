"""The verifier's decision after execution: done, self-correct, replan, ask the user, or give up. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Decision = Literal["done", "self_correct", "replan", "ask_user", "give_up"]
_NOT_FOUND = ("not found", "nicht gefunden", "no result", "keine ergebnisse", "unknown location")
_FIXABLE = ("$ref", "invalid", "validation", "argument", "schema", "skipped")
# A service that is down stays down for the next plan too: answer honestly with what there is instead.
_UNAVAILABLE = ("unreachable", "timed out", "unavailable", "connection", "server down")


@dataclass(frozen=True)
class Verification:
    """What to do next, and why (the reason goes to the planner and into the ``replan`` event)."""

    decision: Decision
    reason: str = ""
    question: str | None = None
    """For ``ask_user``: what to ask."""


def verify_calls(calls: Sequence[Mapping[str, Any]], attempts: int, max_attempts: int) -> Verification:
    """Decide from the call log of the last execution.

    - every call succeeded: ``done``;
    - a call failed because the user's input names something that does not exist, twice: ``ask_user``;
    - failures the planner can fix (bad arguments or references): ``self_correct``;
    - other tool errors: ``replan`` (another tool or other arguments);
    - services unreachable or timed out, or no attempts left: ``give_up`` (an honest answer with what there is).
    """
    failed = [c for c in calls if c.get("status") != "ok"]
    if not failed:
        return Verification("done")
    reason = "\n".join(f"- {c['id']} ({c['tool']}): {c.get('error')}" for c in failed)
    if attempts >= max_attempts:
        return Verification("give_up", reason)
    errors = [str(c.get("error") or "").lower() for c in failed]
    if attempts >= 2 and any(any(marker in e for marker in _NOT_FOUND) for e in errors):
        first = next(c for c, e in zip(failed, errors, strict=True) if any(m in e for m in _NOT_FOUND))
        question = (
            f"Ich konnte mit {first['tool']} nichts finden ({first.get('error')}). Kannst du die Angabe präzisieren?"
        )
        return Verification("ask_user", reason, question)
    if all(any(marker in e for marker in _UNAVAILABLE) or e.startswith("skipped") for e in errors):
        return Verification("give_up", reason)
    if all(any(marker in e for marker in _FIXABLE) for e in errors):
        return Verification("self_correct", reason)
    return Verification("replan", reason)

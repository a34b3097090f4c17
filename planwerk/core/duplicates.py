"""Identical calls in one step: the same tool with the same arguments, run side by side, planned once.

A small model shown an example of one tool called twice in a step (two sets of values) copied that shape for a
question with one set, planning the same call twice (issue 29: a function-calling leaderboard's simple entries
then failed for the second call). Two identical calls in one step run concurrently and cannot see each other's
result, so the second adds nothing a reader needs; for a tool that acts it repeats an effect nobody asked for
twice in so many words, and running an action once is the safe side. A reference to a left-out call points at
the call it repeated. Pure: no I/O.
"""

from __future__ import annotations

import json

from planwerk.core.plan import Plan, PlannedCall
from planwerk.core.refs import rename_refs


def merge_identical_calls(plan: Plan) -> Plan | None:
    """``plan`` with each call that repeats an earlier call of its step (same name, same arguments) left out and
    references to it pointing at that earlier call, or ``None`` when no call repeats another."""
    renamed: dict[str, str] = {}
    steps = []
    for step in plan.steps:
        first: dict[str, str] = {}
        kept = []
        for call in step.tools:
            key = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
            if key in first:
                renamed[call.id] = first[key]
                continue
            first[key] = call.id
            kept.append(call)
        steps.append(step.model_copy(update={"tools": kept}))
    if not renamed:
        return None
    steps = [step.model_copy(update={"tools": [_renamed(call, renamed) for call in step.tools]}) for step in steps]
    return plan.model_copy(update={"steps": steps})


def _renamed(call: PlannedCall, renamed: dict[str, str]) -> PlannedCall:
    return call.model_copy(update={"arguments": rename_refs(call.arguments, renamed)})

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
from planwerk.core.refs import Ref, iter_refs, rename_refs


def call_key(name: object, arguments: object) -> str:
    """What makes two calls the same call: the tool and its arguments, key order aside."""
    return json.dumps([name, arguments], sort_keys=True, default=str)


def merge_identical_calls(plan: Plan) -> Plan | None:
    """``plan`` with each call that repeats an earlier call of its step (same name, same arguments) left out and
    references to it pointing at that earlier call, or ``None`` when no call repeats another."""
    renamed: dict[str, str] = {}
    steps = []
    for step in plan.steps:
        first: dict[str, str] = {}
        kept = []
        for call in step.tools:
            key = call_key(call.name, call.arguments)
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


def distinct_ids(plan: Plan) -> Plan | None:
    """``plan`` with a fresh id (``<id>_2``, …) for each later call that reuses an earlier call's id, when no
    reference names that id (it is then plain which call each reference means: none); ``None`` when no id is reused
    or a reused one is referred to. Seen on a function-calling benchmark (0.5B model): three different calls of two
    tools, each tool's calls under one id (the tool's name), so the plan was sent back and the next one left calls
    out."""
    referred = {ref.root for _, call in plan.calls() for ref in iter_refs(call.arguments) if isinstance(ref, Ref)}
    taken = {call.id for _, call in plan.calls()}
    seen: set[str] = set()
    steps = []
    changed = False
    for step in plan.steps:
        calls = []
        for call in step.tools:
            if call.id in seen:
                if call.id in referred:
                    return None
                number = 2
                while f"{call.id}_{number}" in taken:
                    number += 1
                fresh = f"{call.id}_{number}"
                taken.add(fresh)
                call = call.model_copy(update={"id": fresh})
                changed = True
            seen.add(call.id)
            calls.append(call)
        steps.append(step.model_copy(update={"tools": calls}))
    return plan.model_copy(update={"steps": steps}) if changed else None

"""Steps as barriers: which calls run when, and the re-ordering of plans whose steps contradict their references.

A call of step k starts only after every call of the steps before it has finished (or failed); the calls of one
step run concurrently. ``$ref``s name data, steps order effects: a read planned after a write must not run beside
it, even when it references nothing. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.core.calls import CallRecord, call_record
from planwerk.core.extract import EXTRACT_TOOL
from planwerk.core.plan import Plan, PlannedCall, Step
from planwerk.core.refs import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    Ref,
    RefError,
    dependencies,
    parse_ref,
    ref_text,
    resolve_arguments,
)


def call_dependencies(plan: Plan, available: Collection[str] = ()) -> dict[str, frozenset[str]]:
    """For each call id, the ids of the plan's calls it references (and so must wait for).

    References to ``available`` ids (results of an earlier plan on this question) need no waiting.
    """
    ids = {call.id for _, call in plan.calls()}
    return {
        call.id: frozenset(dep for dep in dependencies(call.arguments) if dep in ids and dep not in available)
        for _, call in plan.calls()
    }


def with_dependents(plan: Plan, ids: Collection[str]) -> set[str]:
    """``ids`` and the ids of every call that takes a result of one of them, down the chain."""
    found = set(ids)
    deps = call_dependencies(plan)
    grew = True
    while grew:
        before = len(found)
        found |= {call_id for call_id, needs in deps.items() if needs & found}
        grew = len(found) > before
    return found


def without_calls(plan: Plan, ids: Collection[str]) -> tuple[Plan, tuple[str, ...]] | None:
    """``plan`` without the calls ``ids`` and the calls that take their results (:func:`with_dependents`), steps
    left empty removed, and the ids left out in plan order; ``None`` when no call would be left."""
    dropped = with_dependents(plan, ids)
    order = tuple(call.id for _, call in plan.calls() if call.id in dropped)
    if len(order) >= plan.call_count:
        return None
    data = plan.stored()
    steps = [{**step, "tools": [c for c in step["tools"] if c["id"] not in dropped]} for step in data["steps"]]
    return Plan.model_validate({**data, "steps": [step for step in steps if step["tools"]]}), order


def dependency_depth(plan: Plan) -> dict[str, int]:
    """How many calls deep each call sits (0 = needs no other call); the critical path is the maximum + 1."""
    deps = call_dependencies(plan)
    depth: dict[str, int] = {}

    def visit(call_id: str, trail: frozenset[str]) -> int:
        if call_id in depth:
            return depth[call_id]
        if call_id in trail:  # a cycle cannot pass the plan check; be safe anyway
            return 0
        value = 1 + max((visit(d, trail | {call_id}) for d in deps[call_id]), default=-1)
        depth[call_id] = value
        return value

    for call_id in deps:
        visit(call_id, frozenset())
    return depth


def steps_contradict_references(plan: Plan, available: Collection[str] = ()) -> bool:
    """Whether some call references a call of the same or a later step (the plan check rejects that)."""
    step_of = {call.id: index for index, call in plan.calls()}
    waits_for = call_dependencies(plan, available)
    return any(step_of[dep] >= step_of[call.id] for _, call in plan.calls() for dep in waits_for[call.id])


def reorder_steps(plan: Plan, available: Collection[str] = ()) -> Plan | None:
    """The plan re-ordered into valid steps when its steps contradict its references; ``None`` when not needed
    or not possible (duplicate ids, or references that form a cycle: the plan check then says why).

    Each call goes into the earliest step its references allow, and the planner's own order is kept wherever the
    references allow it: a call planned in a later step than another stays after it unless it is (transitively)
    referenced by it. That keeps "write, then read" in order even when the read references nothing, while a call
    referenced by an earlier-planned call moves in front of it. Plans that small models write (everything in one
    step, or a reference to the step's neighbour) become what they meant instead of being rejected.
    """
    calls = [(index, call) for index, call in plan.calls()]
    ids = [call.id for _, call in calls]
    if len(set(ids)) != len(ids) or not steps_contradict_references(plan, available):
        return None
    refs = call_dependencies(plan, available)
    before: dict[str, set[str]] = {call_id: set(refs[call_id]) for call_id in ids}  # call → calls it runs after
    if _has_cycle(before):
        return None
    # The planner's order as soft constraints, in plan order; one that would close a cycle is dropped.
    for position, (step_x, x) in enumerate(calls):
        for step_y, y in calls[position + 1 :]:
            if step_y > step_x and not _reaches(before, x.id, y.id):
                before[y.id].add(x.id)
    level: dict[str, int] = {}

    def level_of(call_id: str) -> int:
        if call_id not in level:
            level[call_id] = 1 + max((level_of(dep) for dep in before[call_id]), default=-1)
        return level[call_id]

    by_level: dict[int, list[tuple[int, PlannedCall]]] = {}
    for step_index, call in calls:
        by_level.setdefault(level_of(call.id), []).append((step_index, call))
    steps = []
    for index in sorted(by_level):
        members = by_level[index]
        descriptions = dict.fromkeys(
            plan.steps[step_index].description for step_index, _ in members if plan.steps[step_index].description
        )
        steps.append(Step(description="; ".join(descriptions), tools=[call for _, call in members]))
    return plan.model_copy(update={"steps": steps})


def _reaches(before: Mapping[str, set[str]], start: str, target: str) -> bool:
    """Whether ``start`` (transitively) runs after ``target``: adding "target after start" would close a cycle."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        node = stack.pop()
        if node == target:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(before.get(node, ()))
    return False


def _has_cycle(before: Mapping[str, set[str]]) -> bool:
    return any(_reaches(before, dep, call_id) for call_id in before for dep in before[call_id])


@dataclass(frozen=True)
class ReadyCall:
    """A call whose references are resolved: what the per-call node receives."""

    id: str
    tool: str
    step: int
    args: dict[str, Any]


def resolve_step(
    plan: Plan,
    index: int,
    *,
    records: Sequence[CallRecord],
    results: Mapping[str, Any],
    user: Mapping[str, Any],
    limits: ArgumentLimits = DEFAULT_LIMITS,
) -> tuple[list[ReadyCall], list[CallRecord]]:
    """The calls of step ``index`` with their ``$ref``s resolved, and records for those that cannot run.

    ``records`` is the call log (later records of an id win: ids may be reused by a corrected plan); a call whose
    referenced call of this plan failed is ``skipped``; a reference that does not resolve is a ``ref`` failure.
    ``results`` holds the results by id (this plan's earlier steps and earlier plans for the question).
    Resolved arguments over ``limits.max_bytes`` are a ``ref`` failure too (nothing that large is built).
    """
    latest = {record["id"]: record for record in records}
    plan_ids = {call.id for _, call in plan.calls()}
    extracts = {call.id for _, call in plan.calls() if call.name == EXTRACT_TOOL}
    ready: list[ReadyCall] = []
    failed: list[CallRecord] = []
    for call in plan.steps[index].tools:
        upstream = sorted(dep for dep in dependencies(call.arguments) if dep in plan_ids)
        broken = [dep for dep in upstream if dep in latest and latest[dep]["status"] != "ok"]
        if broken:
            error = f"skipped: depends on failed call(s) {', '.join(broken)}"
            failed.append(call_record(call.id, call.name, step=index, error=error, kind="skipped"))
            continue
        try:
            args = resolve_arguments(call.arguments, results, user, limits)
        except RefError as error:
            failed.append(call_record(call.id, call.name, step=index, error=str(error), kind="ref"))
            continue
        if missing := _not_extracted(call.arguments, args, extracts):
            # The resolved arguments are kept (the unclear one is None): the person's answer fills it in later.
            failed.append(call_record(call.id, call.name, step=index, args=dict(args), error=missing, kind="unclear"))
            continue
        ready.append(ReadyCall(id=call.id, tool=call.name, step=index, args=args))
    return ready, failed


def _not_extracted(arguments: Mapping[str, Any], resolved: Mapping[str, Any], extracts: set[str]) -> str | None:
    """Why an argument that is a reference to an ``extract`` call's field cannot be passed on: the text did not
    hold the field (the extract gave ``null``); ``None`` when every such argument has a value. A call is never
    sent an empty value standing for one the text lacked."""
    for name, value in arguments.items():
        text = ref_text(value)
        ref = parse_ref(text) if text is not None else None
        if isinstance(ref, Ref) and ref.root in extracts and resolved.get(name) is None:
            field = ".".join(str(part) for part in ref.path) or "?"
            found = f"found no single {field!r} in the text (none, or more than one)"
            return f"argument {name!r}: the extract {ref.root!r} {found}"
    return None

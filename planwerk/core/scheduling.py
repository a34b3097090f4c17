"""Which call waits for which: the dependency graph of a checked plan. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Collection

from planwerk.core.plan import Plan
from planwerk.core.refs import dependencies


def call_dependencies(plan: Plan, available: Collection[str] = ()) -> dict[str, frozenset[str]]:
    """For each call id, the ids of the plan's calls it must wait for.

    References to ``available`` ids (results of an earlier plan on this question) need no waiting.
    """
    ids = {call.id for _, call in plan.calls()}
    return {
        call.id: frozenset(dep for dep in dependencies(call.arguments) if dep in ids and dep not in available)
        for _, call in plan.calls()
    }


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

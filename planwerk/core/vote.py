"""Self-consistency: several sampled plans run as one, and the majority of their last results wins. Pure: no I/O.

A small model's greedy plan is often wrong in one argument; sampled plans are wrong in different ways, so the
result most of them reach is more often right (self-consistency, Wang et al. 2022). planwerk runs the candidates
through the normal engine: :func:`merge_candidates` renames each candidate's call ids with a prefix (``s0_``,
``s1_`` …), rewrites its references, and lays its steps beside the others' (step k of the merged plan holds step k
of every candidate), so every call is still one durable, checkpointed node run. :func:`vote` then groups the
candidates that ran without a failure by their last result and picks the largest group (ties: the earliest
candidate). Identical samples run once and count as often as they were sampled.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from planwerk.core.plan import Plan
from planwerk.core.refs import rename_refs

RESULT_DECIMALS = 6
"""Last results equal to this many decimals vote together (2.0000001 and 2 are one answer)."""


class Candidate(TypedDict):
    """One distinct sampled plan inside a merged plan, as kept in the state."""

    prefix: str
    """Its call ids' prefix in the merged plan (``s0_``)."""
    weight: int
    """How many samples were this plan."""
    last_call: str
    """The merged id of its last call (its answer)."""
    calls: list[str]
    """The merged ids of all its calls."""


@dataclass(frozen=True)
class VoteOutcome:
    """What the vote decided."""

    winner: Candidate | None
    """The winning candidate; ``None`` when no candidate ran without a failure."""
    value: float | None
    """The winning last result."""
    votes: dict[str, int]
    """Weight per distinct last result (formatted), for the answer's metadata."""


def canonical(plan: Plan) -> str:
    """A plan's identity for counting identical samples (its steps and calls, ids included)."""
    return json.dumps(plan.model_dump(include={"steps"}), sort_keys=True, ensure_ascii=False)


def merge_candidates(plans: Sequence[Plan]) -> tuple[Plan, list[Candidate]]:
    """One plan running every distinct plan of ``plans`` side by side, and the candidates it holds.

    ``plans`` are checked plans with at least one call each, in sampling order; identical ones merge into one
    candidate with a higher weight.
    """
    distinct: dict[str, tuple[Plan, int]] = {}
    for plan in plans:
        key = canonical(plan)
        first, weight = distinct.get(key, (plan, 0))
        distinct[key] = (first, weight + 1)
    steps: list[dict[str, Any]] = []
    candidates: list[Candidate] = []
    for index, (plan, weight) in enumerate(distinct.values()):
        prefix = f"s{index}_"
        names = {call.id: prefix + call.id for _, call in plan.calls()}
        merged_ids: list[str] = []
        for step_index, step in enumerate(plan.steps):
            while len(steps) <= step_index:
                steps.append({"description": "", "tools": []})
            for call in step.tools:
                arguments = rename_refs(call.arguments, names)
                steps[step_index]["tools"].append({"id": prefix + call.id, "name": call.name, "arguments": arguments})
                merged_ids.append(prefix + call.id)
        last = [call for call in plan.steps[-1].tools] if plan.steps else []
        candidates.append(Candidate(prefix=prefix, weight=weight, last_call=prefix + last[-1].id, calls=merged_ids))
    steps = [step for step in steps if step["tools"]]
    return Plan.model_validate({"steps": steps, "final": None}), candidates


def number_of(result: Any) -> float | None:
    """The number a call returned (``{"result": 126}`` or ``126``), else ``None``."""
    if isinstance(result, Mapping):
        numbers = [v for v in result.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        result = result.get("result", numbers[0] if len(numbers) == 1 else None)
    if isinstance(result, int | float) and not isinstance(result, bool) and math.isfinite(result):
        return float(result)
    return None


def vote(candidates: Sequence[Candidate], calls: Sequence[Mapping[str, Any]]) -> VoteOutcome:
    """The candidate whose last result most samples reached, among those whose calls all succeeded."""
    status = {str(call.get("id")): call for call in calls}
    tally: dict[float, int] = {}
    first_of: dict[float, Candidate] = {}
    for candidate in candidates:
        records = [status.get(call_id) for call_id in candidate["calls"]]
        if not records or any(r is None or r.get("status") != "ok" for r in records):
            continue
        value = number_of(status[candidate["last_call"]].get("result"))
        if value is None:
            continue
        key = round(value, RESULT_DECIMALS)
        tally[key] = tally.get(key, 0) + candidate["weight"]
        first_of.setdefault(key, candidate)
    if not tally:
        return VoteOutcome(None, None, {})
    order = {id(c): i for i, c in enumerate(candidates)}
    best = max(tally, key=lambda key: (tally[key], -order[id(first_of[key])]))
    votes = {format(key, "g"): weight for key, weight in tally.items()}
    return VoteOutcome(first_of[best], best, votes)

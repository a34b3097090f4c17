"""Values a question sets apart (in quotes, or as a bracketed list), and a second set of them no call takes. Pure.

A question that asks the same thing for two sets of values ("the SNP ID 'rs123456' in the species 'Homo sapiens'
and the SNP ID 'rs7891011' in the species 'Canis lupus familiaris'", "coefficients [3, -2, 1] within [-1, 2], then
[1, 0, -1] within [0, 3]") needs one call per set; the 0.5B model wrote the first call only (a function-calling
benchmark's parallel entries), and shown the plan with one call per value it wrote its one call again. Quotes and
brackets are the question marking values as values, so when the values no call takes repeat the shape of the ones
a call takes, set by set, the call is copied for each further set in code (:func:`further_value_sets`); the
completed plan is checked like any plan.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from planwerk.core.plan import Plan, PlanData, PlannedCall

MIN_SET_SIZE = 2
"""A call is copied only when it takes at least this many set-apart values: one value alone could as well belong to
another argument or another tool ("search 'error' in 'app.log'")."""

_QUOTED = re.compile(
    r"""(?<![\w'"])(?:'([^'\n]{1,80})'|"([^"\n]{1,80})"|„([^“”\n]{1,80})[“”]|“([^”\n]{1,80})”|‘([^’\n]{1,80})’"""
    r"""|«([^»\n]{1,80})»)(?!\w)"""
)
_BRACKETED = re.compile(r"\[[^\[\]\n]{1,200}\]")


@dataclass(frozen=True)
class SetApart:
    """A value the question sets apart: a quoted text or a bracketed list, where it starts in the question."""

    value: str | list[Any]
    start: int

    @property
    def kind(self) -> str:
        """``"text"`` or ``"list"``: a further set must repeat the kinds of the set a call takes, in order."""
        return "list" if isinstance(self.value, list) else "text"


def set_apart_values(question: str) -> list[SetApart]:
    """The quoted texts and the bracketed lists of literals in ``question``, in the order it states them (a quote
    inside a word, as in "Adriel's", is no quote; a bracket that holds no literal list is no list)."""
    found = [
        SetApart(next(g for g in m.groups() if g is not None).strip(), m.start()) for m in _QUOTED.finditer(question)
    ]
    for match in _BRACKETED.finditer(question):
        try:
            parsed = ast.literal_eval(match.group())
        except (ValueError, SyntaxError):
            continue
        if isinstance(parsed, list) and parsed:
            found.append(SetApart(parsed, match.start()))
    return sorted((value for value in found if value.value), key=lambda value: value.start)


def _same(stated: SetApart, value: Any) -> bool:
    if isinstance(stated.value, list):
        return isinstance(value, list) and value == stated.value
    return isinstance(value, str) and value.strip().casefold() == stated.value.casefold()


@dataclass(frozen=True)
class FurtherSets:
    """The one call of a plan that takes set-apart values, and the further sets of them the question states."""

    call: PlannedCall
    arguments: tuple[str, ...]
    """The call's arguments that take set-apart values, in the order the question states the values."""
    sets: tuple[tuple[SetApart, ...], ...]

    @property
    def values(self) -> list[str | list[Any]]:
        """The further sets' values, in the question's order."""
        return [s.value for further in self.sets for s in further]

    def completed(self, plan: Plan) -> PlanData:
        """``plan`` with a copy of the call for each further set, each beside the call in its step."""
        ids = {c.id for _, c in plan.calls()}
        copies = []
        for number, further in enumerate(self.sets, start=2):
            new_id = f"{self.call.id}_{number}"
            while new_id in ids:
                new_id += "_"
            ids.add(new_id)
            taken = {argument: s.value for s, argument in zip(further, self.arguments, strict=True)}
            copies.append({"id": new_id, "name": self.call.name, "arguments": {**self.call.arguments, **taken}})
        data = plan.stored()
        for step in data["steps"]:
            tools: list[Any] = []
            for planned in step["tools"]:
                tools += [planned, *(copies if planned["id"] == self.call.id else [])]
            step["tools"] = tools
        return data


def further_sets(plan: Plan, question: str, fixed: Collection[str] = ()) -> FurtherSets | None:
    """The further sets for ``plan``'s one call that takes set-apart values: the call takes at least
    :data:`MIN_SET_SIZE` of them, and the ones no call takes follow it in sets of the same size and kinds, in the
    same order. ``None`` when not every value no call takes falls into such a set, when several calls take
    set-apart values, or when the call's tool is in ``fixed`` (tools that change something)."""
    stated = set_apart_values(question)
    if len(stated) < 2 * MIN_SET_SIZE:
        return None
    taking = []
    used: set[int] = set()
    for _, call in plan.calls():
        held = []
        for argument, value in call.arguments.items():
            match = next((s for s in stated if s.start not in used and _same(s, value)), None)
            if match is not None:
                used.add(match.start)
                held.append((match, argument))
        if held:
            taking.append((call, sorted(held, key=lambda pair: pair[0].start)))
    if len(taking) != 1:
        return None
    call, held = taking[0]
    if call.name in fixed or len(held) < MIN_SET_SIZE:
        return None
    rest = [s for s in stated if s.start not in used and s.start > held[-1][0].start]
    if len(rest) != len(stated) - len(used) or not rest or len(rest) % len(held):
        return None
    sets = tuple(tuple(rest[i : i + len(held)]) for i in range(0, len(rest), len(held)))
    if any([s.kind for s in further] != [s.kind for s, _ in held] for further in sets):
        return None
    return FurtherSets(call, tuple(argument for _, argument in held), sets)


def further_value_sets(plan: Plan, question: str, fixed: Collection[str] = ()) -> PlanData | None:
    """``plan`` with a copy of its one call that takes set-apart values for each further set the question states
    (:func:`further_sets`); ``None`` where there are none."""
    found = further_sets(plan, question, fixed)
    return found.completed(plan) if found is not None else None

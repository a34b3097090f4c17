"""Precise numbers a plan writes into its arguments must come from somewhere. Pure: no I/O.

A number with :data:`MIN_PRECISE_DECIMALS` or more decimals ("20.26", "41.3825802") is a measurement, not a
choice like a radius of 5 km or a count of 10: a plan may write it as a literal only when the question, the
conversation, the retrieved context or an earlier result contains it; otherwise it was invented, and an earlier
call's result should be taken by reference. Measured on the travel bench with the packaged 0.5B model: the demo
question "Wo kann man das Razepato am besten beobachten?" was planned as ``get_parks(lat=20.26, lon=16,
radius_km=100)``, coordinates no source held, and the parks service was asked about a point in the Sahara.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.core.plan import Plan, PlanData
from planwerk.core.refs import ref_text
from planwerk.text.numbers import NumberClaim, SourceNumber, find_numbers, number_grounded, source_numbers_in_text
from planwerk.text.words import words

MIN_PRECISE_DECIMALS = 2
"""A literal with this many decimals or more is a measurement that needs a source."""


@dataclass(frozen=True)
class InventedNumber:
    """A precise literal argument no source contains."""

    call_id: str
    argument: str
    """The argument's path ("lat", "points.0.lon")."""
    value: float


def decimals(value: float) -> int:
    """How many decimals ``value`` is written with (``repr``: 20.26 → 2, 16.0 → 0; 0 in exponent notation)."""
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 0
    return len(text.split(".")[1].rstrip("0"))


def _numbers(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, bool) or ref_text(value) is not None:
        return
    if isinstance(value, int | float):
        yield path, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, f"{path}.{index}")


def precise_literals(
    plan: Plan, min_decimals: int = MIN_PRECISE_DECIMALS, calls: Collection[str] | None = None
) -> list[tuple[str, str, float, int]]:
    """(call id, argument path, value, decimals) of each literal argument with at least ``min_decimals`` decimals
    (:data:`MIN_PRECISE_DECIMALS`: the only ones that need a source), of the calls whose ids are in ``calls``
    (``None``: every call)."""
    found = []
    for _, call in plan.calls():
        if calls is not None and call.id not in calls:
            continue
        for path, value in _numbers(call.arguments, ""):
            if (places := decimals(value)) >= min_decimals:
                found.append((call.id, path, value, places))
    return found


def invented_numbers(
    plan: Plan, sources: Sequence[str], min_decimals: int = MIN_PRECISE_DECIMALS, calls: Collection[str] | None = None
) -> list[InventedNumber]:
    """The literal arguments of ``plan`` with at least ``min_decimals`` decimals (of the calls in ``calls``,
    ``None``: all) that none of the ``sources`` (question, conversation, context, earlier results) contains, rounded
    or not. With ``min_decimals`` 0 every number counts: a quantity a call acts on is no choice the planner may
    make."""
    literals = precise_literals(plan, min_decimals, calls)
    if not literals:
        return []  # most plans: no source text needs reading
    known = [number for text in sources for number in source_numbers_in_text(text)]
    return [
        InventedNumber(call_id, path, value)
        for call_id, path, value, places in literals
        if not number_grounded(NumberClaim(repr(value), ((value, places),), None, 0, 0), known)
    ]


def _taken(claim: NumberClaim, held: Sequence[SourceNumber]) -> bool:
    """Whether an argument holds the stated number (a percentage also as its fraction: "2%" as 0.02)."""
    if number_grounded(claim, held):
        return True
    if claim.unit != "%":
        return False
    fraction = NumberClaim(claim.text, tuple((v / 100, d + 2) for v, d in claim.readings), None, 0, 0)
    return number_grounded(fraction, [SourceNumber(n.value) for n in held])


@dataclass(frozen=True)
class _Taken:
    """A stated number one call's top-level argument holds (``value`` as written there: 0.02 for "2%")."""

    claim: NumberClaim
    call_id: str
    tool: str
    argument: str
    value: float | int


def _taken_by(plan: Plan, claim: NumberClaim) -> _Taken | None:
    """The first top-level number argument of ``plan`` that holds ``claim``."""
    for _, call in plan.calls():
        for argument, value in call.arguments.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if _taken(claim, [SourceNumber(float(value))]):
                return _Taken(claim, call.id, call.name, argument, value)
    return None


def unused_question_numbers(plan: Plan, question: str) -> list[str]:
    """The numbers ``question`` states (as written) that no argument of ``plan`` holds, as a literal or inside a
    string, when its calls take at least one other of them; ``[]`` otherwise.

    A question that lists several values for one tool ("the prime factors of 45, 100 and 150", "filed in 2019,
    also those filed in 2018") needs one call per value; a small model often writes the first call only (measured
    on a function-calling benchmark's parallel entries, 0.5B model). A plan that takes none of the question's
    numbers uses them some other way, or not at all, and is not asked about."""
    return [claim.text for claim in _unused(plan, question)]


def _unused(plan: Plan, question: str) -> list[NumberClaim]:
    if not plan.call_count:
        return []
    stated = find_numbers(question)
    if len(stated) < 2:
        return []
    held = source_numbers_in_text(json.dumps([call.arguments for _, call in plan.calls()], ensure_ascii=False))
    unused = [claim for claim in stated if not _taken(claim, held)]
    if len(unused) == len(stated):
        return []
    return list({claim.text: claim for claim in unused}.values())


def one_call_per_value(plan: Plan, question: str, fixed: Collection[str] = ()) -> PlanData | None:
    """``plan`` with a copy of a call for each number of the question no call takes (:func:`unused_question_numbers`):
    the copy of the call whose argument holds the nearest stated number of the same unit, that argument set to the
    unused number (scaled as the taken one was: "1.5%" as 0.015 where "2%" was written 0.02), placed beside it in
    its step; ``None`` when no number has such a call. Calls of the tools in ``fixed`` (tools that change something)
    are not copied. A proposal shown to the planner, never run as is: whether the numbers are further values of
    that argument is the planner's to say."""
    unused = _unused(plan, question)
    taken = [
        t
        for claim in find_numbers(question)
        if claim not in unused and (t := _taken_by(plan, claim)) is not None and t.tool not in fixed
    ]
    copies: dict[str, list[dict[str, Any]]] = {}
    ids = {call.id for _, call in plan.calls()}
    calls = {call.id: call for _, call in plan.calls()}
    for claim in unused:
        alike = [t for t in taken if t.claim.unit == claim.unit]
        if not alike or not claim.readings:
            continue
        nearest = min(alike, key=lambda t: abs(t.claim.start - claim.start))
        stated, _ = claim.readings[0]
        shown, _ = nearest.claim.readings[0]
        scaled = stated * (float(nearest.value) / shown) if shown else stated
        whole = isinstance(nearest.value, int) and scaled == int(scaled)
        value: float | int = int(scaled) if whole else round(scaled, 9)
        source = calls[nearest.call_id]
        number = 2
        while f"{source.id}_{number}" in ids:
            number += 1
        ids.add(new_id := f"{source.id}_{number}")
        arguments = {**source.arguments, nearest.argument: value}
        copies.setdefault(source.id, []).append({"id": new_id, "name": source.name, "arguments": arguments})
    if not copies:
        return None
    data = plan.stored()
    for step in data["steps"]:
        tools: list[Any] = []
        for call in step["tools"]:
            tools += [call, *copies.get(call["id"], [])]
        step["tools"] = tools
    return data


def _list_gap() -> re.Pattern[str]:
    joiners = "|".join(re.escape(word) for word in words().list_joiners)
    return re.compile(rf"(?:\s|[,;/&]|\b(?:{joiners})\b)+", re.I)


def _listed(question: str, claims: Sequence[NumberClaim]) -> list[list[NumberClaim]]:
    """The runs of ``claims`` (in the order the question states them) that stand in one list: between two
    neighbours only commas, semicolons, slashes and list words ("45, 100, and 150")."""
    gap = _list_gap()
    runs: list[list[NumberClaim]] = []
    for claim in sorted(claims, key=lambda c: c.start):
        if runs and gap.fullmatch(question[runs[-1][-1].end : claim.start]):
            runs[-1].append(claim)
        else:
            runs.append([claim])
    return runs


def listed_values(plan: Plan, question: str, fixed: Collection[str] = ()) -> PlanData | None:
    """``plan`` with one call per value where the question lists numbers ("the prime factors of 45, 100, and 150")
    and the plan's calls take one of a list but not the others: :func:`one_call_per_value`, applied when every
    number no call takes stands in one list with a number a call takes; ``None`` otherwise (the plan is then asked
    about them once). Told about the other values, and shown the plan with one call each, the 0.5B model wrote its
    one call again (a function-calling benchmark's parallel entries); a list is the question saying the values go
    alike, as a place the question names goes into a copy of a chain planned for another place."""
    unused = _unused(plan, question)
    if not unused:
        return None
    stated = find_numbers(question)
    taken = {claim.start for claim in stated if claim not in unused and _taken_by(plan, claim) is not None}
    for run in _listed(question, stated):
        if any(claim in unused for claim in run) and not any(claim.start in taken for claim in run):
            return None  # a number no call takes outside any list with a taken one: asked, not completed
    return one_call_per_value(plan, question, fixed)


_PERCENT_EXAMPLE = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(?:=|:|->|→)\s*(\d*\.\d+)")


def takes_percent_as_fraction(description: str) -> bool:
    """Whether an argument's description shows, by example, that a percentage is written as a fraction
    ("as a decimal. E.g. 5% = 0.05"): an example ``N% = N/100``, read from its numbers and signs alone."""
    return any(
        float(fraction) and abs(float(percent) / 100 - float(fraction)) < 1e-9
        for percent, fraction in _PERCENT_EXAMPLE.findall(description)
    )


def percents_as_fractions(
    plan: Plan, question: str, descriptions: Mapping[str, Mapping[str, str]], fixed: Collection[str] = ()
) -> PlanData | None:
    """``plan`` with each top-level number argument that holds a percentage of ``question`` as written ("7%" as 7)
    written as the fraction (0.07) where the argument's description shows that convention by example
    (:func:`takes_percent_as_fraction`; ``descriptions``: tool → argument → description); ``None`` when none does.

    Measured with the packaged 0.5B model on a function-calling benchmark's parallel entry: "an annual return of
    7%" planned as ``expected_annual_return 7`` for an argument described "as a decimal. E.g. 5% = 0.05". Calls of
    the tools in ``fixed`` (tools that change something) are left as planned."""
    percents = {v for claim in find_numbers(question) if claim.unit == "%" for v, _ in claim.readings}
    if not percents:
        return None

    def fraction(tool: str, argument: str, value: float) -> float | None:
        described = descriptions.get(tool, {}).get(argument, "")
        return round(value / 100, 9) if value in percents and takes_percent_as_fraction(described) else None

    return _rewrite_numbers(plan, fixed, fraction)


def _rewrite_arguments(
    plan: Plan, fixed: Collection[str], change: Callable[[str, str, Any], Any | None]
) -> PlanData | None:
    """``plan`` (stored) with each top-level argument of a call (tools in ``fixed`` aside) set to what
    ``change(tool, argument, value)`` gives where that is not ``None``; ``None`` when nothing changes."""
    data = plan.stored()
    changed = False
    for step in data["steps"]:
        for call in step["tools"]:
            if call["name"] in fixed:
                continue
            for argument, value in call["arguments"].items():
                if (new := change(call["name"], argument, value)) is not None:
                    call["arguments"][argument] = new
                    changed = True
    return data if changed else None


def _rewrite_numbers(
    plan: Plan, fixed: Collection[str], change: Callable[[str, str, float], float | None]
) -> PlanData | None:
    """:func:`_rewrite_arguments` for the number arguments (a whole number stays an int where the argument was
    one)."""

    def number(tool: str, argument: str, value: Any) -> float | int | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if (new := change(tool, argument, value)) is None:
            return None
        return int(new) if isinstance(value, int) and float(new).is_integer() else new

    return _rewrite_arguments(plan, fixed, number)


def _name_words(argument: str) -> list[str]:
    """An argument's name as lower-case words (``dividend_per_share``, ``dividendPerShare``: dividend, per, share)."""
    return [w.casefold() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", argument)]


def _same_word(written: str, named: str) -> bool:
    """A question's word is a name's word, or the same with a short ending (share, shares; Jahr, Jahre)."""
    short, long = sorted((written.casefold(), named), key=len)
    return short == long or (len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 2)


def named_numbers(question: str, argument: str) -> list[float]:
    """The numbers ``question`` writes next to ``argument``'s name, in so many words: "50 shares" or "shares: 50"
    for ``shares``, "dividend per share: 1.30" for ``dividend_per_share``, each value once. A name before its
    number needs a colon or an equals sign: in "dividend per share 1.30" the number is not the shares'."""
    name = _name_words(argument)
    if not name:
        return []
    found: list[float] = []
    for claim in find_numbers(question):
        after = re.findall(r"[^\W\d_]+", question[claim.end :])[: len(name)]
        before = re.findall(r"[^\W\d_]+", question[: claim.start])[-len(name) :]
        gap_after = question[claim.end :].lstrip()[:1].isalpha() or question[claim.end :].lstrip()[:1] == ""
        gap_before = re.search(r"[^\W\d_]\s*[:=]\s*$", question[: claim.start]) is not None  # "shares: 50"
        for words_near, near in ((after, gap_after), (before, gap_before)):
            if near and len(words_near) == len(name) and all(map(_same_word, words_near, name)):
                found += [v for v, _ in claim.readings[:1] if v not in found]
    return found


def named_values(plan: Plan, question: str, fixed: Collection[str] = ()) -> PlanData | None:
    """``plan`` with each top-level number argument that ``question`` does not state set to the one number the
    question writes next to that argument's name (:func:`named_numbers`); ``None`` when no argument changes.
    Calls of the tools in ``fixed`` (tools that change something) are left as planned: the check sends their
    unstated numbers back.

    Measured with the packaged 0.5B model on a function-calling benchmark's parallel-multiple entry: "invest in 50
    shares of Apple's stock … the total dividend payout" planned ``shares 50`` for the payout and ``shares 40``, a
    sample number of the examples built from the tools, for the cost."""
    stated = {v for claim in find_numbers(question) for v, _ in claim.readings}

    def named(tool: str, argument: str, value: float) -> float | None:
        if float(value) in stated or len(found := named_numbers(question, argument)) != 1:
            return None
        return found[0]

    return _rewrite_numbers(plan, fixed, named)


def unlabelled_values(plan: Plan, question: str, fixed: Collection[str] = ()) -> PlanData | None:
    """``plan`` with each top-level text argument that begins with its own argument's name written without it, where
    the rest is one word the question writes right after that name: ``building_id "building id B1004"`` becomes
    ``"B1004"`` for "the building with building Id B1004"; ``None`` when no argument changes. Calls of the tools in
    ``fixed`` (tools that change something) are left as planned.

    Measured with the packaged 0.5B model on a function-calling benchmark's multiple entry: the argument's name,
    read in the question before the value, was copied into the value."""

    def unlabelled(tool: str, argument: str, value: Any) -> str | None:
        name = _name_words(argument)
        if not name or not isinstance(value, str) or ref_text(value) is not None:
            return None
        written = value.split()
        labelled = len(written) == len(name) + 1 and all(map(_same_word, written[: len(name)], name))
        pattern = r"\W+".join(map(re.escape, written))
        stated = labelled and re.search(rf"(?<!\w){pattern}(?!\w)", question, re.I) is not None
        return written[-1] if stated else None

    return _rewrite_arguments(plan, fixed, unlabelled)


def labelled_values(plan: Plan, labels: Collection[str]) -> list[tuple[str, str, str]]:
    """(call id, argument, value) of each top-level text argument of ``plan`` that is one of ``labels`` (the labels
    of retrieved chunks, "notes.txt#0", and their documents' names), case and surrounding space ignored: the
    prompt's markup, never a value the person gave. Measured on the travel set (0.5B model, BENCHMARKS.md §12): a
    question the context answered was planned as a call whose argument was a chunk's label."""
    folded = {label.strip().casefold() for label in labels if label.strip()}
    return [
        (call.id, argument, value)
        for _, call in plan.calls()
        for argument, value in call.arguments.items()
        if isinstance(value, str) and value.strip().casefold() in folded
    ]

"""The places a plan is for: the ones the conversation names, all of those the question names. Pure: no I/O.

Measured with the packaged 0.5B model: "Und morgen?" after a Barcelona question was planned for Madrid and Lisbon
(the cities of a few-shot example), "Und in Paris?" added Halle, and a two-city comparison planned one city. Two
rules catch that before anything runs, for any profile (a plan whose arguments name no place is not affected):

- **invented**: every place an argument names must be named by the question, the earlier questions of the thread,
  the user's clarifications, the retrieved context or an earlier result;
- **missing**: when the plan names places at all, every place the question names must be among them.

A plan that only misses places can be **completed** in code (:func:`complete_missing_places`): when it plans one
place, its chain for that place (the calls naming it and every call that refers to them) is copied for each missing
place. Measured on the travel bench: every two-city question was planned for one city, three times, and rejected
three times; the chain for the second city is the same tools with the other name.

A plan's place argument that names a city only in the genitive the gazetteer tolerates ("Barcelonas") is
**named** in code (:func:`name_inflected_places`): the plan check takes it for the city, but a geocoder does not.
Measured on the travel bench with the packaged 0.5B model: "Vergleiche das Wetter in Barcelona und Madrid ..." was
planned as ``geocode(query="Barcelonas")``, copied from a retrieved chunk ("in den Parks Barcelonas"); the geocoder
found nothing and the answer had nothing.

A plan that swaps the asked city for another one is **substituted** in code (:func:`substitute_invented_place`)
when that is unambiguous: it invents exactly one place and leaves out exactly one it should plan (one the question
names, or, for a follow-up that names none, one its referent question names). Measured on the travel bench with
the packaged 0.5B model: "Which parks are within 20 km of Barcelona?" was planned three times for Palma and "Und am
19. Januar?" after a Barcelona question three times for Sevilla (the cities of few-shot examples), each time with
the right chain, and both ended with no plan.

A follow-up's referent (:func:`planwerk.text.conversation.referent_question`) is the earlier question a short
follow-up ("Und morgen?", "And in Paris?") continues, for the planner's prompt to show beside it, in the
shape the follow-up examples of the library have.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from planwerk.core.plan import Plan
from planwerk.core.refs import Ref, iter_refs, literal_strings, ref_text, rename_refs
from planwerk.core.scheduling import with_dependents, without_calls
from planwerk.core.tools import ToolSpec
from planwerk.text.conversation import referent_question
from planwerk.text.places import (
    MAX_PLACE_ARGUMENT_WORDS,
    PLACE_PART_SEPARATORS,
    Gazetteer,
    PlaceClaim,
    find_places,
    fold,
    named_parts,
    places_in_sources,
)

PlaceProblemKind = Literal["invented", "missing"]


@dataclass(frozen=True)
class PlaceProblem:
    """A place the plan names that nobody asked about (``invented``), or one the question names that the plan
    leaves out (``missing``)."""

    kind: PlaceProblemKind
    place: str
    call_id: str = ""
    """The call naming an invented place."""


@dataclass(frozen=True)
class InflectedPlace:
    """A literal argument part of call ``call_id`` that named a city only in the genitive (``old``, "Barcelonas"),
    and the name written instead (``new``, "Barcelona")."""

    call_id: str
    old: str
    new: str


@dataclass(frozen=True)
class Substitution:
    """The one place a plan invented (``old``, "Palma", as the plan wrote it) replaced by the one it left out
    (``new``, "Barcelona", as the question or the referent question writes it)."""

    old: str
    new: str
    calls: tuple[str, ...]
    """The calls whose literal arguments named ``old``, by their ids in the substituted plan."""
    renamed: tuple[tuple[str, str], ...] = ()
    """(old id, new id) of every call whose id contained ``old`` (``geo_palma`` → ``geo_barcelona``)."""
    dropped: tuple[str, ...] = ()
    """The calls left out because they named another invented place (or took a result of one that did)."""

    def as_event(self) -> dict[str, Any]:
        """The substitution as the plan event reports it (JSON types: lists and an object)."""
        return {
            "old": self.old,
            "new": self.new,
            "calls": list(self.calls),
            "renamed": dict(self.renamed),
            "dropped": list(self.dropped),
        }


@dataclass(frozen=True)
class _Mention:
    text: str
    ids: frozenset[int]


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_CODE_WORD = re.compile(r"[^\s,;/()]*\d[^\s,;/()]*")
"""A run of characters between spaces and place separators (``PLACE_PART_SEPARATORS``) that holds a digit: an
id, a hash, a postcode."""


def argument_places(value: str, gazetteer: Gazetteer) -> list[_Mention]:
    """The places a short string argument names: the whole value or a part of it between place separators as a
    name (:func:`planwerk.text.places.named_parts`: "<city>", "<city>, <country>", "<area>/<city>", a time zone
    standing for every city in it), else the place claims of the text."""
    if len(value.split()) > MAX_PLACE_ARGUMENT_WORDS:
        return []
    # A word with a digit in it is a code, not a name: a UUID's "aba4" once read as the city Aba (a time zone has
    # none). An identifier's underscores are spaces: "<area>/<two_words>" names the two-word city, not its last word
    # (measured: a time question was rejected three times for leaving the city out).
    if not gazetteer.zone_cities(value.strip()):
        value = _CODE_WORD.sub(" ", value)
    mentions = [_Mention(part, ids) for part, ids in named_parts(value, gazetteer)]
    if mentions:
        return mentions
    text = value if not value.islower() else value.title()
    return [_Mention(claim.text, claim.ids) for claim in find_places(text, gazetteer)]


def plan_places(plan: Plan, gazetteer: Gazetteer) -> list[tuple[str, _Mention]]:
    """(call id, place) for every place the plan's literal arguments name, in plan order."""
    found: list[tuple[str, _Mention]] = []
    for _, call in plan.calls():
        for text in literal_strings(call.arguments):
            found.extend((call.id, mention) for mention in argument_places(text, gazetteer))
    return found


def place_problems(
    plan: Plan, *, question: str, conversation: Iterable[str], gazetteer: Gazetteer
) -> list[PlaceProblem]:
    """Invented and missing places of ``plan`` (see the module doc). ``conversation`` are the other texts a place
    may come from: earlier questions, clarifications, retrieved chunks, earlier results."""
    planned = plan_places(plan, gazetteer)
    if not planned:
        return []
    allowed_ids, allowed_words = places_in_sources([question, *conversation], gazetteer)
    problems: list[PlaceProblem] = []
    reported: set[str] = set()
    for call_id, mention in planned:
        words = [fold(word) for word in mention.text.split()]
        known = mention.ids & allowed_ids or all(w in allowed_words for w in words)
        if not known and fold(mention.text) not in reported:
            reported.add(fold(mention.text))
            problems.append(PlaceProblem("invented", mention.text, call_id))
    for claim in _unplanned(find_places(question, gazetteer), planned):
        if fold(claim.text) not in reported:
            reported.add(fold(claim.text))
            problems.append(PlaceProblem("missing", claim.text))
    return problems


def place_not_given(
    problems: Sequence[PlaceProblem], *, question: str, conversation: Iterable[str], gazetteer: Gazetteer
) -> bool:
    """Whether ``problems`` say that a place is a value nobody gave: every problem is an invented place and
    neither the question nor any other source names a place at all. Then a plan for another place is a guess
    too; the user is asked instead of the planner (a small model replaced one invented city by the next, three
    attempts in a row)."""
    if not problems or any(problem.kind != "invented" for problem in problems):
        return False
    return names_no_place(question, conversation, gazetteer)


def names_no_place(question: str, conversation: Iterable[str], gazetteer: Gazetteer) -> bool:
    """Whether neither the question nor any other source names a place the gazetteer knows."""
    return not any(find_places(text, gazetteer) for text in (question, *conversation))


def takes_places(parameter: Mapping[str, Any], gazetteer: Gazetteer) -> bool:
    """Whether a parameter's schema names places: its description or examples name one the gazetteer knows."""
    texts = [str(parameter.get("description") or ""), *map(str, parameter.get("examples") or [])]
    return any(find_places(text, gazetteer) for text in texts if text)


def unplanned_place_result(
    plan: Plan, specs: Mapping[str, ToolSpec], gazetteer: Gazetteer, available: Collection[str] = ()
) -> bool:
    """Whether ``plan`` reads a field from a call it does not contain (nor an earlier result in ``available``)
    that only a tool taking a place gives: ``{"$ref": "a.x"}`` with no call ``a``, where a loaded tool has a
    parameter that takes places (:func:`takes_places`) and returns ``x`` (its output schema). The place that call
    would have named is missing from the plan, and there is no place literal in it for the place check to see
    (a small model left such a call out for questions that named no place, issue 32)."""
    planned = {call.id for _, call in plan.calls()} | set(available)
    read = {
        ref.path[0]
        for _, call in plan.calls()
        for ref in iter_refs(call.arguments)
        if isinstance(ref, Ref) and not ref.is_user and ref.root not in planned and ref.path
        and isinstance(ref.path[0], str)
    }  # fmt: skip
    if not read:
        return False
    for spec in specs.values():
        returns = (spec.output_schema or {}).get("properties") or {}
        parameters = (spec.input_schema or {}).get("properties") or {}
        if read & set(returns) and any(
            takes_places(parameter, gazetteer) for parameter in parameters.values() if isinstance(parameter, Mapping)
        ):
            return True
    return False


def _unplanned(claims: Iterable[PlaceClaim], planned: Sequence[tuple[str, _Mention]]) -> list[PlaceClaim]:
    """The ``claims`` (places a text names) that none of the ``planned`` places is: neither one of their cities
    nor all of their words."""
    planned_ids = frozenset().union(*(mention.ids for _, mention in planned))
    planned_words = {fold(word) for _, mention in planned for word in mention.text.split()}
    return [
        claim
        for claim in claims
        if not (claim.ids & planned_ids or all(fold(word) in planned_words for word in claim.text.split()))
    ]


def complete_missing_places(plan: Plan, missing: Sequence[str], gazetteer: Gazetteer) -> Plan | None:
    """``plan`` with its chain for the one place it plans copied for every place in ``missing``; ``None`` when the
    plan names no place or several (which chain to copy would be a guess).

    The chain is the calls whose literal arguments name the place and every call that refers to one of them,
    directly or not. Each copy gets ids with the place as suffix (``geo`` → ``geo_paris``), the place's name in
    its literal arguments replaced, its references pointing at the copies, and sits in the step of its original.
    The result is a candidate: the caller checks it like any plan."""
    planned = plan_places(plan, gazetteer)
    names = {fold(mention.text): mention.text for _, mention in planned}
    if len(names) != 1 or not missing:
        return None
    (place,) = names.values()
    chain = with_dependents(plan, {call_id for call_id, _ in planned})
    taken = {call.id for _, call in plan.calls()}
    copies: dict[int, list[dict[str, Any]]] = {}
    for target in missing:
        suffix = re.sub(r"[^a-z0-9]+", "_", fold(target)).strip("_") or "place"
        renamed: dict[str, str] = {}
        for call_id in sorted(chain):
            new_id, n = f"{call_id}_{suffix}", 2
            while new_id in taken:
                new_id, n = f"{call_id}_{suffix}{n}", n + 1
            renamed[call_id] = new_id
            taken.add(new_id)
        for index, call in plan.calls():
            if call.id in chain:
                arguments = _replace_place(rename_refs(call.arguments, renamed), place, target)
                copies.setdefault(index, []).append({"id": renamed[call.id], "name": call.name, "arguments": arguments})
    steps = [
        {**step.model_dump(), "tools": [*step.model_dump()["tools"], *copies.get(index, [])]}
        for index, step in enumerate(plan.steps)
    ]
    return Plan.model_validate({**plan.model_dump(), "steps": steps})


def _replace_place(value: Any, place: str, target: str) -> Any:
    """``value`` with ``place`` replaced by ``target`` in its literal strings (case-insensitive, whole words only:
    "Rom" is no part of "Romantik"; references stay)."""
    return _map_strings(value, partial(_replace_words, place=place, target=target))


def _replace_words(text: str, place: str, target: str) -> str:
    """``text`` with every whole-word ``place`` (any case) written as ``target``."""
    return re.sub(rf"(?<!\w){re.escape(place)}(?!\w)", lambda _: target, text, flags=re.IGNORECASE)


def _replace_zone(text: str, place: str, zone: str, gazetteer: Gazetteer) -> str:
    """``zone`` for ``text`` when ``text`` is a time zone named after ``place`` (folded): a zone is an identifier,
    not a phrase, and the asked place's own zone may be another area's (the place written into the old one is no
    zone at all: measured on the domain answers set, 0.5B model, the time server refused it twice)."""
    if not gazetteer.zone_cities(text) or fold(text.rsplit("/", 1)[-1]).replace("_", " ") != place.replace("_", " "):
        return text
    return zone


def substitute_invented_place(
    plan: Plan,
    problems: Sequence[PlaceProblem],
    *,
    question: str,
    earlier: Sequence[str],
    gazetteer: Gazetteer,
    reserved: Collection[str] = (),
    several: bool = False,
) -> tuple[Plan, Substitution] | None:
    """``plan`` with the one place it invented replaced by the one place it should plan but does not, and what
    was replaced; ``None`` unless both are exactly one (which place stands for which would be a guess).

    ``problems`` are the plan's place problems (:func:`place_problems`). The invented place is one folded name,
    named by one call or several. The place left out is the question's one ``missing`` place; when the question
    names no place and is a follow-up, the one place of its referent question (:func:`referent_question` of
    ``earlier``, the earlier questions of the thread) that the plan does not plan. Two invented places, two left
    out, or an invented place and none left out: ``None``, and the planner hears the problems as before. With
    ``several`` (the planner's last attempt), several invented places for the one left out, each planned with the
    same chain (the same tools with the same values but place and days: an example's comparison copied), keep the
    first one's calls for it; the calls naming the others (and those taking their results) are left out
    (``Substitution.dropped``). Chains that differ: ``None``.

    The place is replaced as a whole word in the literal arguments (references stay) and in the steps'
    descriptions; a call id that contains the place (``geo_palma``, ``parksPalma``) gets the asked one instead
    (``geo_barcelona``, unique within the plan and not one of ``reserved``, the ids of results an earlier plan for
    the question left) and every reference to it follows, so neither the events nor the answer show the example's
    city. The result is a candidate: the caller checks it like any plan."""
    invented = {fold(p.place): p.place for p in problems if p.kind == "invented"}
    if not invented:
        return None
    targets = [p.place for p in problems if p.kind == "missing"]
    planned = plan_places(plan, gazetteer)
    follow_up = not targets and not find_places(question, gazetteer)  # then the referent's places are the asked ones
    if follow_up and (referent := referent_question(question, earlier)) is not None:
        targets = [claim.text for claim in _unplanned(find_places(referent, gazetteer), planned)]
    if len({fold(target) for target in targets}) != 1:
        return None
    dropped: tuple[str, ...] = ()
    if len(invented) > 1:
        if not several:
            return None
        # Several invented places for one asked: an example's comparison copied for a follow-up about one city.
        # The first one's calls stand for the asked place; the others' are left out.
        first = next(iter(invented))
        if len({_chain_shape(plan, place, gazetteer) for place in invented}) != 1:
            return None  # different chains: which one was meant would be a guess
        kept = without_calls(plan, _naming(plan, set(invented) - {first}, gazetteer))
        if kept is None:
            return None
        plan, dropped = kept
        planned = plan_places(plan, gazetteer)
        invented = {first: invented[first]}
    ((old, first_written),) = invented.items()
    target = targets[0]
    written: dict[str, set[str]] = {}  # call id -> how its arguments write the place ("Palma", "palma")
    for call_id, mention in planned:
        if fold(mention.text) == old:
            written.setdefault(call_id, set()).add(mention.text)
    everywhere = sorted({text for texts in written.values() for text in texts})
    renamed = _renamed_ids(plan, everywhere, target, reserved)
    steps = []
    for step in plan.steps:
        tools = []
        for call in step.tools:
            arguments = rename_refs(call.arguments, renamed)
            if call.id in written and (zone := gazetteer.timezone(target)) is not None:
                arguments = _map_strings(arguments, partial(_replace_zone, place=old, zone=zone, gazetteer=gazetteer))
            for text in sorted(written.get(call.id, ())):
                arguments = _replace_place(arguments, text, target)
            tools.append({**call.model_dump(), "id": renamed.get(call.id, call.id), "arguments": arguments})
        description = step.description
        for text in everywhere:
            description = _replace_words(description, text, target)
        steps.append({**step.model_dump(), "description": description, "tools": tools})
    substitution = Substitution(
        old=first_written,
        new=target,
        calls=tuple(renamed.get(call_id, call_id) for call_id in written),
        renamed=tuple(renamed.items()),
        dropped=dropped,
    )
    return Plan.model_validate({**plan.model_dump(), "steps": steps}), substitution


def _chain_shape(plan: Plan, place: str, gazetteer: Gazetteer) -> tuple[str, ...]:
    """What the calls for ``place`` (folded) do, the place, days and references aside: each call naming it or taking
    a result of one that does, as its tool and its literal values other than the place, sorted."""
    chain = with_dependents(plan, _naming(plan, {place}, gazetteer))
    shapes = []
    for _, call in plan.calls():
        if call.id in chain:
            values = sorted(
                _ISO_DAY.sub("<day>", text)  # days are judged apart (a follow-up's day is written in afterwards)
                for text in literal_strings(call.arguments)
                if not _names_place(text, {place}, gazetteer)
            )
            numbers = sorted(str(v) for v in call.arguments.values() if isinstance(v, int | float))
            shapes.append(json.dumps([call.name, values, numbers]))
    return tuple(sorted(shapes))


def _names_place(text: str, places: Collection[str], gazetteer: Gazetteer) -> bool:
    return any(fold(mention.text) in places for mention in argument_places(text, gazetteer))


def _naming(plan: Plan, places: Collection[str], gazetteer: Gazetteer) -> set[str]:
    """The ids of the calls whose literal arguments name one of ``places`` (folded)."""
    return {call_id for call_id, mention in plan_places(plan, gazetteer) if fold(mention.text) in places}


def _renamed_ids(plan: Plan, places: Sequence[str], target: str, reserved: Collection[str] = ()) -> dict[str, str]:
    """Old id → new id for every call of ``plan`` whose id contains one of ``places`` as a part (``geo_palma``,
    ``palma2``, ``parksPalma``; "Rom" is no part of ``from_x``), with ``target`` in its stead; new ids are unique
    in the plan and none of ``reserved``."""
    forms = {form for place in places for form in (_id_part(fold(place)), _id_part(place.lower())) if form}
    pattern = re.compile("|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True)), re.IGNORECASE)
    new_part = _id_part(fold(target)) or "place"

    def swap(match: re.Match[str]) -> str:
        call_id, start, end = match.string, match.start(), match.end()
        camel = match.group()[0].isupper() and start > 0 and call_id[start - 1].islower()
        before = start == 0 or not call_id[start - 1].isalpha() or camel
        after = end == len(call_id) or not call_id[end].isalpha() or call_id[end].isupper()
        if not (before and after):
            return match.group()
        if match.group().isupper() and len(match.group()) > 1:
            return new_part.upper()
        return new_part[0].upper() + new_part[1:] if match.group()[0].isupper() else new_part

    ids = [call.id for _, call in plan.calls()]
    changed = {call_id: new for call_id in ids if forms and (new := pattern.sub(swap, call_id)) != call_id}
    taken = {call_id for call_id in ids if call_id not in changed} | set(reserved)
    renamed: dict[str, str] = {}
    for call_id, new in changed.items():
        unique, n = new, 2
        while unique in taken:
            unique, n = f"{new}{n}", n + 1
        renamed[call_id] = unique
        taken.add(unique)
    return renamed


def _id_part(name: str) -> str:
    """A place name as a part of a call id: words joined by ``_`` ("Sankt Petersburg" → "sankt_petersburg")."""
    return re.sub(r"[^\w]+|_+", "_", name).strip("_")


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to each of its literal strings (references stay as they are)."""
    if ref_text(value) is not None:
        return value
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {key: _map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    return value


def name_inflected_places(
    plan: Plan, *, question: str, conversation: Iterable[str], gazetteer: Gazetteer
) -> tuple[Plan, list[InflectedPlace]] | None:
    """``plan`` with every literal argument part that names a city only through the genitive -s the gazetteer
    tolerates ("Barcelonas": the words are no name, the words without the -s are) written as the name, and what
    was replaced; ``None`` when no part is such a genitive.

    The name is written as the question or ``conversation`` (earlier questions, clarifications, retrieved chunks,
    earlier results; in that order) write it, else as the part without its -s. Conservative: only a whole part of
    a short argument (as :func:`argument_places` splits it) is renamed, never a word inside free text; a part that
    is itself a name ("Paris", "Barcelona, Spanien", "Halle (Saale)") stays; references are not literals."""
    sources = [question, *conversation]
    renamed: list[InflectedPlace] = []
    steps: list[dict[str, Any]] = []
    for step in plan.steps:
        tools = []
        for call in step.tools:
            found: list[tuple[str, str]] = []
            arguments = _map_strings(
                call.arguments, partial(_name_parts, sources=sources, gazetteer=gazetteer, found=found)
            )
            renamed += [InflectedPlace(call.id, old, new) for old, new in found]
            tools.append({**call.model_dump(), "arguments": arguments})
        steps.append({**step.model_dump(), "tools": tools})
    if not renamed:
        return None
    return Plan.model_validate({**plan.model_dump(), "steps": steps}), renamed


def _name_parts(text: str, sources: Sequence[str], gazetteer: Gazetteer, found: list[tuple[str, str]]) -> str:
    """``text`` with each part that is a city's genitive written as the name; (old, new) appended to ``found``."""
    if len(text.split()) > MAX_PLACE_ARGUMENT_WORDS:
        return text  # free text, not a place (as for the place check)
    parts = re.split(f"({PLACE_PART_SEPARATORS})", text)  # the separators are kept, so the text rejoins unchanged
    for index, part in enumerate(parts):
        old = part.strip()
        if (new := _genitive_name(old, sources, gazetteer)) is not None:
            parts[index] = part.replace(old, new, 1)
            found.append((old, new))
    return "".join(parts)


def _genitive_name(part: str, sources: Sequence[str], gazetteer: Gazetteer) -> str | None:
    """The city name ``part`` is the genitive of, as the first of ``sources`` to name it writes it (else ``part``
    without its -s); ``None`` when ``part`` is a name itself or no genitive of one."""
    words = part.split()
    if not words or not words[-1].endswith(("s", "S")) or gazetteer.names.get(" ".join(fold(w) for w in words)):
        return None
    if not (ids := gazetteer.lookup(words)):  # the gazetteer's own tolerance decides what a genitive is
        return None
    stripped = part[:-1]
    key = [fold(word) for word in stripped.split()]
    for text in sources:
        for claim in find_places(text, gazetteer):
            if claim.ids & ids and [fold(word) for word in claim.text.split()] == key:
                return claim.text  # the question's spelling: "barcelonas" is planned as "Barcelona"
    return stripped

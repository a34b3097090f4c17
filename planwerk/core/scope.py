"""The places a plan is for: the ones the conversation names, all of those the question names. Pure: no I/O.

Measured with the packaged 0.5B model: "Und morgen?" after a Barcelona question was planned for Madrid and Lisbon
(the cities of a few-shot example), "Und in Paris?" added Halle, and a two-city comparison planned one city. Two
rules catch that before anything runs, for any profile (a plan whose arguments name no place is not affected):

- **invented**: every place an argument names must be named by the question, the earlier questions of the thread,
  the user's clarifications, the retrieved context or an earlier result;
- **missing**: when the plan names places at all, every place the question names must be among them.

And one helper keeps a follow-up's referent: :func:`referent_question` finds the earlier question a short
follow-up ("Und morgen?", "And in Paris?") continues, for the planner's prompt to show beside it, in the
shape the follow-up examples of the library have.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from planwerk.core.grounding import Gazetteer, find_places, fold, places_in_sources
from planwerk.core.plan import Plan
from planwerk.core.refs import ref_text

MAX_PLACE_ARGUMENT_WORDS = 6
"""String arguments longer than this are free text (a note, a query), not a place: not checked."""
MAX_FOLLOW_UP_WORDS = 8
"""A follow-up that opens like a continuation has at most this many words."""
MAX_BARE_FOLLOW_UP_WORDS = 3
"""A question this short with no opening ("Morgen?", "Und Sonntag?") is a follow-up too; a longer one that names
no place ("Was frisst das Razepato?") is a question of its own."""
CONTINUATION = re.compile(
    r"^\s*(und|and|what about|how about|was ist mit|wie ist es|wie sieht es|auch|also|dann|then|same)\b",
    re.IGNORECASE,
)
"""Openings of a follow-up that continues the previous question ("Und in Paris?", "What about tomorrow?")."""

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
class _Mention:
    text: str
    ids: frozenset[int]


def _strings(value: Any) -> Iterator[str]:
    """The literal strings of an argument value (references are not literals)."""
    if isinstance(value, str):
        if ref_text(value) is None:
            yield value
    elif isinstance(value, Mapping):
        if ref_text(value) is None:
            for item in value.values():
                yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def argument_places(value: str, gazetteer: Gazetteer) -> list[_Mention]:
    """The places a short string argument names: the whole value or a comma-separated part of it as a name
    ("Halle", "halle (saale)", "Barcelona, Spanien"), else the place claims of the text."""
    if len(value.split()) > MAX_PLACE_ARGUMENT_WORDS:
        return []
    mentions: list[_Mention] = []
    for part in re.split(r"[,;/()]", value):
        words = part.split()
        if words and (ids := gazetteer.lookup(words)):
            mentions.append(_Mention(part.strip(), ids))
    if mentions:
        return mentions
    text = value if not value.islower() else value.title()
    return [_Mention(claim.text, claim.ids) for claim in find_places(text, gazetteer)]


def plan_places(plan: Plan, gazetteer: Gazetteer) -> list[tuple[str, _Mention]]:
    """(call id, place) for every place the plan's literal arguments name, in plan order."""
    found: list[tuple[str, _Mention]] = []
    for _, call in plan.calls():
        for text in _strings(call.arguments):
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
    planned_ids = frozenset().union(*(mention.ids for _, mention in planned))
    planned_words = {fold(word) for _, mention in planned for word in mention.text.split()}
    for claim in find_places(question, gazetteer):
        words = [fold(word) for word in claim.text.split()]
        covered = claim.ids & planned_ids or all(w in planned_words for w in words)
        if not covered and fold(claim.text) not in reported:
            reported.add(fold(claim.text))
            problems.append(PlaceProblem("missing", claim.text))
    return problems


def is_follow_up(question: str) -> bool:
    """A short question that opens like a continuation ("Und in Paris?") or is only a few words ("Morgen?")."""
    words = len(question.split())
    if words > MAX_FOLLOW_UP_WORDS:
        return False
    return bool(CONTINUATION.match(question)) or words <= MAX_BARE_FOLLOW_UP_WORDS


def referent_question(question: str, earlier: Sequence[str]) -> str | None:
    """The earlier question a follow-up continues: the latest one that is not itself a follow-up; ``None`` when
    ``question`` is no follow-up or nothing came before."""
    if not earlier or not is_follow_up(question):
        return None
    for text in reversed(earlier):
        if text.strip() and not is_follow_up(text):
            return text.strip()
    return None

"""The answer checks as a table of small rules (:data:`RULES`), each a name and a function over one typed input
(:class:`Answer`: the answer, its sources, the question, its language, the conversation) that yields
:class:`Problem` s. :func:`check_answer` runs them all. Pure: no I/O.

What each problem kind means (the tests in ``tests/checks/`` pin each rule):

- ``empty``: nothing said (no text, or a bare number no call delivered; where results must be reported, a bare
  unitless number unless it is the last call's one-number result);
- ``repetitive`` / ``raw``: the same items again and again, or JSON instead of sentences;
- ``values_only``: a list of values and nothing else (bare numbers, and names the results or the question hold),
  with nothing said of what the values are (not where the answer is the last result);
- ``call_text``: a tool that ran written out as a call ("you can use ``send_money(…)``") instead of what it did;
- ``number`` / ``date`` / ``place``: a number (with its unit), clock time, date or place no source holds;
- ``withheld``: a value (or a condition word of the profile) a failed call would have delivered;
- ``failure_unnamed``: a call failed because its service is down, and no sentence names it with a failure word;
- ``false_failure``: a clause says that a tool failed (its name beside a failure phrase), and every call of it
  succeeded;
- ``place_failure``: a clause says that nothing could be had for a place (its name beside a failure phrase), and
  every call about that place succeeded;
- ``absence``: a sentence says there is none of something (an absence phrase, no failure phrase), and nothing was
  delivered for the question: the calls failed, and what succeeded only fed a call that failed;
- ``misquoted``: words in quotation marks (two or more) that no source holds, where every source is in the
  answer's language (a quotation claims a source's words; a translated one is not judged);
- ``failed_value``: every call failed, and the answer states a number, date or clock time without naming a failure
  (nor is it the profile's refusal); not amended in code, since the value it states is then no call's;
- ``last_result``: the last call's result is not stated (profiles whose answer is the last result);
- ``echo`` / ``restated`` / ``refused``: the prompt's instructions repeated, the question only restated, or the
  profile's refusal although a call delivered;
- ``failure_refused``: every call failed, and the answer is the profile's refusal, which says that no tool fits:
  a tool was called, and its failure is what there is to say;
- ``language``: the answer (a refusal too) is not in the question's language;
- ``referent``: it is about another place or date than the question (a follow-up's place and date carry over from
  the question it continues unless the user changed them);
- ``off_topic``: tools were asked and the answer copies a retrieved passage instead of saying what they found;
- ``misplaced`` / ``unreported``: a value (a clock time too) stated for a place whose calls or whose part of a
  result did not deliver it, or a place asked about with none of its own values (:mod:`planwerk.checks.pairs`);
- ``estimate_unnamed``: a result is flagged an estimate (profile data) and the answer does not say so;
- ``unbacked_action``: it says something was done and no call of a tool that acts succeeded, or a call of a tool
  declared to change something did not run and the answer does not say that something failed or was not done;
- ``source_missing`` / ``context_facts``: a context answer without its source or the best chunk's facts;
- ``unstated``: every call succeeded and the answer passed every other rule, yet states nothing they delivered.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Literal

from planwerk.checks.claims import claimed_action, says_not_done
from planwerk.checks.context import Analyze, KeyFacts, carries_facts, cites
from planwerk.checks.domain import NO_DOMAIN, Domain
from planwerk.checks.pairs import PlaceNumbers, PlaceTimes, clause_ends, misplaced, misplaced_times, unreported
from planwerk.checks.sources import DOWN_KINDS, Sources, Withheld
from planwerk.checks.words import check_words, problem_texts
from planwerk.core.calls import FailureKind
from planwerk.core.language import detect_language
from planwerk.text.dates import (
    CLOCK_TIME,
    DateClaim,
    clock_grounded,
    clock_times,
    date_grounded,
    find_date_claims,
)
from planwerk.text.numbers import NumberClaim, SourceNumber, find_numbers, format_value, number_grounded, states_value
from planwerk.text.numbers import source_numbers_in_text as _text_numbers
from planwerk.text.places import (
    CountryClaim,
    Gazetteer,
    PlaceClaim,
    countries_in_sources,
    find_countries,
    find_places,
    fold,
    folded_words,
    place_grounded,
    places_in_sources,
)

ProblemKind = Literal[
    "empty", "number", "date", "place", "withheld", "failure_unnamed", "failed_value", "last_result", "source_missing",
    "context_facts", "echo", "restated", "refused", "failure_refused", "unstated", "repetitive", "raw",
    "values_only", "estimate_unnamed", "unbacked_action", "language", "referent", "off_topic", "misplaced",
    "unreported", "call_text", "false_failure", "place_failure", "absence", "misquoted",
]  # fmt: skip
"""What is wrong with an answer (the module docstring says each)."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an answer; :meth:`message` says it in words."""

    kind: ProblemKind
    claim: str = ""
    """The answer's text that is wrong ("22 °C", "Madrid"), or the missing value for ``last_result``."""
    tool: str = ""
    """The failed tool (``withheld``, ``failure_unnamed``, ``failed_value``)."""
    failure: FailureKind | None = None
    """The failed call's kind (``withheld``, ``failure_unnamed``, ``failed_value``)."""
    source: str = ""
    """The best chunk's source (``source_missing``, ``context_facts``)."""
    facts: tuple[str, ...] = ()
    """Words of the best chunk's key sentence the answer should carry (``context_facts``)."""
    place: str = ""
    """What the question is about (``referent``: the asked place or date)."""

    def message(self, language: str = "en") -> str:
        """The problem in words, in ``language`` (the texts are data: ``words/<language>.toml``)."""
        return problem_texts(language)[self.kind].format(
            claim=self.claim, tool=self.tool, failure=self.failure or "", source=self.source,
            facts=", ".join(self.facts), place=self.place,
        )  # fmt: skip


@dataclass(frozen=True)
class Report:
    """The outcome of :func:`check_answer`."""

    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the answer passed."""
        return not self.problems


GroundingReport = Report
"""The former name of :class:`Report`."""


@dataclass(frozen=True)
class CheckSettings:
    """What the rules need besides the answer and its sources (:func:`planwerk.checks.build_answer_check` fills it
    from a run)."""

    gazetteer: Gazetteer | None = None
    dates: bool = True
    """Read dates (off for profiles without dates: "15.01" in a math answer is a number)."""
    withheld: Sequence[Withheld] = ()
    domain: Domain = NO_DOMAIN
    """The profile's domain knowledge (tool labels, condition and estimate words)."""
    last_result: float | None = None
    """The last call's result, when the answer must state it."""
    one_values: tuple[float, ...] = ()
    """The successful calls' one-number results whatever the profile: a bare number that is one of them is an
    answer ("42."; also when a stray call ran after the one that computed it: measured on the domain answers set,
    where only the last call's counted)."""
    estimated: bool = False
    """A successful call's values are flagged an estimate: the answer must say so."""
    context: KeyFacts | None = None
    """The best chunk's facts, when the answer must carry them (a context question)."""
    analyze: Analyze | None = None
    instructions: Sequence[str] = ()
    """The answer prompt's instructions; an answer repeating a run of their words is an ``echo``."""
    question: str = ""
    language: str | None = None
    """The question's language; ``None``: the answer's language is not checked."""
    asked_dates: Sequence[date] = ()
    """The days the question is about (a follow-up's carried over); an answer naming days names one of them."""
    referent: str = ""
    """The earlier question a follow-up continues (its places carry over unless the follow-up names its own)."""
    refusals: Sequence[str] = ()
    """The profile's refusal sentences; an answer repeating one is ``refused`` when a call succeeded."""
    report_results: bool = False
    """Whether an answer after calls that all succeeded must state something they delivered (``unstated``)."""
    place_numbers: PlaceNumbers = field(default_factory=dict)
    """The numbers the successful calls about each city delivered (:func:`~planwerk.checks.pairs.place_results`)."""
    place_reports: PlaceNumbers = field(default_factory=dict)
    """The same, counting only the calls an answer reports (no later call took their results)."""
    place_times: PlaceTimes = field(default_factory=dict)
    """The clock times of each city's own part of the results (:func:`~planwerk.checks.pairs.place_times`)."""
    unanswered: tuple[tuple[str, FailureKind | None], ...] = ()
    """The failed calls (tool, kind) where nothing was delivered for the question: no successful call's result was
    left for the answer (each fed a call that failed); empty otherwise."""
    failed_places: frozenset[int] = frozenset()
    """The cities a call that did not succeed was about (:func:`~planwerk.checks.pairs.failed_places`)."""
    actions: bool = False
    """Whether claimed actions are checked (the run knows which tools act)."""
    acted: bool = False
    """Whether a call of a tool that acts succeeded."""
    action_failed: bool = False
    """Whether a call of a tool declared to change something (MCP ``destructiveHint``, the profile's ``approve``
    list) did not run (failed, skipped, rejected): unless a call that acts succeeded, the answer must say that
    something was not done. Not for tools without annotations: a read-only tool that does not say so and failed
    beside calls that answered the question would reject a right answer (the answers set: ``read_resource``)."""
    all_failed: tuple[tuple[str, FailureKind | None], ...] = ()
    """(tool, failure kind) of the calls when calls ran and none succeeded: the answer must say so (a call a person
    rejected is their decision, not a failure to report)."""
    changed: bool = False
    """Whether a call of a tool declared to change something (MCP ``destructiveHint``, or the profile's ``approve``
    list) succeeded: an answer confirming it may state only the request's own values."""


@dataclass(frozen=True)
class Answer:
    """The one input every rule reads: the answer, what it may draw on, and its claims read once."""

    text: str
    sources: Sources
    settings: CheckSettings
    dates: list[DateClaim] = field(default_factory=list)
    numbers: list[NumberClaim] = field(default_factory=list)
    """Its numbers outside dates; small counts left out where a call ran or a chunk was retrieved (they may count
    what those hold, or the calls that failed)."""
    places: list[PlaceClaim] = field(default_factory=list)
    countries: list[CountryClaim] = field(default_factory=list)

    @classmethod
    def read(cls, text: str, sources: Sources, settings: CheckSettings) -> Answer:
        """Read ``text``'s dates, numbers and places."""
        dates = find_date_claims(text) if settings.dates else []
        # With nothing to count, a small whole number is a claim like any other (measured on the travel set with the
        # Q8_0 file, session 17: "Hotel Casa Fuster has 4 stars on Booking.com." after no call, no chunk, kept).
        counts = bool(sources.delivered_calls or sources.failed_tools or sources.chunks)
        found = find_numbers(text, skip=[(c.start, c.end) for c in dates])
        numbers = [n for n in found if not (n.is_small_integer and counts)]
        gazetteer = settings.gazetteer
        places = find_places(text, gazetteer) if gazetteer else []
        return cls(
            text, sources, settings, dates, numbers, places, find_countries(text, gazetteer) if gazetteer else []
        )


@dataclass(frozen=True)
class Rule:
    """One check: a name and a function over an :class:`Answer`."""

    name: str
    check: Callable[[Answer], Iterator[Problem]]
    last_resort: bool = False
    """Run only when every other rule passed."""
    by_construction: bool = False
    """Guaranteed for an answer decoded under the answer grammar (:mod:`planwerk.core.answers`): its digits are
    this run's placeholders, rendered by planwerk, or the question's and the conversation's; skipped for it."""
    only_constrained: bool = False
    """Run only for an answer decoded under the answer grammar: what the grammar lets through that a plain answer's
    other rules would catch."""


_WORDS = re.compile(r"[^\W\d_]{2,}")
_JSON_OBJECT = re.compile(r"""\{\s*["'][^"'\n]{1,40}["']\s*:""")
_LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]|[-*•])\s+")
REPEATED_ITEMS_MIN, REPEATED_ITEMS_SHARE = 6, 0.5
"""An answer of at least this many items (parts between commas, semicolons, line breaks) of which at most this
share is distinct repeats itself."""
ECHO_WORDS = 6
"""This many consecutive words shared with the instructions make an answer an echo of them."""
COPIED_WORDS = 8
"""This many consecutive words shared with a retrieved chunk make an answer a copy of it."""
RESTATED_SHARE, RESTATED_NEW_WORDS = 0.7, 2
"""An answer holding a run of this share of the question's words (at least four), adding at most this many words
of its own, restates it."""
MIN_RESULT_TEXT = 4
"""A result's word counts as stated from this many letters on ("ES" alone says nothing)."""


def _empty(a: Answer) -> Iterator[Problem]:
    if not a.text.strip():
        yield Problem("empty")
    elif not _WORDS.search(a.text) and not CLOCK_TIME.search(a.text):
        numbers, s = find_numbers(a.text), a.settings
        computed = any(number_grounded(n, [SourceNumber(value) for value in s.one_values]) for n in numbers)
        results = [n for n in a.sources.delivered if n.unit != "date"]
        reports = s.report_results and s.last_result is None and not computed
        if not any(n.unit for n in numbers) and (reports or not any(number_grounded(n, results) for n in numbers)):
            yield Problem("empty", a.text.strip())


_LOOP = re.compile(r"(\S+(?:\s+\S+)+?)(?:\s+\1){2,}")
"""A phrase of two words or more said three times in a row: a model decoding in a loop ("It says: It says: It
says: …", measured on the 0.5B model)."""


def _list_items(answer: str) -> list[str]:
    """``answer``'s parts between commas (not a decimal comma), semicolons and line breaks, list markers removed."""
    return [_LIST_MARKER.sub("", part.strip()) for part in re.split(r",(?!\d)|[;\n]", answer)]


def repeats_itself(answer: str) -> bool:
    """Whether ``answer`` is a list naming the same items again and again (see :data:`REPEATED_ITEMS_MIN`), or
    says one phrase three times in a row (:data:`_LOOP`)."""
    items = [fold(part).strip(" .") for part in _list_items(answer)]
    items = [item for item in items if item]
    if len(items) >= REPEATED_ITEMS_MIN and len(set(items)) <= REPEATED_ITEMS_SHARE * len(items):
        return True
    return _LOOP.search(" ".join(fold(answer).split())) is not None


def without_repeats(answer: str) -> str | None:
    """``answer`` with what a model decoding in a loop wrote again taken out, or ``None`` when it holds no such
    repeat: a phrase said three times in a row once (:data:`_LOOP`), a list line (after its marker) that an earlier
    line already has dropped, and a last list line cut off inside an item an earlier line names (the reply hit its
    token limit); numbered lines are numbered again in order. Measured with the 0.5B model (BENCHMARKS.md §12,
    session 8): a list of three names numbered on and on until the limit, both drafts alike, then the fallback. What
    is left is checked again; an answer that is nothing but the loop (a lead-in said over and over) has nothing
    left."""
    text = _LOOP.sub(r"\1", answer)
    phrases = [match.group(1) for match in _LOOP.finditer(answer)]
    rest = _LOOP.sub("", answer).strip()
    if phrases and (not re.search(r"\w", rest) or any(phrase.startswith(rest) for phrase in phrases)):
        return None  # the loop is all the answer says (a lead-in over and over, maybe cut inside): nothing is left
    kept: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        marker = _LIST_MARKER.match(line.strip())
        item = fold(line.strip()[marker.end() :] if marker else "").strip(" .")
        if marker and item in seen:
            continue
        if marker and item:
            seen.add(item)
        kept.append(line)
    last = kept[-1].strip() if kept else ""
    if (marker := _LIST_MARKER.match(last)) is not None:
        tail = fold(last[marker.end() :]).strip(" .")
        if any(item != tail and item.startswith(tail) for item in seen):
            kept.pop()
    number = 0

    def renumbered(line: str) -> str:
        nonlocal number
        if (found := re.match(r"^(\s*)\d{1,2}([.)]\s+)", line)) is None:
            return line
        number += 1
        return f"{found.group(1)}{number}{found.group(2)}{line[found.end() :]}"

    result = "\n".join(renumbered(line) for line in kept).strip()
    return result if result and result != answer.strip() else None


VALUE_LIST_MIN, BARE_VALUES_MIN = 3, 2
"""An answer of at least this many items (parts between commas, semicolons, line breaks, full stops), this many of
them bare values (no letter: numbers, dates, coordinates) and the rest names a result or the question holds, lists
values without saying what they are."""


def lists_values_only(answer: str, names: Sequence[str]) -> bool:
    """Whether ``answer`` is a list of values and nothing else (see :data:`VALUE_LIST_MIN`): four numbers, a date
    and a result's name say nothing a reader can use, though each value is grounded (the 0.5B model's second answer
    after a rejected one, BENCHMARKS.md §12). ``names``: the texts the results and the question hold."""
    # "56. 2026-11-26. 18:00. …": values as sentences of their own (list numbers are gone by now)
    items = [item.strip(" .") for part in _list_items(answer) for item in re.split(r"\.\s+", part)]
    items = [item for item in items if item]
    if len(items) < VALUE_LIST_MIN:
        return False
    held = " ".join(fold(name) for name in names)
    bare = 0
    for item in items:
        if not re.search(r"[^\W\d_]", item):
            bare += 1
        elif not re.search(rf"(?<!\w){re.escape(fold(item))}(?!\w)", held):
            return False  # a word of the answer's own: it says something about the values
    return bare >= BARE_VALUES_MIN


def _assigned(call_id: str, answer: str) -> bool:
    """Whether ``answer`` writes a value as the answer prompt lists results, under a call's id ("list_directory_1.
    content = FILE", kept for the 0.5B model on the domain bench): data in the prompt's form, not a sentence."""
    return re.search(rf"(?<![\w.]){re.escape(call_id)}(?:\.[\w.\[\]]+)?\s*=(?!=)", answer) is not None


LABELLED_VALUES_MIN = 3
"""Segments of an answer that begin with the same result key: the answer prompt's "key value; key value" copied."""


def _labelled_values(answer: str, keys: set[str]) -> bool:
    """Whether ``answer`` lists values as the answer prompt does, "key value; key value; …", one key at least
    :data:`LABELLED_VALUES_MIN` times ("content ```diff; content ====; content Index: …", kept for the 1.5B model on
    the domain bench after a file edit): data in the prompt's form, not sentences."""
    counts: dict[str, int] = {}
    for segment in answer.casefold().split(";"):
        words = segment.split()
        for size in (1, 2, 3):
            label = " ".join(words[:size])
            if len(words) > size and label in keys:
                counts[label] = counts.get(label, 0) + 1
                break
    return any(count >= LABELLED_VALUES_MIN for count in counts.values())


LISTED_SEGMENTS_MIN, LISTED_SEGMENT_WORDS = 4, 5
"""An answer of at least this many parts between semicolons, none of more than this many words, half of them or
more with a digit, lists values as the answer prompt does."""


def _listed_values(answer: str) -> bool:
    """Whether ``answer`` is the answer prompt's listing of a result, "value; label value; …" (see
    :data:`LISTED_SEGMENTS_MIN`), not sentences: kept for the 0.5B model on the travel set (session 17, the Q8_0
    file), "10.8 °C; höchste Temperatur 13.6 °C; Niederschlag 26.8 mm; Wind bis 15.1 km/h; Gewitter; …", which names
    neither the place nor the day. A list of names alone ("Parc Güell; Bosc Humit; …") is not."""
    segments = [segment.strip() for segment in answer.strip().rstrip(".").split(";")]
    if len(segments) < LISTED_SEGMENTS_MIN or any(len(segment.split()) > LISTED_SEGMENT_WORDS for segment in segments):
        return False
    return 2 * sum(any(char.isdigit() for char in segment) for segment in segments) >= len(segments)


def _form(a: Answer) -> Iterator[Problem]:
    if repeats_itself(a.text):
        yield Problem("repetitive")
    if (
        _JSON_OBJECT.search(a.text)
        or any(_assigned(call_id, a.text) for call_id in a.sources.call_ids)
        or _labelled_values(a.text, a.sources.result_keys)
    ):
        yield Problem("raw")
    elif a.settings.last_result is None and lists_values_only(a.text, [*a.sources.result_texts, *a.sources.asked]):
        yield Problem("values_only")
    elif _listed_values(a.text):
        yield Problem("raw")
    # A small model answered a call that had run by telling the user how to make it ("you can use `tool(…)`"). Only
    # the name touching its parenthesis counts: "tool (its arguments): …" is how the deterministic answer names a call.
    if called := next((t for t in a.sources.tools if re.search(rf"\b{re.escape(t)}\(", a.text)), None):
        yield Problem("call_text", called)


def _withheld_owner(number: NumberClaim, withheld: Sequence[Withheld]) -> Withheld | None:
    units = {unit: w for w in withheld for unit in w.units}
    if number.unit in ("°", "°F") and "°C" in units:  # "22 Grad" for a temperature
        return units["°C"]
    return units.get(number.unit) if number.unit else None


def _withheld(a: Answer) -> Iterator[Problem]:
    """A number of the kind a failed call would have delivered (its unit) counts only when a successful call or the
    user gave it, not a chunk (kept for constrained answers too: the grammar admits a chunk's digits when no call
    delivered)."""
    for number in a.numbers:
        owner = _withheld_owner(number, a.settings.withheld)
        if owner is not None and not number_grounded(number, a.sources.delivered):
            yield Problem("withheld", number.text, owner.tool, owner.kind)


def _grounded_values(a: Answer) -> Iterator[Problem]:
    """Dates, numbers and clock times must be in a source (a time inside an ISO datetime counts)."""
    sources = a.sources
    yield from (Problem("date", c.text) for c in a.dates if not date_grounded(c, sources.dates))
    for number in a.numbers:
        if _withheld_owner(number, a.settings.withheld) is None and not number_grounded(number, sources.numbers):
            yield Problem("number", number.text)
    if claimed := [m.group() for m in CLOCK_TIME.finditer(a.text)]:
        times = set().union(*(clock_times(text) for text in sources.texts))
        yield from (Problem("number", claim) for claim in claimed if not clock_grounded(claim, times))


def _grounded_places(a: Answer) -> Iterator[Problem]:
    """Places and countries must be in a source (letters are free text under the answer grammar too)."""
    if a.settings.gazetteer is not None and (a.places or a.countries):
        ids, found = places_in_sources(a.sources.texts, a.settings.gazetteer)
        yield from (Problem("place", p.text) for p in a.places if not place_grounded(p, ids, found))
        known = countries_in_sources(a.sources.texts, a.settings.gazetteer, ids) if a.countries else frozenset()
        yield from (Problem("place", c.text) for c in a.countries if c.code not in known)


def names_failure(answer: str, tool: str, labels: Sequence[str], failure_words: Sequence[str] = ()) -> bool:
    """Whether one sentence of ``answer`` names the tool (its name or a label such as "Wetter") and a failure."""
    names = [n.casefold() for n in (tool, tool.replace("_", " "), *labels)]
    failures = failure_words or check_words().failure
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer.casefold()):
        if any(n in sentence for n in names) and any(w.casefold() in sentence for w in failures):
            return True
    return False


def _clauses(answer: str, contrast: Collection[str]) -> list[list[str]]:
    """``answer``'s clauses as case-folded words: split at sentence ends, commas, semicolons, colons, line breaks,
    brackets and the ``contrast`` conjunctions."""
    clauses: list[list[str]] = []
    for part in re.split(r"[.!?;:,()\n]+", answer.casefold().replace("’", "'")):
        clause: list[str] = []
        for word in re.findall(r"[\w']+", part):
            if word in contrast:
                clauses.append(clause)
                clause = []
            else:
                clause.append(word)
        clauses.append(clause)
    return [clause for clause in clauses if clause]


@cache
def _joined_phrases(name: Literal["failure", "absence"]) -> tuple[str, ...]:
    """A phrase list of :func:`~planwerk.checks.words.check_words` as " word word " (matched inside a clause's words
    joined the same way), read once."""
    phrases = (" ".join(re.findall(r"[\w']+", phrase.casefold())) for phrase in getattr(check_words(), name))
    return tuple(f" {phrase} " for phrase in phrases if phrase)


@cache
def _clause_words() -> tuple[tuple[str, ...], frozenset[str]]:
    """The failure phrases (:func:`_joined_phrases`) and the contrasting conjunctions, read once."""
    return _joined_phrases("failure"), frozenset(w.casefold() for w in check_words().contrast)


def _false_failure(a: Answer) -> Iterator[Problem]:
    """A clause says that a tool failed (a failure phrase beside its name), and every call of that tool succeeded
    (measured on the travel set, BENCHMARKS.md §12: a tool that had delivered was said to be unreachable together
    with the one that was). Only a tool's own name counts, not a domain label: a label also names what the question
    is about."""
    ran = set(a.sources.tools) - set(a.sources.failed_tools)
    if not ran:
        return
    failures, contrast = _clause_words()
    said: set[str] = set()
    for clause in _clauses(a.text, contrast):
        joined = f" {' '.join(clause)} "
        if not any(phrase in joined for phrase in failures):
            continue
        for tool in sorted(ran - said):
            if f" {tool.casefold()} " in joined or f" {tool.casefold().replace('_', ' ')} " in joined:
                said.add(tool)
                yield Problem("false_failure", tool=tool)


def _absence(a: Answer) -> Iterator[Problem]:
    """A sentence says there is none of something without saying that a call failed, where nothing was delivered for
    the question (measured on the travel set: none of what a failed service would have listed was said to exist, and
    the answer was kept with the failure sentence added). A sentence, not a clause: the failure may be said in
    another clause of it ("none I can name, since X failed")."""
    if not a.settings.unanswered:
        return
    absent, failed = _joined_phrases("absence"), _joined_phrases("failure")
    for sentence in _parts(a.text, sentences=True):
        if any(p in sentence for p in absent) and not any(p in sentence for p in failed):
            tool, kind = a.settings.unanswered[0]
            yield Problem("absence", sentence.strip(), tool=tool, failure=kind)
            return


def _joined_words(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", text.casefold()))


def _parts(answer: str, *, sentences: bool = False) -> Iterator[str]:
    """``answer``'s clauses (or sentences) as " word word " (:func:`_joined_words`, spaces around); a date's dots
    end none ("am 20. Januar", :func:`~planwerk.checks.pairs.clause_ends`)."""
    ends = [end for end in clause_ends(answer) if not sentences or answer[end] in ".!?\n"]
    for start, end in itertools.pairwise([-1, *ends, len(answer)]):
        yield f" {_joined_words(answer[start + 1 : end])} "


def _place_failure(a: Answer) -> Iterator[Problem]:
    """A clause says that nothing could be had for a place (its name beside a failure phrase), and every call about
    that place succeeded (measured on the travel set: two places' data said to be unavailable where only one place's
    call had failed, and every other rule passed)."""
    delivered = {city for city, found in a.settings.place_numbers.items() if found}
    wrong = [p for p in a.places if p.ids & delivered and not p.ids & a.settings.failed_places]
    if not wrong:
        return
    failures = _joined_phrases("failure")
    said: set[str] = set()
    for joined in _parts(a.text):
        if any(phrase in joined for phrase in failures):
            for place in wrong:
                name = _joined_words(place.text)
                if name not in said and f" {name} " in joined:
                    said.add(name)
                    yield Problem("place_failure", place=place.text)


_QUOTED = re.compile(r'"([^"\n]+)"|„([^“”"\n]+)[“”"]|“([^”\n]+)”|«([^»\n]+)»|»([^«\n]+)«')
"""Text in double quotation marks of any of the usual forms (an apostrophe is no quotation mark)."""
MIN_QUOTED_WORDS = 2
"""A quotation of fewer words is a name or a term ("invoice.txt", „Razepato“), judged by the other rules."""
MIN_JUDGED_SOURCE_WORDS = 4
"""A source text of fewer words shows no language (a name, a value)."""


def _misquoted(a: Answer) -> Iterator[Problem]:
    """Words in quotation marks are a claim that a source says them: a quotation no result, chunk, question or
    conversation holds is invented (measured on the answers set: the 0.5B model answered an invoice question with
    'It says: "It says: failed"' after the file was read). An ellipsis may shorten a quotation: each part must be
    there. Not judged where a chunk or a result text is in another language than the answer: a quotation may then
    be a translation."""
    language = a.settings.language or detect_language(a.text, "en")
    texts = [*a.sources.texts, *(text for _, text in a.sources.chunks)]
    judged = [t for t in [*a.sources.result_texts, *(text for _, text in a.sources.chunks)]
              if len(t.split()) >= MIN_JUDGED_SOURCE_WORDS]  # fmt: skip
    if any(detect_language(text, language) != language for text in judged):
        return
    held = " ".join(" ".join(fold(text).split()) for text in texts)
    for match in _QUOTED.finditer(a.text):
        if match.group().strip() == a.text.strip():
            continue  # the whole answer in quotation marks (a small model's habit) quotes nothing
        quoted = next(group for group in match.groups() if group is not None).strip()
        parts = [" ".join(fold(part).split()).strip(" .,;:!?") for part in re.split(r"…|\.\.\.", quoted)]
        if len(quoted.split()) >= MIN_QUOTED_WORDS and not all(part in held for part in parts if part):
            yield Problem("misquoted", quoted)
            return


def _failed_service(a: Answer) -> Iterator[Problem]:
    domain, asked = a.settings.domain, " ".join(a.sources.asked).casefold()
    lowered = a.text.casefold()
    for withheld in a.settings.withheld:
        labels = domain.tool_labels.get(withheld.tool, ())
        if withheld.kind in DOWN_KINDS and not names_failure(a.text, withheld.tool, labels):
            yield Problem("failure_unnamed", tool=withheld.tool, failure=withheld.kind)
        if withheld.conditions:
            said = [w for w in domain.condition_words if re.search(rf"\b{re.escape(w)}", lowered) and w not in asked]
            yield from (Problem("withheld", w, withheld.tool, withheld.kind) for w in said[:1])


def _all_failed(a: Answer) -> Iterator[Problem]:
    """Calls ran and every one failed. The profile's refusal is no answer then (``failure_refused``): it says that
    no tool fits, and one was called. An answer that states a number, date or clock time (which then only the
    question can hold) must name one of the calls with a failure word (``failed_value``). Without
    this rule only a service that was down had to be named; after calls that failed on their arguments the 0.5B
    model stated the question's own clock time, or today's date, as the answer, and both passed (the domain bench's
    answer set). An answer that states no value ("I do not know that place.") may say the
    failure in its own words. The problem is ``failed_value``, which code does not amend: amended with the failure
    sentence, "Es ist 12:00 Uhr in Berlin." stood beside it (the same set, three answers kept so)."""
    s = a.settings
    if not s.all_failed:
        return
    if s.refusals and echoes(a.text, s.refusals):
        # The refusal says that no tool fits; one was called and failed (measured on the domain answers set: the
        # generic refusal kept after a call failed on its arguments).
        yield Problem("failure_refused", tool=s.all_failed[0][0], failure=s.all_failed[0][1])
        return
    if not (a.numbers or a.dates or CLOCK_TIME.search(a.text)):
        return
    if not any(names_failure(a.text, tool, s.domain.tool_labels.get(tool, ())) for tool, _ in s.all_failed):
        tool, kind = s.all_failed[0]
        yield Problem("failed_value", tool=tool, failure=kind)


def _last_result(a: Answer) -> Iterator[Problem]:
    value = a.settings.last_result
    if value is not None and not states_value(a.text, value, dates=a.settings.dates):
        yield Problem("last_result", format_value(value))


def echoes(answer: str, instructions: Sequence[str], count: int = ECHO_WORDS) -> bool:
    """Whether ``answer`` repeats ``count`` consecutive words of one of ``instructions`` (case and accents folded)."""
    said = [fold(w) for w in re.findall(r"[^\W\d_]+", answer)]
    runs = {tuple(said[i : i + count]) for i in range(len(said) - count + 1)}
    for text in instructions:
        told = [fold(w) for w in re.findall(r"[^\W\d_]+", text)]
        if any(tuple(told[i : i + count]) in runs for i in range(len(told) - count + 1)):
            return True
    return False


def restates(answer: str, question: str) -> bool:
    """Whether ``answer`` only repeats ``question`` (most of its words in order, at most
    :data:`RESTATED_NEW_WORDS` of its own, no number of its own)."""
    if set(re.findall(r"\d+", answer)) - set(re.findall(r"\d+", question)):
        return False
    said, asked = (
        [fold(w) for w in re.findall(r"[^\W\d_]+", answer)],
        [fold(w) for w in re.findall(r"[^\W\d_]+", question)],
    )
    run = max(4, math.ceil(RESTATED_SHARE * len(asked)))
    if len(asked) < run or len(said) < run or sum(word not in set(asked) for word in said) > RESTATED_NEW_WORDS:
        return False
    runs = {tuple(asked[i : i + run]) for i in range(len(asked) - run + 1)}
    return any(tuple(said[i : i + run]) in runs for i in range(len(said) - run + 1))


def _repeats(a: Answer) -> Iterator[Problem]:
    s = a.settings
    if s.instructions and echoes(a.text, s.instructions):
        yield Problem("echo")
    if s.question and not s.changed and restates(a.text, s.question):  # a confirmation restates the request
        yield Problem("restated")
    if s.refusals and a.sources.delivered_calls and echoes(a.text, s.refusals):
        yield Problem("refused")


def _language(a: Answer) -> Iterator[Problem]:
    """The answer is in the question's language, a refusal too (issue 30: English questions refused in German)."""
    wanted = a.settings.language
    question = a.settings.question
    if question and detect_language(question, "de") != detect_language(question, "en"):
        return  # the question shows no language ("(1+2)+(3+4)?"): any answer language is the question's
    if wanted and (said := detect_language(a.text, wanted)) != wanted:  # type: ignore[arg-type]
        yield Problem("language", said, place=wanted)


def _referent(a: Answer) -> Iterator[Problem]:
    """The answer is about the asked place and days: when it names days, one of them is asked (a range counts
    whole); when it names cities, one of them is asked. A follow-up's place comes from the question it continues
    unless it names its own (issue 30: "Und am 19. Januar?" answered for the 18th, "And in Rome?" for another day)."""
    asked = sorted(a.settings.asked_dates)
    if asked and a.dates:

        def inside(c: DateClaim) -> bool:
            return any(asked[0] <= date(c.year or asked[0].year, month, day) <= asked[-1] for month, day in
                       ((c.month, c.day), *c.alternatives))  # fmt: skip

        if not any(inside(c) for c in a.dates):
            yield Problem("referent", a.dates[0].text, place=", ".join(d.isoformat() for d in asked))
    gazetteer = a.settings.gazetteer
    if gazetteer is None or not a.places:
        return
    wanted = find_places(a.settings.question, gazetteer) or find_places(a.settings.referent, gazetteer)
    if wanted and not any(p.ids & w.ids for p in a.places for w in wanted):
        yield Problem("referent", a.places[0].text, place=", ".join(w.text for w in wanted))


def states_a_result(a: Answer) -> bool:
    """Whether the answer states a value the reported results hold that the question does not: a number, a clock
    time, or a word of :data:`MIN_RESULT_TEXT` letters from a result text that does not name the question's
    capitalised words back (a geocoder's name for the asked place says nothing new)."""
    sources, question = a.sources, a.settings.question
    asked_numbers = _text_numbers(question)
    if any(number_grounded(n, sources.result_numbers) and not number_grounded(n, asked_numbers) for n in a.numbers):
        return True
    times = set().union(*(clock_times(t) for t in sources.result_texts)) - clock_times(question)
    if any(clock_grounded(m.group(), times) for m in CLOCK_TIME.finditer(a.text)):
        return True
    named = {fold(w) for w in re.findall(r"[^\W\d_]+", question) if len(w) >= MIN_RESULT_TEXT and w[0].isupper()}
    texts = [folded_words(text, MIN_RESULT_TEXT) for text in sources.result_texts]
    delivered = set().union(*(found for found in texts if not found & named))
    return bool((delivered - folded_words(question)) & folded_words(a.text, MIN_RESULT_TEXT))


def _off_topic(a: Answer) -> Iterator[Problem]:
    """Tools were asked, and the answer copies a retrieved passage of a document whose subject (its name) the
    question does not name, stating nothing the tools found (issue 30: "Gibt es Parks im Umkreis von 5 km um
    Palma?" was answered with a passage of Razepato.txt about parks in Barcelona)."""
    s = a.settings
    if s.context is not None or s.analyze is None or not (a.sources.delivered_calls or s.withheld):
        return
    asked = set(s.analyze(s.question))
    for document, text in a.sources.chunks:
        subject = set(s.analyze(document.rsplit(".", 1)[0]))
        if subject and not subject & asked and echoes(a.text, [text], COPIED_WORDS) and not states_a_result(a):
            yield Problem("off_topic", document)
            return


def _pairs(a: Answer) -> Iterator[Problem]:
    s, sources = a.settings, a.sources
    grounded = [n for n in a.numbers if number_grounded(n, sources.numbers)]
    if s.place_numbers and a.places:
        results = {id(n) for n in sources.result_numbers}
        elsewhere = [n for n in sources.numbers if id(n) not in results]  # question, chunks, arguments
        for value, place in misplaced(a.text, grounded, a.places, elsewhere, s.place_numbers):
            yield Problem("misplaced", value, place=place)
    if s.place_times and a.places:
        asked = set().union(*(clock_times(text) for text in sources.asked))
        for value, place in misplaced_times(a.text, a.places, s.place_times, asked):
            yield Problem("misplaced", value, place=place)
    if s.place_reports and s.question and s.gazetteer is not None:
        yield from (
            Problem("unreported", place=p) for p in unreported(grounded, s.question, s.gazetteer, s.place_reports)
        )


def _estimate(a: Answer) -> Iterator[Problem]:
    said = a.text.casefold()
    if (
        a.settings.estimated
        and a.sources.delivered_calls
        and not any(w in said for w in a.settings.domain.estimate_words)
    ):
        yield Problem("estimate_unnamed")


def _action(a: Answer) -> Iterator[Problem]:
    if not a.settings.actions or a.settings.acted:
        return
    if claimed := claimed_action(a.text):
        yield Problem("unbacked_action", claimed)
    elif a.settings.action_failed and a.text.strip() and not says_not_done(a.text):
        yield Problem("unbacked_action", a.text.strip().split("\n")[0][:160])


def _context(a: Answer) -> Iterator[Problem]:
    facts, analyze = a.settings.context, a.settings.analyze
    if facts is not None and analyze is not None:
        if not cites(a.text, facts.source):
            yield Problem("source_missing", source=facts.source)
        if not carries_facts(a.text, facts, analyze=analyze):
            yield Problem("context_facts", source=facts.source, facts=facts.words[:8])


def _says_no_result(a: Answer) -> bool:
    """Tools delivered results the answer should report (no withheld value, no context question, no call that
    changed something), and it states none of them. A call declared to change something answers by being done: its
    result repeats the request ("sent 25 to DE44… on 2026-11-27"), and an answer confirming it states only what the
    question said (the domain set: 3 of 12 confirmations rejected for it). Tools without annotations are not taken
    for such calls here: a read would then need to report nothing."""
    s = a.settings
    return bool(
        s.report_results and a.sources.delivered_calls and not s.withheld and s.context is None and not s.changed
        and not states_a_result(a)
    )  # fmt: skip


def _unstated(a: Answer) -> Iterator[Problem]:
    # Talking about the asked place or days, or announcing what follows (a lead-in ending in a colon, the 0.5B
    # model's reply cut off in a loop), without stating what the tools delivered.
    announces = a.text.rstrip().endswith(":")
    if a.settings.last_result is None and (a.dates or a.places or announces) and _says_no_result(a):
        yield Problem("unstated")


def _no_value(a: Answer) -> Iterator[Problem]:
    """An answer decoded under the answer grammar to a question the tools answered, stating no value of theirs:
    the grammar guarantees that a value is one of the results, not that there is one (a small model's constrained
    answer stopped right before its value). Not where the answer is the last result: the last-result rule judges
    it, and that result may be a number the question holds too (NESTFUL: 5 bills of a "10$ and 5$" question)."""
    if a.settings.last_result is None and _says_no_result(a):
        yield Problem("unstated")


RULES: tuple[Rule, ...] = (
    Rule("empty", _empty),
    Rule("form", _form),
    Rule("grounded", _grounded_values, by_construction=True),
    Rule("withheld", _withheld),
    Rule("places", _grounded_places),
    Rule("pairs", _pairs),
    Rule("failed_service", _failed_service),
    Rule("false_failure", _false_failure),
    Rule("place_failure", _place_failure),
    Rule("absence", _absence),
    Rule("misquoted", _misquoted),
    Rule("all_failed", _all_failed),
    Rule("last_result", _last_result),
    Rule("repeats", _repeats),
    Rule("language", _language),
    Rule("referent", _referent),
    Rule("off_topic", _off_topic),
    Rule("estimate", _estimate),
    Rule("action", _action),
    Rule("context", _context),
    Rule("unstated", _unstated, last_resort=True),
    Rule("no_value", _no_value, last_resort=True, only_constrained=True),
)
"""The rules, in the order their problems are reported."""


def check_answer(
    answer: str, sources: Sources, settings: CheckSettings, rules: Sequence[Rule] = RULES, *, constrained: bool = False
) -> Report:
    """Every problem ``rules`` find in ``answer``; ``constrained``: the answer was decoded under the answer grammar,
    so the rules it guarantees by construction (:attr:`Rule.by_construction`) are skipped and those for what it
    does not guarantee (:attr:`Rule.only_constrained`) run."""
    if not answer.strip():
        return Report((Problem("empty"),))
    read = Answer.read(answer, sources, settings)
    rules = [rule for rule in rules if not (rule.by_construction if constrained else rule.only_constrained)]
    problems = [p for rule in rules if not rule.last_resort for p in rule.check(read)]
    if not problems:
        problems = [p for rule in rules if rule.last_resort for p in rule.check(read)]
    return Report(tuple(dict.fromkeys(problems)))

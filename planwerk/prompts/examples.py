"""Few-shot examples: solved plans, chosen per question.

Small models copy the shape of the example they are shown, so the example should resemble the question and use
only tools that are loaded. The library is the packaged ``examples/<profile>.json`` files plus plans that ran
cleanly and were saved with :func:`add_example` (``$PLANWERK_HOME/examples.jsonl``). Examples are ranked by
embedding similarity of the questions (``planwerk.rag.embeddings``) plus their word overlap: the packaged
embedding model is English and alone ranked "Vergleiche das Wetter in Madrid und Lissabon" above "Wie wird das
Wetter in Rom" for a one-city German weather question (and a small model copies the example's shape). Word
overlap alone is the fallback when no embedding model can be loaded.

With a gazetteer, questions are compared by their shape, not their places: city names become ``X`` on both sides,
and word overlap ignores numbers, month names and function words. Measured on the travel bench (2a0a8ce), the
one example about Barcelona ("... in Barcelona ... joggen", ``rank_spots``) ranked first for every Barcelona
question, and three of them (rain on a day, weather for a week, hiking spots) then planned ``rank_spots``; a
two-city comparison got three one-city examples and its plan failed. So examples that name as many places as the
question (when it names any) come first: the number of places decides how many chains a plan has. Examples naming
as many dates (none, one day, or a range) gain a bonus: "Which beach near Barcelona is best from 2026-06-10 to
2026-06-12?" got the dateless beach example and planned ``get_spots``, not ``rank_spots``; "Find hiking spots
within 15 km of Barcelona." got a dated hiking example second and planned ``rank_spots`` for made-up days.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from planwerk.core.plan import Plan, PlanData, planned_calls
from planwerk.home import planwerk_home
from planwerk.rag.embeddings import embed, load_embedder
from planwerk.text.dates import MONTH_WORDS, find_dates
from planwerk.text.places import Gazetteer, find_places, fold

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
PLACE_MASK = "X"
"""What a city name becomes when questions are compared by shape."""
_BRACKETED = re.compile(r"\([^()]*\)")
_SAME_PLACES_TIER = 10.0
"""Added to the score of an example that names as many places as the question: more than any similarity (a
cosine plus an overlap is at most 2)."""
_SAME_DATES_BONUS = 1.0
"""Added to the score of an example that names as many dates as the question (none, one, or a range), when the
question names a place or a date: a date range needs a plan with two date arguments, a question without dates no
weather-ranked spots. Less than the places' tier, and not always more than a closer question."""
_DATE_REFERENCE = date(2026, 1, 1)
"""Counting dates needs a "today" for relative ones ("morgen"); which day it is does not change the count."""
USER_EXAMPLES_FILE = "examples.jsonl"

Ranking = Literal["hybrid", "embedding", "words"]


@dataclass(frozen=True)
class Example:
    """A question and the plan that answers it."""

    question: str
    plan: PlanData = field(hash=False)
    """In the shape the planner writes (``{"steps", "final"}``), shown to it as it is."""

    @property
    def tools(self) -> frozenset[str]:
        """The tool names the plan uses."""
        return frozenset(call.name for _, call in planned_calls(self.plan))


@cache
def library(name: str = "travel") -> tuple[Example, ...]:
    """The packaged examples of a profile, or those of a JSON file (an absolute path ending in ``.json``: a
    profile file's own examples, checked when the profile file was read)."""
    if name.endswith(".json") and Path(name).is_absolute():
        text = Path(name).read_text(encoding="utf-8")
    else:
        text = resources.files("planwerk.prompts").joinpath("examples", f"{name}.json").read_text(encoding="utf-8")
    return tuple(Example(item["question"], item["plan"]) for item in json.loads(text))


def user_examples_path() -> Path:
    """Where :func:`add_example` keeps saved plans."""
    return planwerk_home() / USER_EXAMPLES_FILE


_file_lock = threading.Lock()


def _check_plan(plan: Mapping[str, Any]) -> None:
    """Raise :class:`ValueError` unless ``plan`` is a plan with ``steps`` (an example is read as a stored plan)."""
    if "steps" not in plan:
        raise ValueError("an example plan needs 'steps': a list of {'description', 'tools'} objects")
    try:
        Plan.model_validate(plan)
    except ValidationError as exc:
        raise ValueError(
            "an example plan needs 'steps': a list of {'description', 'tools': [{'id', 'name', 'arguments'}]} "
            f"objects; {exc}"
        ) from None


def add_example(question: str, plan: Mapping[str, Any], path: Path | None = None) -> Example:
    """Save a plan that ran cleanly as an example for similar questions (skipped if already saved)."""
    question = " ".join(question.split())
    if not question:
        raise ValueError("an example needs a non-empty question")
    _check_plan(plan)
    example = Example(question, json.loads(json.dumps(plan)))
    target = path or user_examples_path()
    with _file_lock:
        if any(e.question == example.question and e.plan == example.plan for e in load_user_examples(target)):
            return example
        target.parent.mkdir(parents=True, exist_ok=True)
        record = {"question": example.question, "plan": example.plan, "added": datetime.now(UTC).isoformat()}
        with target.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return example


def load_user_examples(path: Path | None = None) -> tuple[Example, ...]:
    """The saved examples (broken lines are skipped with a warning)."""
    source = path or user_examples_path()
    if not source.is_file():
        return ()
    examples: list[Example] = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            _check_plan(record["plan"])
            examples.append(Example(str(record["question"]), record["plan"]))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s line %d is not an example, skipped: %s", source, number, exc)
    return tuple(examples)


def _words(text: str, ignore: Collection[str] = frozenset()) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in ignore}


def _overlap(question: str, example: Example, ignore: Collection[str] = frozenset()) -> float:
    theirs = _words(example.question, ignore)
    return len(_words(question, ignore) & theirs) / (1 + len(theirs))


@dataclass(frozen=True)
class QuestionShape:
    """A question with its places masked, the number of distinct places it names outside brackets, and the words
    that say nothing about a plan's shape (see the module docstring)."""

    text: str
    places: int
    ignore: frozenset[str] = frozenset()
    dates: int = 0
    """How many dates the question names: 0, 1 or 2 (a range or more)."""


def question_shape(question: str, gazetteer: Gazetteer | None = None) -> QuestionShape:
    """``question`` compared by shape: each city the gazetteer finds becomes :data:`PLACE_MASK`; numbers, month
    names and the gazetteer's stop words are left out of word overlap. Without a gazetteer, the question as is."""
    if gazetteer is None:
        return QuestionShape(question, 0)
    claims = find_places(question, gazetteer)
    masked = question
    for claim in reversed(claims):
        masked = masked[: claim.start] + PLACE_MASK + masked[claim.end :]
    numbers = {w.lower() for w in _WORD.findall(question) if any(ch.isdigit() for ch in w)}
    ignore = frozenset({*numbers, *MONTH_WORDS, *gazetteer.stop_words})  # the one-letter mask is too short anyway
    # A follow-up example carries its referent in brackets ("Und in Porto? (vorherige Frage: Wetter in Bologna
    # ...)"): a place named there is not one more chain of the plan.
    bracketed = [(m.start(), m.end()) for m in _BRACKETED.finditer(question)]
    planned = {fold(c.text) for c in claims if not any(a <= c.start < b for a, b in bracketed)}
    outside = _BRACKETED.sub(" ", question)
    return QuestionShape(masked, len(planned), ignore, min(_date_count(outside), 2))


@lru_cache(maxsize=1024)
def _date_count(text: str) -> int:
    return len(find_dates(text, _DATE_REFERENCE))  # dateparser: about 2 ms a question, cached for the library


def _rank(pool: list[Example], scores: list[float]) -> list[Example]:
    order = sorted(range(len(pool)), key=lambda i: -scores[i])  # stable: library order breaks ties
    return [pool[i] for i in order]


_vectors: dict[str, Any] = {}
_vectors_lock = threading.Lock()


def _cosines(question: str, pool: list[Example]) -> list[float]:
    model = load_embedder()
    with _vectors_lock:
        missing = sorted({e.question for e in pool} - _vectors.keys())
        if missing:
            for text, vector in zip(missing, embed(missing, model=model, progress=False), strict=True):
                _vectors[text] = vector
        vectors = [_vectors[e.question] for e in pool]
    query = embed([question], model=model, progress=False)[0]
    return [float(query @ vector) for vector in vectors]


def rank_examples(
    question: str,
    tool_names: Collection[str],
    examples: Iterable[Example] | None = None,
    *,
    include_saved: bool = True,
    ranking: Ranking = "hybrid",
    gazetteer: Gazetteer | None = None,
) -> list[Example]:
    """Every example whose tools are all loaded, most similar to ``question`` first.

    The pool is ``examples`` (default: the travel library) plus, with ``include_saved``, the examples saved by
    :func:`add_example`. ``ranking``: ``hybrid`` (embedding cosine + word overlap), ``embedding`` or ``words``.
    An example without tool calls (a ``final`` answer) qualifies for any tool set. With a ``gazetteer``, questions
    are compared by shape (:func:`question_shape`), and when the question names places, the examples that name
    as many come first.
    """
    base = tuple(examples) if examples is not None else library()
    saved = load_user_examples() if include_saved else ()
    loaded = set(tool_names)
    pool = [e for e in (*base, *saved) if e.tools <= loaded]
    if not pool:
        return []
    asked = question_shape(question, gazetteer)
    shapes = [question_shape(e.question, gazetteer) for e in pool]
    compared = [Example(shape.text, e.plan) for shape, e in zip(shapes, pool, strict=True)]
    scores = [_overlap(asked.text, e, asked.ignore) for e in compared]
    if ranking != "words":
        try:
            cosines = _cosines(asked.text, compared)
        except Exception as exc:  # no embedding stack installed or model missing: still give an example
            log.warning("ranking examples by word overlap, the embedding model is unavailable: %s", exc)
        else:
            weight = 1.0 if ranking == "hybrid" else 0.0
            scores = [c + weight * o for c, o in zip(cosines, scores, strict=True)]
    if asked.places:
        # A whole tier above: an example with another number of places teaches the wrong number of chains.
        scores = [
            s + (_SAME_PLACES_TIER if shape.places == asked.places else 0.0)
            for s, shape in zip(scores, shapes, strict=True)
        ]
    if asked.places or asked.dates:
        scores = [
            s + (_SAME_DATES_BONUS if shape.dates == asked.dates else 0.0)
            for s, shape in zip(scores, shapes, strict=True)
        ]
    return _rank(pool, scores)


def examples_for_attempt(ranked: Sequence[Example], k: int, retry: int = 0) -> list[Example]:
    """The ``k`` examples to show on planner call ``retry`` (0: the first call) after earlier replies failed.

    The first call shows the ``k`` best. A retry keeps the best example (the closest question is the one a small
    model most needs) and moves the other slots on to the next-ranked examples, wrapping around, so a retry sees
    other shapes instead of the prompt that produced the rejected reply; with ``k == 1`` the single slot moves on.
    When the pool has no more than ``k`` examples every call shows all of them.
    """
    if k <= 0 or not ranked:
        return []
    if retry <= 0 or len(ranked) <= k:
        return list(ranked[:k])
    if k == 1:
        return [ranked[retry % len(ranked)]]
    rest = ranked[1:]
    start = (retry * (k - 1)) % len(rest)
    return [ranked[0], *(rest[(start + i) % len(rest)] for i in range(k - 1))]


def select_examples(
    question: str,
    tool_names: Collection[str],
    k: int = 1,
    examples: Iterable[Example] | None = None,
    *,
    include_saved: bool = True,
    ranking: Ranking = "hybrid",
    retry: int = 0,
    gazetteer: Gazetteer | None = None,
) -> list[Example]:
    """The ``k`` examples most similar to ``question`` among those whose tools are all loaded
    (see :func:`rank_examples`); on a ``retry`` (how many replies failed before) other ones, see
    :func:`examples_for_attempt`."""
    if k <= 0:
        return []
    ranked = rank_examples(
        question, tool_names, examples, include_saved=include_saved, ranking=ranking, gazetteer=gazetteer
    )
    return examples_for_attempt(ranked, k, retry)

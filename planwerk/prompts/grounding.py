"""The answer check's texts per language: problems in words, the request to rewrite.

The check itself is :mod:`planwerk.checks` (its problem texts are its data, ``planwerk/checks/words/``); this
module says its findings to the model (one regeneration) and to people (events, metadata). The answer planwerk falls
back to when a second model answer fails the check too is :mod:`planwerk.prompts.fallback`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planwerk.checks import Problem
from planwerk.checks.words import problem_texts
from planwerk.core.calls import FailureKind
from planwerk.core.language import Language
from planwerk.prompts.fallback import ENGLISH as FALLBACK_EN
from planwerk.prompts.fallback import GERMAN as FALLBACK_DE


@dataclass(frozen=True)
class GroundingTexts:
    """The answer check's texts in one language."""

    language: Language
    problems: Mapping[str, str]
    """A template per :data:`~planwerk.checks.ProblemKind`; fields: ``claim``, ``tool``, ``failure``,
    ``source``, ``facts``."""
    regenerate: str
    """The request for a second answer; takes ``{problems}`` and ``{question}``. It asks for sentences that answer
    the question: "state only numbers, dates and places that …" made the 0.5B model answer with such a list
    (BENCHMARKS.md §12)."""
    failure_kinds: Mapping[FailureKind, str]


GERMAN = GroundingTexts(
    language="de",
    problems=problem_texts("de"),
    regenerate="""Deine Antwort wurde geprüft und abgelehnt:
{problems}
Beantworte die Frage „{question}“ noch einmal, in ganzen Sätzen. Jede Zahl, jedes Datum und jeder Ort darin muss in
den Tool-Ergebnissen, im Kontext oder in der Frage stehen. Ist ein Tool fehlgeschlagen, sag das und nenne nichts, was
es geliefert hätte. Antworte nur mit der Antwort.""",
    failure_kinds=FALLBACK_DE.failure_kinds,  # one wording of a failure, the fallback's
)
"""The German texts."""

ENGLISH = GroundingTexts(
    language="en",
    problems=problem_texts("en"),
    regenerate="""Your answer was checked and rejected:
{problems}
Answer the question "{question}" again, in whole sentences. Every number, date and place in it must be in the tool
results, the context or the question. If a tool failed, say so and state nothing it would have delivered. Reply with
the answer only.""",
    failure_kinds=FALLBACK_EN.failure_kinds,  # one wording of a failure, the fallback's
)
"""The English texts."""

GROUNDING_TEXTS: dict[str, GroundingTexts] = {"de": GERMAN, "en": ENGLISH}
"""The answer check's texts by language code."""

REPAIR_INSTRUCTIONS: tuple[str, ...] = tuple(
    part.strip()
    for texts in GROUNDING_TEXTS.values()
    for template in (texts.regenerate, *texts.problems.values())
    for part in re.split(r"\{\w+\}", template)
    if part.strip()
)
"""What the request for a second answer says in every language, without its fields: a second answer that repeats
a run of its words is an echo (measured: the 0.5B model wrote the request back, with the values its problems name)."""


def texts_for_answer(language: Language) -> GroundingTexts:
    """The check's texts in ``language`` (German for a language planwerk has no texts in)."""
    return GROUNDING_TEXTS.get(language, GERMAN)


def describe(problem: Problem, language: Language) -> str:
    """A problem in words: "the answer states 22 °C, which no result, retrieved text or the question contains"."""
    texts = texts_for_answer(language)
    failure = texts.failure_kinds.get(problem.failure, "") if problem.failure else ""
    facts = ", ".join(problem.facts)
    return texts.problems[problem.kind].format(
        claim=problem.claim, tool=problem.tool, failure=failure, source=problem.source, facts=facts, place=problem.place
    )


def regenerate_request(problems: Sequence[Problem], language: Language, question: str) -> str:
    """The request for a second answer to ``question``, naming every problem."""
    listed = "\n".join(f"- {describe(p, language)}" for p in problems)
    return texts_for_answer(language).regenerate.format(problems=listed, question=question.strip())

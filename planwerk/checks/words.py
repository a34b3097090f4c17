"""The answer checks' own per-language words, read from ``words/<language>.toml`` (data, not code): how a failure
is said, how an action is claimed, and each problem kind in words. The words every reader of text shares (articles,
months, units) are :mod:`planwerk.text.words`; a domain's words are profile data (:mod:`planwerk.checks.domain`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from planwerk.text.words import LANGUAGES, joined, read_word_list


@dataclass(frozen=True)
class CheckWords:
    """One or more languages' check words, merged (every list compared case-folded)."""

    failure: tuple[str, ...]
    """Phrases that say a call failed."""
    action_done: tuple[str, ...]
    """Completion verbs of a claimed action ("gesendet", "sent")."""
    action_agents: tuple[str, ...]
    """Words that say who did it or that it is done ("ich", "successfully")."""
    action_hedges: tuple[str, ...]
    """Words that hedge or deny an action ("könnte", "not")."""
    absence: tuple[str, ...]
    """Phrases that say there is none of something ("es gibt keine", "there are no")."""
    contrast: tuple[str, ...]
    """Conjunctions that set one clause against another ("aber", "but"): what a clause says of one tool is not said
    of a tool the clause before it names."""
    frame_phrases: tuple[str, ...] = ()
    """Words that name the answer itself ("Antwort", "the answer"): a lead-in line ending in a colon that holds one
    frames the answer (:func:`planwerk.checks.frame.without_frame`)."""
    frame_openings: tuple[str, ...] = ()
    """How a sentence about the answer itself begins ("diese Antwort", "this answer")."""


@cache
def check_words(languages: tuple[str, ...] = LANGUAGES) -> CheckWords:
    """The check words of ``languages`` merged (the checks read answers in any of them)."""
    data = [read_word_list("planwerk.checks", language) for language in languages]
    return CheckWords(
        failure=joined(data, "failure"),
        action_done=joined(data, "action_done"),
        action_agents=joined(data, "action_agents"),
        action_hedges=joined(data, "action_hedges"),
        absence=joined(data, "absence"),
        contrast=joined(data, "contrast"),
        frame_phrases=joined(data, "frame_phrases"),
        frame_openings=joined(data, "frame_openings"),
    )


@cache
def problem_texts(language: str) -> dict[str, str]:
    """The answer checks' problems in words, one template per kind (fields ``claim``, ``tool``, ``failure``,
    ``source``, ``facts``, ``place``), in ``language`` (English for a language there is no file for)."""
    return dict(read_word_list("planwerk.checks", language if language in LANGUAGES else "en")["problems"])

"""Claimed actions: whether an answer says that something was done (sent, paid, updated, written, scheduled).

Issue 29: with no call at all, answers said "I updated my account information with the new address …" and passed
the answer check, which reads numbers, dates and places. An answer that claims an action must be backed by a
successful call of a tool that acts (:attr:`planwerk.tools.base.ToolSpec.acts`). What counts as claiming is
phrasing, not domain: a completion verb (a per-language lexicon, data in :mod:`planwerk.prompts.grounding`) in a
sentence that names who did it (first person) or says it is done ("has been", "successfully"), and that does not
hedge or deny it ("can", "would", "not", a question). Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"[\w']+", re.UNICODE)


@dataclass(frozen=True)
class ActionLexicon:
    """How one language says an action was completed. Every entry is a whole word or a run of whole words,
    compared case-folded."""

    done: tuple[str, ...]
    """Completion verbs ("sent", "paid", "updated", "überwiesen")."""
    agents: tuple[str, ...]
    """Words that make a sentence a report of one's own doing or of a finished state ("I", "we", "has been",
    "successfully")."""
    hedges: tuple[str, ...]
    """Words that make it an offer, a plan, a condition or a denial ("can", "would", "not", "if")."""


def fold(text: str) -> str:
    """``text`` case-folded, accents kept: folding them would make the hedge "würde" the report "wurde"."""
    return unicodedata.normalize("NFC", text.casefold())


def _has(words: list[str], phrase: str) -> bool:
    wanted = [fold(w) for w in _WORD.findall(phrase)]
    n = len(wanted)
    return n > 0 and any(words[i : i + n] == wanted for i in range(len(words) - n + 1))


def claimed_action(answer: str, lexicons: Iterable[ActionLexicon]) -> str | None:
    """The first sentence of ``answer`` that claims a completed action, in any of ``lexicons``' languages, or
    ``None``. A question, or a sentence with a hedge or a denial, claims nothing."""
    lexicons = tuple(lexicons)
    for match in _SENTENCE.finditer(answer):
        sentence = match.group().strip()
        if not sentence or sentence.endswith("?"):
            continue
        words = [fold(w) for w in _WORD.findall(sentence.replace("’", "'"))]
        for lexicon in lexicons:
            if any(_has(words, hedge) for hedge in lexicon.hedges):
                continue
            if any(_has(words, verb) for verb in lexicon.done) and any(_has(words, a) for a in lexicon.agents):
                return sentence
    return None

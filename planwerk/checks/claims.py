"""Claimed actions: whether an answer says that something was done (sent, paid, updated, written, scheduled).

Issue 29: with no call at all, "I updated my account information with the new address …" passed the answer check.
What counts as claiming is phrasing, not domain: a completion verb in a sentence that names who did it (first person)
or says it is done ("has been", "successfully"), and that does not hedge or deny it ("can", "would", "not", a
question). The words are per-language data (:mod:`planwerk.checks.words`). Pure: no I/O.

When a call of a tool that acts did not run and no such call succeeded, an answer must also say so
(:func:`says_not_done`): the 1.5B model, after the recipient of a payment could not be read unambiguously, answered
"The bill for December 2026 is scheduled to be paid", a claim in a form no list of agents covers.
"""

from __future__ import annotations

import re

from planwerk.checks.words import CheckWords, check_words
from planwerk.text.words import fold_case

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_WORD = re.compile(r"[\w']+", re.UNICODE)


def _has(said: list[str], phrase: str) -> bool:
    wanted = _WORD.findall(phrase)
    n = len(wanted)
    return n > 0 and any(said[i : i + n] == wanted for i in range(len(said) - n + 1))


def claimed_action(answer: str, lexicon: CheckWords | None = None) -> str | None:
    """The first sentence of ``answer`` that claims a completed action, or ``None``. A question, or a sentence with
    a hedge or a denial, claims nothing."""
    lexicon = lexicon or check_words()
    for match in _SENTENCE.finditer(answer):
        sentence = match.group().strip()
        if not sentence or sentence.endswith("?"):
            continue
        said = [fold_case(w) for w in _WORD.findall(sentence.replace("’", "'"))]
        if any(_has(said, hedge) for hedge in lexicon.action_hedges):
            continue
        if any(_has(said, verb) for verb in lexicon.action_done) and any(_has(said, a) for a in lexicon.action_agents):
            return sentence
    return None


def says_not_done(answer: str, lexicon: CheckWords | None = None) -> bool:
    """Whether a sentence of ``answer`` says that something failed or was not done (a failure phrase, a hedge or a
    denial): what an answer must say when a call of a tool that acts did not run."""
    lexicon = lexicon or check_words()
    for match in _SENTENCE.finditer(answer):
        said = [fold_case(w) for w in _WORD.findall(match.group().replace("’", "'"))]
        if any(_has(said, phrase) for phrase in (*lexicon.failure, *lexicon.action_hedges)):
            return True
    return False

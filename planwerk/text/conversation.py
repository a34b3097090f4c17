"""Follow-ups and their referent: which earlier question a short follow-up ("Und morgen?", "And in Paris?")
continues. Its openings are per-language data (:mod:`planwerk.text.words`). Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from planwerk.text.words import words

MAX_FOLLOW_UP_WORDS = 8
"""A follow-up that opens like a continuation has at most this many words."""
MAX_BARE_FOLLOW_UP_WORDS = 3
"""A question this short with no opening ("Morgen?", "Und Sonntag?") is a follow-up too; a longer one that names
no place ("Was frisst das Razepato?") is a question of its own."""
CONTINUATION = re.compile(
    r"^\s*(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words().continuations) + r")\b", re.I
)
"""Openings of a follow-up that continues the previous question ("Und in Paris?", "What about tomorrow?")."""


def is_follow_up(question: str) -> bool:
    """A short question that opens like a continuation ("Und in Paris?") or is only a few words ("Morgen?")."""
    count = len(question.split())
    return count <= MAX_FOLLOW_UP_WORDS and (bool(CONTINUATION.match(question)) or count <= MAX_BARE_FOLLOW_UP_WORDS)


def referent_question(question: str, earlier: Sequence[str]) -> str | None:
    """The earlier question a follow-up continues: the latest one that is not itself a follow-up; ``None`` when
    ``question`` is no follow-up or nothing came before."""
    if not earlier or not is_follow_up(question):
        return None
    return next((text.strip() for text in reversed(earlier) if text.strip() and not is_follow_up(text)), None)

"""An answer without its frame: what a small model writes around an answer about the answer itself, a lead-in
("Die Antwort auf Deutsch lautet:") and a verdict on it ("Diese Antwort ist korrekt und vollständig."). The frame
says nothing about the question; a reader sees a form letter. It is taken out in code, as a loop's repeats are
(:func:`planwerk.checks.rules.without_repeats`), and what is left is checked. Measured on the domain answers set
with the 0.5B model (BENCHMARKS.md §12, session 14): "329\\n\\nDiese Antwort ist korrekt und gut lesbar." was kept as
written. The words are data: ``frame_nouns`` and ``frame_openings`` in ``words/<language>.toml``. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from planwerk.checks.words import check_words
from planwerk.text.places import fold

FRAME_LEAD_WORDS = 10
"""A lead-in of at most this many words before its colon (a quoted question in it not counted) frames the answer;
a longer one says something of its own."""

_LEAD_IN = re.compile(r"^(?P<lead>[^:\n]{1,200}?):(?:\s+|$)")
"""A line's text up to its first colon followed by a space or the line's end (not a clock time's colon)."""
_QUOTED_PART = re.compile(r"[\"„“”«»][^\"„“”«»]*[\"„“”«»]")
_ONE_QUOTATION = re.compile(r"^[\"„“”«»]([^\"„“”«»]+)[\"„“”«»]$")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?])\s+)")


def _is_lead_in(lead: str, nouns: Sequence[str]) -> bool:
    """Whether ``lead`` (a line's text before its colon) names the answer in few words."""
    words = re.findall(r"[\w']+", fold(_QUOTED_PART.sub(" ", lead)))
    return 0 < len(words) <= FRAME_LEAD_WORDS and any(noun in words for noun in nouns)


def _without_verdicts(line: str, openings: Sequence[str]) -> str:
    """``line`` without the sentences that begin by pointing at the answer ("Diese Antwort ist korrekt."): from
    such a sentence's start to the line's end (a verdict closes what it judges)."""
    lowered = line.lower()  # as long as the line, unlike a fold: its positions are the line's
    for match in _SENTENCE_START.finditer(lowered):
        if any(lowered.startswith(opening, match.end()) for opening in openings):
            return line[: match.start()].rstrip()
    return line


def without_frame(answer: str) -> str | None:
    """``answer`` without its frame, or ``None`` when it has none (or nothing else): a line's lead-in that names
    the answer and ends in a colon goes (what follows it on the line stays), and so does every sentence from one
    that begins by pointing at the answer to its line's end; a line the lead-in introduced that is one quotation
    loses its quotation marks (they were the frame's), and a line said twice is said once."""
    words = check_words()
    lines: list[str] = []
    framed = unquote = False
    for line in answer.strip().splitlines():
        text = line.strip()
        if (lead := _LEAD_IN.match(text)) is not None and _is_lead_in(lead.group("lead"), words.frame_nouns):
            text, framed, unquote = text[lead.end() :].strip(), True, True
        judged = _without_verdicts(text, words.frame_openings)
        framed = framed or judged != text
        if unquote and (quoted := _ONE_QUOTATION.match(judged)) is not None:
            judged = quoted.group(1).strip()
        if judged and fold(judged) in {fold(kept) for kept in lines}:
            continue  # said before the frame and again after it
        lines.append(judged)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return text if framed and text and text != answer.strip() else None

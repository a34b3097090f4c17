"""An answer without its frame: what a small model writes around an answer about the answer itself, a lead-in
("Die Antwort auf Deutsch lautet:") and a verdict on it ("Diese Antwort ist korrekt und vollständig."). The frame
says nothing about the question; a reader sees a form letter. It is taken out in code, as a loop's repeats are
(:func:`planwerk.checks.rules.without_repeats`): from an answer that passed the check with it, where what is left
passes too. Measured on the domain answers set with the 0.5B model (BENCHMARKS.md §12, session 14): "329\n\nDiese
Antwort ist korrekt und gut lesbar." was kept as written. The words are data: ``frame_phrases`` and
``frame_openings`` in ``words/<language>.toml``. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from planwerk.checks.words import CheckWords, check_words
from planwerk.text.places import fold

FRAME_LEAD_WORDS = 10
"""A lead-in of at most this many words before its colon (a quoted question in it not counted) frames the answer;
a longer one says something of its own."""

_QUOTES = '"„“”«»'
_LEAD_IN = re.compile(rf"^(?P<opening>[{_QUOTES}]?)(?P<lead>[^:\n]{{1,200}}?):(?:\s+|$)")
"""A line's text up to its first colon followed by a space or the line's end (not a clock time's colon), after the
opening quotation mark of a quotation the line may begin."""
_QUOTED_PART = re.compile(rf"[{_QUOTES}][^{_QUOTES}]*[{_QUOTES}]")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?])\s+)")


def _is_lead_in(lead: str, words: CheckWords) -> bool:
    """Whether ``lead`` (a line's text before its colon) names the answer in few words, and neither hedges nor
    negates ("I cannot answer this question: …" is a refusal, not a frame)."""
    found = re.findall(r"[\w']+", fold(_QUOTED_PART.sub(" ", lead)))
    joined = f" {' '.join(found)} "
    return (
        0 < len(found) <= FRAME_LEAD_WORDS
        and any(f" {phrase} " in joined for phrase in words.frame_phrases)
        and not any(f" {hedge} " in joined for hedge in words.action_hedges)
    )


def _without_verdicts(line: str, openings: Sequence[str]) -> str:
    """``line`` without the sentences that begin by pointing at the answer ("Diese Antwort ist korrekt."): from
    such a sentence's start to the line's end (a verdict closes what it judges)."""
    lowered = line.lower()  # as long as the line, unlike a fold: its positions are the line's
    for match in _SENTENCE_START.finditer(lowered):
        if any(lowered.startswith(opening, match.end()) for opening in openings):
            return line[: match.start()].rstrip()
    return line


def without_frame(answer: str) -> str | None:
    """``answer`` without its frame, or ``None`` when it has none (or nothing else): a line's lead-ins that name
    the answer and end in a colon go (what follows them on the line stays), and so does every sentence from one
    that begins by pointing at the answer to its line's end, and a line said twice is said once. Quotation marks
    stay (the frame's lead-in may have opened them)."""
    words = check_words()
    lines: list[str] = []
    said: set[str] = set()
    framed = False
    for line in answer.strip().splitlines():
        text = line.strip()
        led = False
        while (lead := _LEAD_IN.match(text)) is not None and _is_lead_in(lead.group("lead"), words):
            text, led = lead.group("opening") + text[lead.end() :].strip(), True
        judged = _without_verdicts(text, words.frame_openings)
        framed = framed or led or judged != text
        folded = fold(judged)
        if judged and folded in said:
            continue  # said before the frame and again after it
        said.add(folded)
        lines.append(judged)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return text if framed and text and text != answer.strip() else None

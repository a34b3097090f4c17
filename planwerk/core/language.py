"""The language of a question, from a count of stop words: cheap, deterministic, no model (pure, no I/O).

Only the languages planwerk has texts for (German, English). The word lists are small on purpose and hold no
word both languages use ("in", "am", "was", "also", "will", "die", "man"), so one word decides between them; a
question with no stop word at all ("Barcelona?") or as many of each keeps the caller's default (the profile's
language).
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["de", "en"]
"""Languages planwerk's prompts and fixed texts exist in."""


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``."""
    return frozenset(text.split())


GERMAN_WORDS = _words(
    """
    der das und ist sind wie wo wann wer wem wen warum wieso welche welcher welches welchen wird werden wurde
    ich du er wir ihr sie mir mich dir dich uns euch mein meine dein deine nicht kein keine ein eine einen einem
    einer eines mit für von vom zu zum zur auf im bei beim nach aus über unter zwischen gegen ohne durch bis
    dem den des es gibt kann können könnte möchte muss soll sollte hat habe haben bin bist noch schon sehr nur
    auch oder aber wenn dann dort hier heute morgen übermorgen gestern bitte viel viele wieviel gut besten beste
    um nächste nächsten woche wochenende ist's gibt's
    """
)
"""German function words (and the date words a travel question starts with) that English does not use."""

ENGLISH_WORDS = _words(
    """
    the a of and is are be been were what how where when which who whom whose why would can could should shall
    may might must do does did i you he she it we they me my your our their its this that these those there here
    not no to for from with on at by into onto about than then if or but as any some each every many much has
    have had today tomorrow yesterday please next week weekend best good find get give let us
    """
)
"""English function words (and the date words a travel question starts with) that German does not use."""

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)


def detect_language(text: str, default: Language) -> Language:
    """``"de"`` or ``"en"``: whichever language's stop words ``text`` holds more of; ``default`` on a tie."""
    words = [word.lower() for word in _WORD.findall(text)]
    german = sum(word in GERMAN_WORDS for word in words)
    english = sum(word in ENGLISH_WORDS for word in words)
    if german > english:
        return "de"
    if english > german:
        return "en"
    return default

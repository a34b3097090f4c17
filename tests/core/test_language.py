"""The question's language from its stop words: the answer is asked for in it."""

from __future__ import annotations

import pytest

from planwerk.core.language import ENGLISH_WORDS, GERMAN_WORDS, detect_language


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", "de"),
        ("Wo kann man das Razepato am besten beobachten?", "de"),
        ("Welche Parks gibt es in Barcelona?", "de"),
        ("Und morgen?", "de"),
        ("Und in Paris?", "de"),
        ("Was ist (12 + 30) * 3?", "de"),
        ("What will the weather be like in Barcelona tomorrow?", "en"),
        ("Where can I watch the Razepato?", "en"),
        ("And tomorrow?", "en"),
        ("Capital of Australia?", "en"),
        ("If a train travels 120 km in 2 hours, what is its speed?", "en"),
        ("Compare the weather in Rome and Madrid next week", "en"),
    ],
)
def test_detects_german_and_english(question: str, expected: str) -> None:
    # Whatever the default: the question's own words decide.
    assert detect_language(question, default="de") == expected
    assert detect_language(question, default="en") == expected


@pytest.mark.parametrize("question", ["Barcelona", "Barcelona?", "12 + 30", "", "Madrid, Lisboa"])
def test_no_stop_word_keeps_the_default(question: str) -> None:
    assert detect_language(question, default="de") == "de"
    assert detect_language(question, default="en") == "en"


def test_word_lists_share_no_word() -> None:
    # A word of both languages ("in", "am", "was", "will", "die") would count for both and decide nothing.
    assert GERMAN_WORDS.isdisjoint(ENGLISH_WORDS)
    assert not {"in", "am", "was", "will", "die", "man", "also"} & (GERMAN_WORDS | ENGLISH_WORDS)

"""What a small model writes around an answer about the answer itself is taken out; an answer without such a frame
is left as it is. The framed answers are the 0.5B model's, recorded on the domain answers set."""

from __future__ import annotations

import pytest

from planwerk.checks.frame import without_frame


@pytest.mark.parametrize(
    ("framed", "answer"),
    [
        ("329\n\nDiese Antwort ist korrekt und gut lesbar.", "329"),
        ("Die Antwort auf die Frage ist:\n\n3. Dezember 2026, 00:00 Uhr", "3. Dezember 2026, 00:00 Uhr"),
        ("294\n\nDie Antwort auf Deutsch lautet:\n\n294", "294"),
        (
            'Die Antwort auf Deutsch lautet:\n\n"Die Zeit in New York ist 21:00 Uhr, wenn es in Berlin 15:00 Uhr ist."'
            "\n\nDiese Antwort ist korrekt und vollständig.",
            # the quotation marks stay: they may be the model's own (the check node judged the answer with them)
            '"Die Zeit in New York ist 21:00 Uhr, wenn es in Berlin 15:00 Uhr ist."',
        ),
        ("Die Antwort lautet: 2. Dezember 2026, 21:00 Uhr", "2. Dezember 2026, 21:00 Uhr"),
        ("Here is the answer:\n- notes.md\n- report.txt\nThis answer lists every file.", "- notes.md\n- report.txt"),
        # The lead-in twice, once inside the quotation the first one opened.
        (
            'Die Antwort auf dieser Frage ist:\n\n"Die Antwort auf dieser Frage ist: Donnerstag, 2026-11-26."',
            '"Donnerstag, 2026-11-26."',
        ),
    ],
)
def test_the_frame_around_an_answer_is_taken_out(framed: str, answer: str) -> None:
    assert without_frame(framed) == answer


@pytest.mark.parametrize(
    "answer",
    [
        "The answer is 42.",  # the answer in a sentence: no frame
        'Hallo Welt\n\nDie Antwort ist "Hallo Welt".',  # says what the answer is, not that it is right
        "Barcelona: 12 °C, Rom: 14 °C",  # a colon after a name, not after a lead-in about the answer
        "Es ist 16:00 Uhr: Zeit für Tee.",
        "Die Antwort ist 16:00 Uhr.",  # a clock time's colon ends no lead-in
        "Die Antwort lautet:",  # nothing but the frame: left for the check to judge
        "In Tokio ist es dann 00:00 Uhr am 8. Dezember 2026.",
        # A refusal before its colon is no lead-in: "answer" is its verb, or it negates ("keine Antwort").
        "I cannot answer this question: none of the available tools provides reliable data for it.",
        "Ich kann keine Antwort geben: der Dienst ist nicht erreichbar.",
    ],
)
def test_an_answer_without_a_frame_is_left_as_it_is(answer: str) -> None:
    assert without_frame(answer) is None


def test_a_long_lead_in_says_something_of_its_own() -> None:
    lead = "Die Antwort der Stadtverwaltung auf den Antrag vom Mai, die heute per Post kam, lautet wörtlich:"
    assert without_frame(f"{lead}\n\nGenehmigt.") is None

"""The CLI's readable output shows what servers ask (sampling requests and answers, elicitation interrupts) and what
the plan check changed in code."""

from __future__ import annotations

from io import StringIO
from typing import Any

from rich.console import Console

from planwerk.cli import EventPrinter


def printed(*events: dict[str, Any]) -> str:
    console = Console(file=StringIO(), width=200, color_system=None)
    printer = EventPrinter(console)
    for event in events:
        printer(event)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_sampling_shows_the_servers_prompt_and_the_models_answer_or_why_not() -> None:
    base = {"id": "s1", "tool": "sampleLLM", "server": "everything"}
    text = printed(
        {"event": "sampling_request", **base, "prompt": "Summarise: MCP", "max_tokens": 64},
        {"event": "sampling_result", **base, "text": "MCP connects tools.", "stop_reason": "endTurn"},
        {"event": "sampling_result", **base, "error": "the run's limit of 3 sampling requests is used up"},
    )
    assert "everything fragt das Modell: Summarise: MCP" in text
    assert '"MCP connects tools."' in text and "limit of 3 sampling requests is used up" in text


def test_an_elicitation_names_the_server_the_form_the_rejected_answer_and_how_to_answer() -> None:
    text = printed(
        {
            "event": "interrupt",
            "kind": "elicitation",
            "interrupt_id": "i1",
            "server": "everything",
            "question": "Please provide your contact details",
            "form": "name: string, email: string (email)",
            "error": "email: 'ada' is not an email address",
        }
    )
    assert "Rückfrage von everything" in text and "Please provide your contact details" in text
    assert "name: string, email: string (email)" in text and "Nicht angenommen: email: 'ada'" in text
    assert "decline | cancel" in text


def test_a_plan_changed_in_code_says_what_changed() -> None:
    step = {"description": "Koordinaten", "tools": [{"id": "geo_barcelona", "name": "geocode", "arguments": {}}]}
    plan = {"steps": [step], "final": None}
    text = printed(
        {"event": "plan", "plan": plan, "attempt": 1, "reordered": False, "completed": ["Rom"],
         "substituted": [{"old": "Palma", "new": "Barcelona", "calls": ["geo_barcelona"]}],
         "named": [{"call_id": "geo_b", "old": "Barcelonas", "new": "Barcelona"}], "swapped": ["conv"]},
        {"event": "plan", "plan": plan, "attempt": 1, "reordered": False, "completed": [], "named": []},
    )  # fmt: skip
    assert text.count("im Code korrigiert") == 1
    assert "ergänzt für Rom; Palma → Barcelona; Barcelonas → Barcelona (geo_b); Orte getauscht in conv" in text


def test_a_rejected_answer_shows_a_short_line_in_the_questions_language_never_the_repair_text() -> None:
    repair = "Die Antwort nennt 22 °C, das in keinem Tool-Ergebnis, keinem Kontext und nicht in der Frage steht."
    rejected = {"event": "answer_rejected", "answer": "Heute 22 °C.", "problems": [repair], "attempt": 1}
    english = printed(
        {"event": "start", "question": "What is the weather like in Barcelona today?"},
        {**rejected, "next": "regenerate"},
        {**rejected, "attempt": 2, "next": "fallback"},
    )
    assert "Revising the answer" in english and "Writing the answer from the results" in english
    german = printed(
        {"event": "start", "question": "Wie wird das Wetter heute in Barcelona?"}, {**rejected, "next": "regenerate"}
    )
    assert "Die Antwort wird überarbeitet" in german
    for text in (english, german):
        assert "verworfen" not in text and "22 °C" not in text and "Tool-Ergebnis" not in text

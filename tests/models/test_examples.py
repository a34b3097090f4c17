"""The few-shot library: tool filter, embedding ranking, saved examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planwerk.prompts.examples import (
    Example,
    add_example,
    library,
    load_user_examples,
    select_examples,
    user_examples_path,
)

TRAVEL_TOOLS = {"geocode", "get_weather", "get_parks", "get_spots", "rank_spots"}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path))
    return tmp_path


def test_packaged_library_has_the_rome_example():
    rome = [e for e in library("travel") if "Rom" in e.question]
    assert rome and rome[0].tools == {"geocode", "get_weather"}
    refs = json.dumps(rome[0].plan)
    assert '{"$ref": "geo_rom.lat"}' in refs


def test_only_examples_with_loaded_tools_are_chosen():
    chosen = select_examples("Welche Parks gibt es in Palma?", {"geocode", "get_weather"}, k=10, ranking="words")
    assert chosen and all(e.tools <= {"geocode", "get_weather"} for e in chosen)
    assert not any("Parks" in e.question for e in chosen)
    assert all(not e.tools for e in select_examples("x", set(), k=10, ranking="words"))  # final-only examples


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", "Wetter in Rom"),
        ("How is the weather in Paris from 2026-05-01 to 2026-05-02?", "weather be like in Lisbon"),
        ("Gibt es Grünanlagen in der Nähe von Valencia?", "Parks"),
    ],
)
def test_embedding_ranking_picks_the_closest_question(question, expected):
    (best,) = select_examples(question, TRAVEL_TOOLS, k=1)
    assert expected in best.question


def test_saved_examples_persist_dedupe_and_join_the_pool(home):
    plan = {
        "steps": [{"description": "d", "tools": [{"id": "p", "name": "get_parks", "arguments": {"lat": 1}}]}],
        "final": None,
    }
    add_example("  Parks   in Graz? ", plan)
    add_example("Parks in Graz?", plan)
    assert user_examples_path() == home / "examples.jsonl"
    assert load_user_examples() == (Example("Parks in Graz?", plan),)
    assert Example("Parks in Graz?", plan) in select_examples("Parks in Graz?", TRAVEL_TOOLS, k=20, ranking="words")
    assert Example("Parks in Graz?", plan) not in select_examples(
        "Parks in Graz?", TRAVEL_TOOLS, k=20, ranking="words", include_saved=False
    )


def test_broken_saved_lines_are_skipped(home, caplog):
    (home / "examples.jsonl").write_text('{"question": "a", "plan": {"steps": []}}\nnot json\n{"question": "b"}\n')
    assert [e.question for e in load_user_examples()] == ["a"]
    assert "line 2" in caplog.text and "line 3" in caplog.text


@pytest.mark.parametrize("plan", [{"final": "x"}, {"steps": "no"}, {"steps": [{"tools": [{"name": "geocode"}]}]}])
def test_add_example_rejects_malformed_plans(plan):
    with pytest.raises(ValueError, match="example"):
        add_example("q", plan)

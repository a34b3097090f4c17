"""The few-shot libraries: tool filter, embedding ranking, saved examples, the packaged travel and math libraries
(checked against the real tools), and the examples a retry sees."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from benchmarks.model import travel_specs
from benchmarks.nestful import load_samples
from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.core.tools import ToolSpec
from planwerk.profiles import get_profile
from planwerk.prompts.examples import (
    PLACE_MASK,
    Example,
    add_example,
    examples_for_attempt,
    library,
    load_user_examples,
    question_shape,
    rank_examples,
    select_examples,
    user_examples_path,
)
from planwerk.prompts.travel import (
    PERSONA,
    REFUSAL_OUT_OF_SCOPE,
    REFUSAL_OUT_OF_SCOPE_EN,
    REFUSAL_UNRELIABLE,
    REFUSAL_UNRELIABLE_EN,
)
from planwerk.text.gazetteer import default_gazetteer
from planwerk.text.places import Gazetteer

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


# --- the packaged libraries -------------------------------------------------------------------------------------


def _raw(name: str) -> list[dict[str, Any]]:
    return json.loads(resources.files("planwerk.prompts").joinpath("examples", f"{name}.json").read_text("utf-8"))


@cache
def _math_specs() -> dict[str, ToolSpec]:
    """The bundled math server's tool specs, read from the server object (no process)."""
    from planwerk.tools.servers.math import build_server

    tools = asyncio.run(build_server().list_tools())
    return {t.name: ToolSpec(t.name, t.description or "", t.inputSchema, t.outputSchema, "math") for t in tools}


def _calls(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [call for step in plan["steps"] for call in step["tools"]]


def test_travel_library_covers_every_shape_in_german_and_english() -> None:
    entries = _raw("travel")
    kinds = {entry["kind"] for entry in entries}
    assert {"one_city", "two_cities", "date_range", "spots", "parks", "context", "refusal", "follow_up"} <= kinds
    languages = [entry["language"] for entry in entries]
    assert languages.count("de") > languages.count("en") >= 5
    assert {entry["kind"] for entry in entries if entry["language"] == "en"} >= {"refusal", "context", "follow_up"}
    assert len({entry["question"] for entry in entries}) == len(entries)


def test_every_travel_example_passes_the_plan_check_against_the_real_tools() -> None:
    specs = travel_specs() | _math_specs()  # the travel profile may use the math tools too (budgets)
    allowed = get_profile("travel").allowed_tools
    for entry in _raw("travel"):
        problems = check_plan(Plan.model_validate(entry["plan"]), specs, allowed_tools=allowed)
        assert problems == [], (entry["question"], problems)


def test_travel_shapes_say_what_they_teach() -> None:
    entries = _raw("travel")
    for entry in entries:
        plan, calls = entry["plan"], _calls(entry["plan"])
        if entry["kind"] in ("context", "refusal"):
            assert plan["steps"] == [] and not calls
        if entry["kind"] == "context":
            assert plan["final"] is None  # answered afterwards from the retrieved context, never made up here
        elif entry["kind"] == "refusal":
            # the persona's refusal sentences, word for word (the persona tells the model to use exactly these)
            refusals = (REFUSAL_OUT_OF_SCOPE, REFUSAL_UNRELIABLE, REFUSAL_OUT_OF_SCOPE_EN, REFUSAL_UNRELIABLE_EN)
            assert plan["final"] in refusals and plan["final"] in PERSONA
        else:
            assert plan["final"] is None and calls
        if entry["kind"] == "two_cities":
            assert [c["name"] for c in calls].count("get_weather") == 2
            assert len(plan["steps"][0]["tools"]) == 2  # both cities geocoded in parallel
        if entry["kind"] == "follow_up":
            # one city, named in the question or in the previous one it refers to; no third city is added
            destinations = [c["arguments"]["destination"] for c in calls if c["name"] == "geocode"]
            assert len(destinations) == 1 and destinations[0] in entry["question"]
    razepato = [e for e in entries if e["kind"] == "context" and "Razepato" in e["question"]]
    assert len(razepato) >= 2


def test_math_library_is_dev_only_chains_of_three_to_six_calls_and_capped() -> None:
    from benchmarks import build_examples as build

    dev = {sample.sample_id: sample for sample in load_samples("dev")}
    entries = _raw("math")
    assert len(entries) >= 50
    for entry in entries:
        calls = _calls(entry["plan"])
        assert build.MIN_CALLS <= len(calls) <= build.MAX_CALLS
        assert len(entry["question"]) <= build.MAX_QUESTION_CHARS
        assert len(build.compact(entry["plan"])) <= build.MAX_PLAN_CHARS
        sample = dev[entry["source"].removeprefix(build.SOURCE_PREFIX)]
        assert entry["question"] == sample.question.strip()
        assert check_plan(Plan.model_validate(entry["plan"]), _math_specs()) == []
    assert any(len(entry["plan"]["steps"]) < len(_calls(entry["plan"])) for entry in entries)  # parallel steps too


def test_no_test_split_question_or_gold_sequence_is_in_the_math_library() -> None:
    def words(text: str) -> str:
        return " ".join(text.lower().split())

    def sequence(calls: list[dict[str, Any]]) -> str:
        return json.dumps(sorted(json.dumps([c["name"], c["arguments"]], sort_keys=True) for c in calls))

    from benchmarks.build_examples import example_plan

    test = load_samples("test")
    test_questions = {words(sample.question) for sample in test}
    test_sequences = {sequence(_calls(example_plan(sample.calls))) for sample in test}
    test_ids = {sample.sample_id for sample in test}
    for entry in _raw("math"):
        assert words(entry["question"]) not in test_questions
        assert sequence(_calls(entry["plan"])) not in test_sequences
        assert entry["source"].removeprefix("nestful-dev:") not in test_ids


def test_the_committed_math_library_is_what_the_builder_writes() -> None:
    from benchmarks.build_examples import default_target, library_json, math_examples
    from planwerk.tools.servers.math import TOOLS

    built = library_json(math_examples(load_samples("dev"), frozenset(tool.name for tool in TOOLS)))
    assert default_target().read_text(encoding="utf-8") == built, "run python -m benchmarks.build_examples"


def test_builder_rejects_what_does_not_teach_the_shape() -> None:
    from benchmarks.build_examples import SOURCE_PREFIX, why_not

    names = frozenset(_math_specs())
    dev = load_samples("dev")
    in_library = {entry["source"].removeprefix(SOURCE_PREFIX) for entry in _raw("math")}
    sample = next(s for s in dev if s.sample_id in in_library)
    assert why_not(sample, names) is None
    two = next(s for s in dev if len(s.calls) == 2)
    assert str(why_not(two, names)).startswith("not 3 to 6 calls")
    wrong = dataclasses.replace(sample, gold_answer=-12345.678, gold_kind="json")
    assert str(why_not(wrong, names)).startswith("gold sequence gives another answer")
    assert str(why_not(sample, frozenset({"log"}))).startswith("tools the math server lacks")


def test_a_math_question_gets_a_similar_multi_call_dev_example() -> None:
    question = (
        "A train 150 meters long is running at 54 km/hr. How long does it take to cross a bridge 300 meters long?"
    )
    chosen = select_examples(question, _math_specs(), k=2, examples=library("math"), include_saved=False)
    assert len(chosen) == 2 and all(len(_calls(e.plan)) >= 3 for e in chosen)
    assert any("train" in e.question.lower() for e in chosen)


# --- examples on retries ----------------------------------------------------------------------------------------


def _examples(n: int) -> list[Example]:
    return [Example(f"q{i}", {"steps": [], "final": None}) for i in range(n)]


def test_first_call_shows_the_best_k_and_retries_keep_the_best_and_move_on() -> None:
    ranked = _examples(6)
    q = [e.question for e in examples_for_attempt(ranked, 2, 0)]
    assert q == ["q0", "q1"]
    assert [e.question for e in examples_for_attempt(ranked, 2, 1)] == ["q0", "q2"]
    assert [e.question for e in examples_for_attempt(ranked, 2, 2)] == ["q0", "q3"]
    assert [e.question for e in examples_for_attempt(ranked, 3, 1)] == ["q0", "q3", "q4"]
    assert [e.question for e in examples_for_attempt(ranked, 2, 5)] == ["q0", "q1"]  # wrapped around
    assert [e.question for e in examples_for_attempt(ranked, 1, 1)] == ["q1"]  # one slot: it moves on
    assert examples_for_attempt(ranked[:2], 2, 3) == ranked[:2]  # nothing else to show
    assert examples_for_attempt(ranked, 0, 1) == [] and examples_for_attempt([], 2, 1) == []


def test_select_examples_on_a_retry_differs_but_keeps_the_closest() -> None:
    question = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
    first = select_examples(question, TRAVEL_TOOLS, k=2, include_saved=False, ranking="words")
    retry = select_examples(question, TRAVEL_TOOLS, k=2, include_saved=False, ranking="words", retry=1)
    assert first[0] == retry[0] and first[1] != retry[1]


SMALL_GAZETTEER = Gazetteer.from_cities(
    [
        {"geonameid": 1, "name": "Barcelona", "population": 1_600_000},
        {"geonameid": 2, "name": "Porto", "population": 230_000},
        {"geonameid": 3, "name": "Bologna", "population": 390_000},
    ],
    stop_words=["und", "in", "am", "the"],
)


def test_question_shape_masks_places_and_counts_those_outside_brackets() -> None:
    shape = question_shape("Und in Porto? (vorherige Frage: Wetter in Bologna am 14.05.2026)", SMALL_GAZETTEER)
    assert shape.text == f"Und in {PLACE_MASK}? (vorherige Frage: Wetter in {PLACE_MASK} am 14.05.2026)"
    assert shape.places == 1  # Bologna is the referent in brackets, not a second chain
    two = question_shape("Barcelona oder Porto, und nochmal Barcelona am 3. Juni 2026?", SMALL_GAZETTEER)
    assert two.places == 2  # distinct places
    assert {"2026", "juni", "und"} <= two.ignore and "nochmal" not in two.ignore
    assert two.dates == 1 and shape.dates == 0  # the follow-up's date is in brackets too
    assert question_shape("Wetter in Barcelona?").text == "Wetter in Barcelona?"  # no gazetteer: as is


@pytest.mark.parametrize(
    ("question", "tools_of_the_best"),
    [
        # without masking, the one Barcelona example (rank_spots, "joggen") ranked first for both
        ("Regnet es am 20.01.2026 in Barcelona?", {"geocode", "get_weather"}),
        ("Mit welchem Wetter muss ich in Barcelona vom 10. bis 14. Juni 2026 rechnen?", {"geocode", "get_weather"}),
        ("Find hiking spots within 15 km of Barcelona.", {"geocode", "get_spots"}),
        # a date range: the example with dates first (the dateless beach example made s4 plan get_spots)
        ("Which beach near Barcelona is best from 2026-06-10 to 2026-06-12?", {"geocode", "rank_spots"}),
    ],
)
def test_examples_are_ranked_by_shape_not_by_the_place_they_name(question: str, tools_of_the_best: set[str]) -> None:
    best = rank_examples(question, TRAVEL_TOOLS, include_saved=False, gazetteer=default_gazetteer())[0]
    assert best.tools == tools_of_the_best, best.question


def test_a_two_city_question_is_shown_two_city_examples_first() -> None:
    question = "Compare the weather in Rome and Barcelona on 2026-01-23."
    ranked = rank_examples(question, TRAVEL_TOOLS, include_saved=False, gazetteer=default_gazetteer())
    for example in ranked[:2]:
        geocodes = [c for c in _calls(example.plan) if c["name"] == "geocode"]
        assert len(geocodes) == 2, example.question
    # a follow-up naming one place still gets the follow-up example (its referent in brackets does not count)
    (best,) = select_examples("Und in Paris?", TRAVEL_TOOLS, k=1, include_saved=False, gazetteer=default_gazetteer())
    assert "vorherige Frage" in best.question


def test_an_example_naming_as_many_dates_as_the_question_gains_on_a_closer_one() -> None:
    undated = Example("Welche Strände gibt es bei Palma?", {"steps": [{"tools": [{"id": "s", "name": "get_spots"}]}]})
    ranged = Example(
        "Wo ist es vom 20. bis 22. Juli 2026 in Palma am schönsten?",
        {"steps": [{"tools": [{"id": "r", "name": "rank_spots"}]}]},
    )
    question = "Welche Strände gibt es bei Barcelona vom 3. bis 5. August 2026?"
    pool = [undated, ranged]
    words_only = rank_examples(question, TRAVEL_TOOLS, pool, include_saved=False, ranking="words")
    assert words_only[0] is undated  # by words alone the dateless question is closer
    shaped = rank_examples(
        question, TRAVEL_TOOLS, pool, include_saved=False, ranking="words", gazetteer=SMALL_GAZETTEER
    )
    assert shaped[0] is ranged
    # and a question without dates prefers the example without (a dated one would teach made-up days)
    dateless = "Wo ist es in Barcelona am schönsten, vom Strand abgesehen?"
    assert rank_examples(dateless, TRAVEL_TOOLS, pool, include_saved=False, ranking="words")[0] is ranged
    shaped = rank_examples(
        dateless, TRAVEL_TOOLS, pool, include_saved=False, ranking="words", gazetteer=SMALL_GAZETTEER
    )
    assert shaped[0] is undated

"""The travel+context bench: the question set, the recorded upstream, the scoring, and runs through the real graph
(replay model, the real travel and math MCP servers, offline)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchmarks import travel
from benchmarks.cli import bench_app
from planwerk.core.plan import Plan
from planwerk.models.replay import ReplayChatModel


def _by_id() -> dict[str, travel.Question]:
    return {q.qid: q for q in travel.load_questions()}


def test_the_set_covers_every_category_in_german_and_english() -> None:
    questions = travel.load_questions()
    assert len(questions) >= 30
    assert len({q.qid for q in questions}) == len(questions)
    assert {q.language for q in questions} == {"de", "en"}
    for category in travel.CATEGORIES:
        group = [q for q in questions if q.category == category]
        assert len(group) >= 2, category
    for question in questions:
        Plan.model_validate(question.plan)
        planned = {call["name"] for step in question.plan["steps"] for call in step["tools"]}
        assert frozenset(planned) in question.tools, question.qid  # the reference plan calls an expected set
        assert question.facts, question.qid
        assert not travel.missing_facts(question.answer, question) or any(
            isinstance(f, dict) and "result" in f for g in question.facts for f in g
        ), question.qid
    assert travel.load_questions(2, category="parks")[0].category == "parks"
    with pytest.raises(ValueError, match="unknown category"):
        travel.load_questions(category="math")
    assert [q.qid for q in travel.load_questions(ids=["c1", "w4"])] == ["w4", "c1"]  # in the set's order
    with pytest.raises(ValueError, match="unknown question id"):
        travel.load_questions(category="parks", ids=["w4"])


def test_recorded_upstream_answers_what_was_recorded_and_503_for_the_rest() -> None:
    recorded = travel.RecordedResponses()
    status, body = recorded.nominatim("Rom, Italien")
    assert status == 200 and body[0]["lat"] == "41.8933203"
    assert recorded.nominatim("Paris")[0] == 503
    status, body = recorded.open_meteo(
        {"latitude": "41.38", "longitude": "2.177", "start_date": "2026-01-18", "end_date": "2026-01-19"}
    )
    assert status == 200 and body["daily"]["time"] == ["2026-01-18", "2026-01-19"]
    assert body["daily"]["temperature_2m_max"] == [13.6, 12.6]
    assert (
        recorded.open_meteo(
            {"latitude": "48.85", "longitude": "2.35", "start_date": "2026-01-18", "end_date": "2026-01-18"}
        )[0]
        == 503
    )
    from planwerk.tools.servers.travel.spots import overpass_query

    status, body = recorded.overpass(overpass_query("beach", 41.3825802, 2.177073, 3, 80))
    names = {e["tags"].get("name") for e in body["elements"]}
    assert status == 200 and "Platja del Somorrostro" in names and "Platja de La Marina" not in names  # 7.6 km away
    assert recorded.overpass(overpass_query("hiking", 41.38, 2.17, 15, 80))[0] == 503
    assert recorded.overpass(overpass_query("parks", 39.57, 2.65, 5, 5))[0] == 503  # Palma: never recorded


def test_facts_read_numbers_with_rounding_texts_and_result_names() -> None:
    assert travel.fact_present("Bis zu 13,6 °C.", {"number": 13.6, "unit": "°C"})
    assert travel.fact_present("Around 14 °C.", {"number": 13.6, "unit": "°C"})
    assert not travel.fact_present("Around 15 °C.", {"number": 13.6, "unit": "°C"})
    assert not travel.fact_present("Am 13.06.2026.", {"number": 13.6, "unit": "°C"})  # a date is no temperature
    assert travel.fact_present("im Ebro-Becken", "ebro")
    calls = [{"status": "ok", "result": {"result": [{"name": "Terraza"}, {"name": "Bosc Humit"}]}}]
    assert travel.fact_present("Der Park Terraza liegt 12 km entfernt.", {"result": "name"}, calls)
    assert not travel.fact_present("Der Parc Güell.", {"result": "name"}, calls)
    with pytest.raises(ValueError, match="unknown unit"):
        travel.fact_present("", {"number": 51, "unit": "Tage"})


def test_a_refusal_in_the_passive_is_a_refusal() -> None:
    # o4's regenerated answer at 453f985 ("This question cannot be answered, …") was counted as no refusal.
    [o4] = [q for q in travel.load_questions(None) if q.qid == "o4"]
    for refusal in ("This question cannot be answered, as it is outside what this assistant is for.",
                    "Diese Frage kann hier nicht beantwortet werden.", "I cannot answer this question."):  # fmt: skip
        assert not travel.missing_facts(refusal, o4), refusal
    assert travel.missing_facts("Hotel Casa Fuster has 4 stars.", o4)


def test_the_check_rejects_an_invented_number_and_accepts_the_reference_answer() -> None:
    question = _by_id()["w1"]
    calls: list[dict[str, Any]] = [
        {
            "id": "geo",
            "tool": "geocode",
            "status": "ok",
            "args": {"destination": "Barcelona"},
            "result": {"lat": 41.38, "lon": 2.18},
        },
        {
            "id": "w",
            "tool": "get_weather",
            "status": "ok",
            "args": {"lat": 41.38, "lon": 2.18, "start_date": "2026-01-18", "end_date": "2026-01-18"},
            "result": {"temp_min_c": 10.8, "temp_max_c": 13.6, "precip_total_mm": 26.8},
        },
    ]
    good = travel.check_grounded(question.answer, question=question.text, calls=calls, hits=[], plan=question.plan)
    assert good.ok, good.problems
    bad = travel.check_grounded(
        "Am 18. Januar 2026 werden es in Barcelona 22 °C.", question=question.text, calls=calls, hits=[]
    )
    assert [p.kind for p in bad.problems] == ["number"]


async def test_a_run_scores_good_answers_a_wrong_tool_and_an_invented_number() -> None:
    """Through the real graph with the real offline servers: reference runs pass; a plan that skips get_weather
    scores "expected tools: no"; a model that invents a number twice is not "model grounded" (the finalizer
    replaces its answer with the deterministic one)."""
    q = _by_id()
    wrong_tool = replace(
        q["w1"],
        qid="wrong_tool",
        plan={
            "steps": [{"description": "Koordinaten", "tools": [q["w1"].plan["steps"][0]["tools"][0]]}],
            "final": None,
        },
        answer="Barcelona liegt bei 41,38° Breite und 2,18° Länge.",
    )
    invented = replace(q["w3"], qid="invented", answer="Rome will reach 19 °C on 23 January 2026.")
    questions = [q["w1"], q["k1"], q["o1"], q["c3"], wrong_tool, invented]
    script = travel.replay_script(questions[:-1])
    # English: the retrieval translation first (the question itself: searched as asked), then plan and answers.
    script += [invented.text, json.dumps(invented.plan), invented.answer, "It will be 19 °C in Rome."]
    report = await travel.run_travel(ReplayChatModel.of(script), questions=questions)
    rows = {r.qid: r for r in report.results}
    for qid in ("w1", "k1", "o1", "c3"):
        row = rows[qid]
        assert row.passed and row.model_grounded, (qid, row)
    assert rows["o1"].tools_called == () and rows["o1"].llm_calls == 1
    assert rows["c3"].failed_calls and "unavailable" in rows["c3"].failed_calls[0]  # Madrid was never recorded
    assert any(c.startswith('geocode {"destination": "Madrid"') for c in rows["c3"].calls)  # what it asked
    assert rows["wrong_tool"].valid_plan and not rows["wrong_tool"].expected_tools
    assert not rows["wrong_tool"].passed and not rows["wrong_tool"].facts_ok
    row = rows["invented"]
    assert row.expected_tools and not row.model_grounded and row.answer_source == "fallback"
    assert row.finalizer_problems and "19" in row.finalizer_problems[0]
    # Both answers the check rejected are in the row, each with its problems: a reader judges whether it was right.
    assert len(row.rejected) == 2 and all("19" in r for r in row.rejected), row.rejected
    assert rows["w1"].rejected == ()
    assert "19 °C" not in (row.answer or "")
    summary = report.summary()
    assert summary["questions"] == 6 and summary["model_grounded"] == 5
    assert {f["id"] for f in summary["failures"]} == {"wrong_tool", "invented"}
    assert summary["by_category"]["weather"]["questions"] == 3


async def test_a_run_that_waits_for_a_person_counts_its_model_calls() -> None:
    asks = replace(_by_id()["w1"], qid="asks", plan={"steps": [], "final": None, "ask_user": "Für welchen Tag?"})
    script = [json.dumps(asks.plan)]
    report = await travel.run_travel(ReplayChatModel.of(script), questions=[asks])
    [row] = report.results
    assert row.answer is None and row.llm_calls == 1  # the plan that asked (recorded as 0 calls before)


def test_cli_json_is_the_last_line_and_results_are_written(tmp_path: Path) -> None:
    questions = travel.load_questions(category="out_of_domain")
    replay = travel.write_replay(questions, tmp_path / "replay.json")
    results = tmp_path / "results.jsonl"
    result = CliRunner().invoke(
        bench_app,
        [
            "travel",
            "--model",
            f"replay:{replay}",
            "--category",
            "out_of_domain",
            "--json",
            "--results",
            str(results),
            "--answer-by-reference",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # stdout holds the JSON object alone; the table went to stderr
    assert "travel+context" in result.stderr
    assert summary["benchmark"] == "travel" and summary["questions"] == len(questions)
    assert summary["answer_by_reference"] is True  # the run says how its answers were written
    assert summary["passed"] == len(questions) and summary["by_category"]["out_of_domain"]["passed_rate"] == 1.0
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["qid"] for r in rows] == [q.qid for q in questions] and all(r["passed"] for r in rows)
    bad = CliRunner().invoke(bench_app, ["travel", "--category", "nope"])
    assert bad.exit_code == 2 and "unknown category" in bad.output
    unknown = CliRunner().invoke(bench_app, ["travel", "--ids", "w4,zz9"])
    assert unknown.exit_code == 2 and "unknown question id(s) zz9" in unknown.output

"""The travel set's stricter pass criterion (issue 30 requirement 5): wrong referent, date, place, language and
arguments fail, a right answer passes, and a recorded run is judged again without the model."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from benchmarks import honest
from benchmarks.cli import bench_app
from benchmarks.travel import QuestionResult
from planwerk.tools.servers.travel.spots import ACTIVITY_NAMES

RECORDED = Path(__file__).resolve().parents[2] / "docs" / "results" / "travel_all_a08ed0d.jsonl"


def _problems(qid: str, answer: str, language: str, calls: list[tuple[str, dict]]) -> list[str]:
    referent = honest.load_referents()[qid]
    return honest.strict_problems(answer, language=language, calls=calls, referent=referent, aliases=ACTIVITY_NAMES)


def test_a_follow_up_answered_for_the_earlier_day_fails_and_the_right_one_passes() -> None:
    weather = ("get_weather", {"lat": 41.38, "lon": 2.17, "start_date": "2026-01-18", "end_date": "2026-01-18"})
    wrong = _problems("f1", "In Barcelona werden es am 18. Januar 13 °C.", "de", [weather])
    assert any(p.startswith("referent: get_weather called for 2026-01-18") for p in wrong)
    assert "wrong referent: the answer states '18. Januar'" in wrong
    right_call = ("get_weather", {**weather[1], "start_date": "2026-01-19", "end_date": "2026-01-19"})
    assert _problems("f1", "In Barcelona werden es am 19. Januar bis zu 12,6 °C.", "de", [right_call]) == []
    # "And in Rome?" answered for today, not the conversation's day.
    assert _problems("f2", "The weather in Rome on 2026-01-16 will be mild.", "en", []) == [
        "referent: the answer states 2026-01-16, asked 2026-01-23..2026-01-23"
    ]


def test_wrong_place_language_and_arguments_fail() -> None:
    assert _problems("p3", "Ja, in Barcelona gibt es viele Grünanlagen.", "de", []) == [
        "place: does not name Palma",
        "wrong referent: the answer states 'Barcelona'",
    ]
    assert _problems("o2", "Diese Frage kann ich nicht beantworten.", "en", []) == ["language: not in en"]
    assert _problems("o2", "I cannot answer this question.", "en", []) == []
    hiking = ("get_spots", {"lat": 41.38, "lon": 2.17, "radius_km": 2, "activity": "hiking"})
    assert _problems("s1", "Keine Sehenswürdigkeiten um Barcelona gefunden.", "de", [hiking]) == [
        "arguments: get_spots called with activity='hiking', the question asks 'sightseeing'"
    ]
    # The server reads "joggen" as running: a German activity name is no wrong argument.
    jog = ("rank_spots", {"start_date": "2026-01-18", "end_date": "2026-01-20", "activity": "joggen"})
    assert _problems("s3", "In Barcelona joggt man am besten im Parc de la Ciutadella.", "de", [jog]) == []


def test_the_recorded_run_has_eight_passed_answers_that_are_wrong() -> None:
    summary = honest.rescore(RECORDED)
    assert (summary["questions"], summary["passed_before"], summary["passed_strict"]) == (36, 33, 25)
    assert [w["id"] for w in summary["wrong"]] == ["c2", "s1", "s5", "p3", "o2", "o4", "f1", "f2"]
    assert summary["by_answer_kind"]["kept"] == {"answers": 11, "passed_before": 11, "passed_strict": 8}
    result = CliRunner().invoke(bench_app, ["travel-rescore", str(RECORDED), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["passed_but_wrong"] == 8


def test_a_live_result_with_a_strict_problem_does_not_pass() -> None:
    fields = dict(valid_plan=True, expected_tools=True, grounded=True, model_grounded=True, facts_ok=True)
    ok = QuestionResult("f1", "follow_up", "de", "Und am 19. Januar?", "…", **fields, answer_source="model")
    wrong = QuestionResult(
        "f1", "follow_up", "de", "Und am 19. Januar?", "…", **fields, strict_problems=("wrong referent",)
    )
    assert ok.passed and ok.answer_kind == "kept"
    assert not wrong.passed and not wrong.strict

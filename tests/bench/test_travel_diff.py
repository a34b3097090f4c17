"""Two recorded travel runs side by side (``python -m benchmarks travel-diff``): the totals over the questions both
hold, and each question whose outcome, kind or answer changed, read from files in docs/results."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from benchmarks.cli import bench_app
from benchmarks.travel_diff import diff_runs

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
BEFORE = RESULTS / "travel_all_e8ed7d7.jsonl"
AFTER = RESULTS / "travel_prompt_reported_dca2377p.jsonl"


def test_a_prompt_change_shows_as_totals_and_as_the_questions_it_moved() -> None:
    diff = diff_runs(BEFORE, AFTER)
    assert (diff["before"]["passed"], diff["before"]["model_written_passed"]) == (29, 18)
    assert (diff["after"]["passed"], diff["after"]["model_written_passed"]) == (27, 19)
    assert diff["before"]["kinds"] == {"fallback": 14, "kept": 14, "none": 1, "regenerated": 7}
    w1 = next(c for c in diff["changed"] if c["id"] == "w1")
    assert w1["change"] == "lost" and w1["after"]["answer"].startswith("Tiefste Temperatur 10.8 °C")
    assert "w1" in diff["lost"] and "w6" in diff["gained"] and not diff["only_before"]


def test_a_run_against_itself_changes_nothing_and_the_command_prints_json() -> None:
    assert diff_runs(BEFORE, BEFORE)["changed"] == []
    result = CliRunner().invoke(bench_app, ["travel-diff", str(BEFORE), str(AFTER), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["lost"] == diff_runs(BEFORE, AFTER)["lost"]


def test_a_file_that_is_no_travel_run_is_named_with_what_was_expected(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"tid": "files1"}\n', encoding="utf-8")
    result = CliRunner().invoke(bench_app, ["travel-diff", str(BEFORE), str(other)])
    assert result.exit_code == 2
    assert "line 1 lacks qid, passed; expected a travel result" in " ".join(result.output.split())
    missing = CliRunner().invoke(bench_app, ["travel-diff", str(BEFORE), str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "no such results file" in missing.output

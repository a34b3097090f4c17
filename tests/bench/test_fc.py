"""python -m benchmarks fc: the BFCL sample, the leaderboard's parsing and checker, the MCP server made from an entry's
functions (real, over stdio), and both systems on one entry with a replay model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.fc import Entry, load_entries, parse_calls, run_fc, score, served_tools, tool_schema
from planwerk.tools.mcp import open_tools


def entry(entry_id: str) -> Entry:
    return next(e for e in load_entries("all") if e.id == entry_id)


def test_the_sample_has_eight_categories_split_into_tune_and_report_halves() -> None:
    tune, report = load_entries("tune"), load_entries("report")
    assert len(tune) == len(report) == 32 and not {e.id for e in tune} & {e.id for e in report}
    assert {e.category for e in report} == {
        "simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
        "live_simple", "live_multiple", "live_irrelevance",
    }  # fmt: skip
    assert len(load_entries("report", categories=["parallel"], limit_per_category=1)) == 1


def test_the_holdout_entries_are_apart_from_the_sample() -> None:
    holdout, sample = load_entries("holdout"), load_entries("all")
    assert len(holdout) == 32 and {e.split for e in holdout} == {"holdout"}
    assert not {e.id for e in holdout} & {e.id for e in sample}
    assert {e.category for e in holdout} == {e.category for e in sample}
    answered = [e for e in holdout if not e.category.endswith("irrelevance")]
    assert all(e.possible_answer for e in answered) and all(e.question for e in holdout)


def test_replies_are_parsed_and_scored_as_the_leaderboard_does() -> None:
    triangle = entry("simple_python_0")
    calls = parse_calls("```python\n[calculate_triangle_area(base=10, height=5)]\n```")
    assert calls == [{"calculate_triangle_area": {"base": 10, "height": 5}}]
    assert score(triangle, calls) == (True, "")
    wrong, why = score(triangle, [{"calculate_triangle_area": {"base": 5, "height": 5}}])
    assert not wrong and "base" in why
    assert parse_calls("The area is 25.") == [] and score(triangle, [])[0] is False
    # Irrelevance: right when nothing is called.
    assert score(entry("irrelevance_0"), [])[0] and not score(entry("irrelevance_0"), calls)[0]
    # Dotted names are served and scored with underscores.
    assert parse_calls("[math.factorial(number=5)]") == [{"math_factorial": {"number": 5}}]


def test_the_leaderboards_types_become_json_schema() -> None:
    converted = tool_schema({"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple"}}})
    assert converted == {"type": "object", "properties": {"x": {"type": "number"}, "t": {"type": "array"}}}


async def test_an_entrys_functions_are_served_as_mcp_tools(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(served_tools(entry("multiple_0").functions)))
    server = {"command": sys.executable, "args": ["-m", "benchmarks.fc_server", str(tools_file)], "timeout": 30}
    async with open_tools({"mcpServers": {"fc": server}}) as tools:
        assert set(tools.specs) == {"triangle_properties_get", "circle_properties_get"}
        assert tools.specs["triangle_properties_get"].input_schema["properties"]["side1"]["type"] == "integer"
        result = await tools.call("triangle_properties_get", {"side1": 5, "side2": 4, "side3": 3})
    assert result == {"status": "done", "function": "triangle_properties_get"}


async def test_both_systems_on_one_entry_scored_alike(tmp_path: Path) -> None:
    plan = {
        "steps": [{"description": "", "tools": [
            {"id": "a", "name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
        ]}],
        "final": None,
    }  # fmt: skip
    replay = tmp_path / "replies.json"
    # Twice: "10 units" names the optional argument `unit`, so the plan is asked about it once and, written again,
    # stands (planwerk.core.question_fit.unfilled_named_arguments).
    replay.write_text(json.dumps([json.dumps(plan)] * 2))
    report = await run_fc(f"replay:{replay}", [entry("simple_python_0")])
    outcomes = report.results[0].outcomes
    # The plan JSON is no call list for the leaderboard's parser; planwerk ran the planned call.
    assert not outcomes["plain"].correct and outcomes["planwerk"].correct
    assert outcomes["planwerk"].calls == [{"calculate_triangle_area": {"base": 10, "height": 5}}]
    summary = report.summary()
    assert summary["overall"] == {"entries": 1, "plain": 0, "planwerk": 1} and summary["split"] == "tune"

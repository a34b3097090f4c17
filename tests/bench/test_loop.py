"""The notebook-loop baseline (its own logic) and the cost comparison with planwerk, from one real run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import ChatMessage
from typer.testing import CliRunner

from benchmarks import loop
from benchmarks.cli import bench_app
from planwerk.models.replay import ReplayChatModel, estimate_tokens


def test_notebook_parser_takes_the_first_balanced_object_and_needs_steps_and_final() -> None:
    text = 'Hier ist der Plan: {"steps": [], "final": "a } in a string"} und noch {"x": 1}'
    assert loop.parse_notebook_plan(text) == {"steps": [], "final": "a } in a string"}
    with pytest.raises(loop.NotebookPlanError, match="no JSON object"):
        loop.parse_notebook_plan("keine Ahnung")
    with pytest.raises(loop.NotebookPlanError, match="must have 'steps' and 'final'"):
        loop.parse_notebook_plan('{"steps": []}')
    with pytest.raises(loop.NotebookPlanError, match="not valid JSON"):
        loop.parse_notebook_plan('{"steps": [}')


def test_notebook_references_use_the_result_as_root() -> None:
    results = {"geo": {"lat": 41.4, "items": [{"name": "Park"}]}}
    args = {"lat": {"$ref": "geo.lat"}, "first": "$ref:geo.items.0.name", "q": {"$ref": "user.raw"}, "n": 3}
    assert loop.resolve_notebook_arguments(args, results, {"raw": "Frage"}) == {
        "lat": 41.4,
        "first": "Park",
        "q": "Frage",
        "n": 3,
    }
    with pytest.raises(KeyError, match="unknown tool id in \\$ref: wx"):
        loop.resolve_notebook_arguments({"t": {"$ref": "wx.temp"}}, results, {})


async def test_notebook_loop_runs_one_step_per_model_call_and_resends_the_whole_history() -> None:
    scenario = next(s for s in loop.SCENARIOS if s.name == "3 dependent steps")
    calls: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
        calls.append((name, args))
        a, b = args["arg_0"], args["arg_1"]
        value = {"add": a + b, "multiply": a * b, "subtract": a - b}[name]
        return {"isError": False, "data": {"result": value}}

    model = ReplayChatModel.of(loop.notebook_script(scenario))
    run = await loop.NotebookLoop(model, call_tool).run("SYSTEM", "Frage")
    assert run.answer == "Das Ergebnis ist 120." and run.llm_calls == 4 and model.calls == 4
    assert calls == [
        ("add", {"arg_0": 12, "arg_1": 30}),
        ("multiply", {"arg_0": 42, "arg_1": 3}),
        ("subtract", {"arg_0": 126, "arg_1": 6}),
    ]
    tool_messages = [[m for m in prompt if isinstance(m, ChatMessage)] for prompt in model.prompts]
    assert [len(m) for m in tool_messages] == [0, 1, 2, 3]  # the tool history grows and is sent every time
    assert json.loads(tool_messages[3][2].content)["result"] == {"result": 120}
    assert run.prompt_tokens == sum(  # the same estimate planwerk's replay model uses
        sum(estimate_tokens(str(m.content)) for m in prompt) for prompt in model.prompts
    )


async def test_notebook_loop_gives_up_after_max_iterations() -> None:
    endless = json.dumps({"steps": [], "final": None})
    model = ReplayChatModel.of([endless] * 3)

    async def no_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("no tool is planned")

    run = await loop.NotebookLoop(model, no_tool, max_iterations=3).run("SYSTEM", "Frage")
    assert run.answer == loop.NotebookLoop.FALLBACK and run.llm_calls == 3
    assert loop.NotebookLoop.FINAL_NUDGE in str(model.prompts[1][-1].content)


def test_bench_loop_json_compares_both_engines_from_one_run() -> None:
    result = CliRunner().invoke(bench_app, ["loop", "--json", "--calls", "4", "--pause", "0.5"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["samples"] == len(loop.SCENARIOS) and summary["wall_s"] > 0
    for row in summary["scenarios"]:
        notebook, planwerk = row["notebook"], row["planwerk"]
        assert notebook["llm_calls"] == row["steps"] + 1  # a (re)plan per step, then the final answer
        assert planwerk["llm_calls"] == 2  # one plan, one answer
        assert notebook["tool_calls"] == planwerk["tool_calls"] == row["calls"]
        assert notebook["results"] == planwerk["results"]  # same tools, same results: only the engine differs
        if row["steps"] > 1:
            assert planwerk["prompt_tokens"] < notebook["prompt_tokens"]
    assert summary["scenarios"][2]["planwerk"]["results"]["s3"] == {"result": 120.0}
    assert summary["llm_calls_ratio"] == pytest.approx(4 / 7, abs=1e-3)  # (2+2) / (3+4)
    assert summary["prompt_tokens_ratio"] < 1
    concurrency = summary["concurrency"]
    assert concurrency["sequential_s"] == 2.0
    assert concurrency["planwerk_s"] < 0.6 * concurrency["sequential_s"]  # the 4 calls overlap
    assert concurrency["notebook_s"] >= concurrency["sequential_s"]  # one after another
    assert "Cost per task" in result.stderr  # with --json the table is on stderr, stdout the JSON alone

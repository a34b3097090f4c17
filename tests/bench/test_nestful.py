"""NESTFUL: gold sequences as plans, the official scoring, the engine on real MCP, the planner through the graph."""

from __future__ import annotations

import ast
import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import Field
from typer.testing import CliRunner, Result

from benchmarks import nestful
from benchmarks.cli import bench_app
from planwerk.core.plan import Plan
from planwerk.core.refs import dependencies
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools


def sample_with_answer(answer: object, kind: str = "json") -> nestful.Sample:
    return nestful.Sample("s", "q", (), (), answer, kind)  # type: ignore[arg-type]


def test_gold_calls_become_a_plan_with_refs_and_one_step_per_depth() -> None:
    calls = [
        {"name": "add", "label": "$var_1", "arguments": {"arg_0": 1, "arg_1": 2}},
        {"name": "add", "label": "$var_2", "arguments": {"arg_0": 3, "arg_1": 4}},
        {"name": "multiply", "label": "$var_3", "arguments": {"arg_0": "$var_1.result$", "arg_1": "$var_2.result$"}},
        {"name": "max_number", "label": "$var_4", "arguments": {"arg_0": ["$var_3.result$", 5]}},
    ]
    plan = nestful.gold_plan(calls)
    assert [[c["id"] for c in step["tools"]] for step in plan["steps"]] == [["var_1", "var_2"], ["var_3"], ["var_4"]]
    assert plan["steps"][1]["tools"][0]["arguments"] == {
        "arg_0": {"$ref": "var_1.result"},
        "arg_1": {"$ref": "var_2.result"},
    }
    assert plan["steps"][2]["tools"][0]["arguments"] == {"arg_0": [{"$ref": "var_3.result"}, 5]}
    assert nestful.nesting_depth(calls) == 3
    assert nestful.convert_value("$var_1.result") == "$var_1.result"  # not the whole-string form: a literal


def test_every_gold_plan_is_valid_and_refers_only_to_earlier_steps() -> None:
    for split in nestful.SPLITS:
        for sample in nestful.load_samples(split):
            plan = nestful.gold_plan(sample.calls)
            Plan.model_validate(plan)
            seen: set[str] = set()
            for step in plan["steps"]:
                for call in step["tools"]:
                    assert dependencies(call["arguments"]) <= seen, sample.sample_id
                seen |= {call["id"] for call in step["tools"]}
            assert sum(len(s["tools"]) for s in plan["steps"]) == len(sample.calls)


def test_official_scoring_rounds_floats_to_the_golds_decimals() -> None:
    assert nestful.matches(5.04, sample_with_answer(5.0))  # rounded to one decimal
    assert not nestful.matches(5.06, sample_with_answer(5.0))
    assert nestful.matches(1 / 12, sample_with_answer("0.08333333333333333", "python_str"))
    assert not nestful.matches(0.0834, sample_with_answer("0.08333333333333333", "python_str"))
    assert nestful.matches(2160.0, sample_with_answer("2160.0", "python_str"))
    assert nestful.matches((1, 2), sample_with_answer([1, 2]))  # a tuple counts as a list
    assert not nestful.matches("5.0", sample_with_answer(5.0))
    assert nestful.single_output({"result": 3.5}) == 3.5


def test_data_errors_say_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown NESTFUL split 'train'; expected one of: dev, test"):
        nestful.load_samples("train")
    with pytest.raises(ValueError, match="limit must be a positive number"):
        nestful.load_samples("dev", 0)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"sample_id": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:1: not a NESTFUL record"):
        nestful.load_samples("dev", path=broken)
    assert [len(nestful.load_samples(split)) for split in nestful.SPLITS] == [200, 196]


async def test_oracle_reproduces_every_test_answer_and_a_dev_subset_on_one_persistent_session() -> None:
    report = await nestful.run_oracle("test")
    summary = report.summary()
    assert summary["samples"] == 196 and summary["correct"] == 196, summary["failures"]
    assert summary["tool_calls"] == 997
    assert summary["per_call_ms"]["p50"] < 100  # a persistent session: no process spawn (~500 ms) per call
    baseline = summary["baseline_in_process"]  # the same plans without MCP, measured in the same run
    assert baseline["correct"] == 196 and baseline["per_call_ms"]["p50"] < summary["per_call_ms"]["p50"]
    dev = (await nestful.run_oracle("dev", limit=20)).summary()
    assert dev["samples"] == 20 and dev["accuracy"] == 1.0, dev["failures"]


async def test_a_wrong_plan_or_a_failed_last_call_scores_as_wrong() -> None:
    sample = nestful.load_samples("test", 1)[0]
    tampered = [dict(call) for call in sample.calls]
    tampered[0] = {**tampered[0], "arguments": {**tampered[0]["arguments"], "arg_0": 12345}}
    divide_by_zero = [*sample.calls, {"name": "divide", "label": "$var_99", "arguments": {"arg_0": 1, "arg_1": 0}}]
    async with open_tools(nestful.MATH_ONLY_CONFIG) as tools:
        right = await nestful.oracle_sample(sample, tools)
        wrong = await nestful.oracle_sample(replace(sample, calls=tuple(tampered)), tools)
        failed = await nestful.oracle_sample(replace(sample, calls=tuple(divide_by_zero)), tools)
    assert right.correct and not wrong.correct and wrong.error is None
    assert not failed.correct and "division by zero" in (failed.error or "")


async def test_subset_tool_source_offers_only_the_samples_tools() -> None:
    sample = nestful.load_samples("dev", 1)[0]
    async with open_tools(nestful.MATH_ONLY_CONFIG) as tools:
        subset = nestful.SubsetToolSource(tools, sample.tool_names)
        assert set(subset.specs) == set(sample.tool_names) and len(tools.specs) > len(subset.specs)
        hidden = sorted(set(tools.specs) - set(sample.tool_names))[0]
        with pytest.raises(nestful.ToolError, match=f"tool '{hidden}' is not offered here"):
            await subset.call(hidden, {"arg_0": 1, "arg_1": 2})
        assert await subset.call("divide", {"arg_0": 7, "arg_1": 2}) == {"result": 3.5}
        with pytest.raises(ValueError, match="lacks tool"):
            nestful.SubsetToolSource(tools, {"no_such_tool"})


async def test_planner_through_the_graph_with_self_correction_and_scoring() -> None:
    samples = nestful.load_samples("dev", 3)
    gold = nestful.replay_script(samples)  # [plan 1, answer 1, plan 2, answer 2, plan 3, answer 3]
    not_offered = sorted({"factorial", "choose", "volume_cone"} - samples[1].tool_names)[0]
    bad_tool = json.dumps(
        {
            "steps": [{"description": "x", "tools": [{"id": "a", "name": not_offered, "arguments": {"arg_0": 3}}]}],
            "final": None,
        }
    )
    wrong = json.loads(gold[4])
    wrong["steps"][0]["tools"][0]["arguments"]["arg_0"] = 99999
    script = [
        "Ich rechne das im Kopf: 5.",  # not a plan: the planner gets the problem back
        gold[0],
        gold[1],
        bad_tool,
        gold[2],
        gold[3],  # a tool the sample does not offer: rejected by the plan check
        json.dumps(wrong),
        gold[5],  # a valid plan with a wrong number: scored wrong
        gold[5],  # its answer states the gold value, not the last result: regenerated once, then "The result is …"
    ]
    model = ReplayChatModel.of(script)
    report = await nestful.run_planner("dev", model, limit=3, plan_format="json")  # expression plans: below
    summary = report.summary()
    assert model.calls == len(script)
    assert [r.correct for r in report.results] == [True, True, False]
    assert [r.plan_attempts for r in report.results] == [2, 2, 1]
    assert [r.llm_calls for r in report.results] == [3, 3, 3]
    assert summary["valid_plans"] == 3 and summary["accuracy"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["plans_without_calls"] == 0
    # Each result says which tools ran (the gold sequence's, here) and, for sample 1, nothing is left of the
    # rejected first plan's problems once the second plan ran cleanly.
    assert [list(r.tools_called) for r in report.results] == [[c["name"] for c in s.calls] for s in samples]
    assert report.results[1].problems == ()
    # A sample whose run crashes (here: the replay model has no replies left) is scored wrong; the run goes on.
    exhausted = await nestful.run_planner("dev", ReplayChatModel.of([]), limit=2)
    assert [r.correct for r in exhausted.results] == [False, False]
    assert "ReplayExhaustedError" in (exhausted.results[0].error or "")
    assert summary["llm_calls_per_sample"] == pytest.approx(9 / 3, abs=1e-3)
    assert all(r.prompt_tokens > 0 and r.completion_tokens > 0 for r in report.results)
    # The planner saw exactly the sample's tools in its catalog.
    system = str(model.prompts[0][0].content)
    listed = {line[2:].split("(")[0] for line in system.splitlines() if line.startswith("- ") and "(" in line}
    assert samples[0].tool_names <= listed and not_offered not in listed


async def test_results_say_why_plans_failed_and_count_plans_without_calls() -> None:
    call = {"id": "a", "name": "no_such_tool", "arguments": {}}
    unknown = json.dumps({"steps": [{"description": "x", "tools": [call]}], "final": None})
    no_calls = json.dumps({"steps": [], "final": "I cannot work this out."})  # states nothing: it stands
    # sample 0: three rejected plans; sample 1: a plan the check passes that calls nothing
    model = ReplayChatModel.of([unknown, unknown, unknown, no_calls])
    report = await nestful.run_planner("dev", model, limit=2)
    failed, empty = report.results
    assert not failed.valid_plan and failed.error == "no plan passed the check"
    assert any("no_such_tool" in problem for problem in failed.problems)
    assert empty.valid_plan and empty.error == nestful.NO_CALLS and empty.tools_called == ()
    summary = report.summary()
    assert summary["valid_plans"] == 1 and summary["plans_without_calls"] == 1 and model.calls == 4


def test_cli_oracle_json_is_the_last_line_and_bad_options_are_explained(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        bench_app,
        [
            "nestful",
            "--split",
            "test",
            "--oracle",
            "--limit",
            "5",
            "--json",
            "--plot",
            str(tmp_path / "depth.png"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["samples"] == 5 and summary["accuracy"] == 1.0 and summary["wall_s"] > 0
    assert "NESTFUL math, test split" in result.stderr
    assert (tmp_path / "depth.png").stat().st_size > 1000
    both = runner.invoke(bench_app, ["nestful", "--oracle", "--model", "default"])
    assert both.exit_code == 2 and "exactly one of --oracle or --model" in both.output
    split = runner.invoke(bench_app, ["nestful", "--split", "train", "--oracle"])
    assert split.exit_code == 2 and "unknown split 'train'" in split.output


def test_cli_planner_with_a_replay_file(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(nestful.replay_script(nestful.load_samples("dev", 2))), encoding="utf-8")
    result = CliRunner().invoke(
        bench_app,
        [
            "nestful",
            "--split",
            "dev",
            "--model",
            f"replay:{replies}",
            "--limit",
            "2",
            "--json",
            "--results",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["mode"] == "planner" and summary["accuracy"] == 1.0 and summary["llm_calls_per_sample"] == 2
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["correct"] for row in rows] == [True, True]


def test_cli_planner_with_expression_plans(tmp_path: Path) -> None:
    from planwerk.core.expressions import plan_expression

    samples = nestful.load_samples("dev", 2)
    script = []
    for sample, answer in zip(samples, nestful.replay_script(samples, "The result is {value}.")[1::2], strict=True):
        script += [plan_expression(nestful.gold_plan(sample.calls)), answer]
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(script), encoding="utf-8")
    result = _bench("--model", f"replay:{replies}", "--limit", "2", "--plan-format", "expression", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["accuracy"] == 1.0
    bad = _bench("--model", f"replay:{replies}", "--plan-format", "yaml")
    assert bad.exit_code == 2
    assert "unknown plan format 'yaml'; expected profile, json or expression" in " ".join(bad.output.split())


def _bench(*args: str) -> Result:
    return CliRunner().invoke(bench_app, ["nestful", "--split", "dev", *args])


def test_cli_writes_each_result_as_it_comes_and_resumes_and_shards(tmp_path: Path) -> None:
    samples = nestful.load_samples("dev", 4)

    def replay(*picked: int) -> str:
        path = tmp_path / f"replies-{'-'.join(map(str, picked))}.json"
        path.write_text(json.dumps(nestful.replay_script([samples[i] for i in picked])), encoding="utf-8")
        return f"replay:{path}"

    # An interrupted run left sample 0 (and a line cut off while writing): --resume asks only sample 1. The replay
    # file holds sample 1's plan alone, so asking sample 0 again would score it wrong.
    partial = tmp_path / "partial.jsonl"
    assert _bench("--model", replay(0), "--limit", "1", "--results", str(partial)).exit_code == 0
    partial.write_text(partial.read_text(encoding="utf-8") + '{"sample_id": "cut', encoding="utf-8")
    resumed = _bench("--model", replay(1), "--limit", "2", "--results", str(partial), "--resume", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert "resuming: 1 of 2 samples" in resumed.output
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["samples"] == 2 and summary["correct"] == 2
    assert [r.sample_id for r in nestful.read_results(partial)] == [s.sample_id for s in samples[:2]]

    # Two shards side by side, then one report over both files: nothing left to ask, so no model is loaded.
    for index, picked in ((0, (0, 2)), (1, (1, 3))):
        shard = _bench(
            "--model",
            replay(*picked),
            "-n",
            "4",
            "--shard",
            f"{index}/2",
            "--results",
            str(tmp_path / f"s{index}.jsonl"),
        )
        assert shard.exit_code == 0, shard.output
    merged = tmp_path / "merged.jsonl"
    merged.write_text("".join((tmp_path / f"s{i}.jsonl").read_text(encoding="utf-8") for i in (0, 1)), encoding="utf-8")
    report = _bench("--model", "replay:/no/such/file.json", "-n", "4", "--results", str(merged), "--resume", "--json")
    assert report.exit_code == 0, report.output
    summary = json.loads(report.stdout.strip().splitlines()[-1])
    assert summary["samples"] == 4 and summary["accuracy"] == 1.0
    assert summary["run_here"] == 0  # a report over earlier results: the machine field covers no sample


def test_a_resumed_run_killed_before_its_first_sample_keeps_the_earlier_lines(tmp_path: Path) -> None:
    """kill -9 while the resumed run waits for its model: the earlier run's results must all still be there (the
    file is rewritten before new samples are appended to it)."""
    samples = nestful.load_samples("dev", 3)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(nestful.replay_script(samples[:2])), encoding="utf-8")
    results = tmp_path / "results.jsonl"
    assert _bench("--model", f"replay:{replies}", "--limit", "2", "--results", str(results)).exit_code == 0
    before = results.read_text(encoding="utf-8")
    # A "model server" that accepts connections and never answers: the run is held at sample 3's first model call.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(120)
        port = server.getsockname()[1]
        command = [sys.executable, "-m", "benchmarks", "nestful", "--split", "dev", "--limit", "3"]
        command += ["--model", f"endpoint:http://127.0.0.1:{port}/v1", "--results", str(results), "--resume"]
        root = Path(__file__).resolve().parents[2]  # python -m benchmarks runs from the checkout's root
        run = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            connection, _ = server.accept()
            connection.close()
        finally:
            run.kill()
            run.wait(timeout=30)
    assert results.read_text(encoding="utf-8") == before
    assert [r.sample_id for r in nestful.read_results(results)] == [s.sample_id for s in samples[:2]]


def test_cli_model_profile_is_the_math_profiles_model_and_the_report_names_it(tmp_path: Path) -> None:
    samples = nestful.load_samples("dev", 1)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(nestful.replay_script(samples)), encoding="utf-8")
    results = tmp_path / "results.jsonl"
    assert _bench("--model", f"replay:{replies}", "--limit", "1", "--results", str(results)).exit_code == 0
    # Every sample is answered already: the report alone, no model loaded, named as the samples would have run.
    report = _bench("--model", "profile", "--limit", "1", "--results", str(results), "--resume", "--json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout.strip().splitlines()[-1])["model"] == "qwen2.5-coder-1.5b"


def test_cli_resume_and_shard_errors_say_what_was_expected(tmp_path: Path) -> None:
    assert "--resume needs --results FILE" in _bench("--model", "default", "--resume").output
    bad = _bench("--model", "default", "--shard", "2/2")
    assert bad.exit_code == 2 and "expected K/N with 0 <= K < N" in " ".join(bad.output.split())
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n{}\n", encoding="utf-8")
    broken = _bench("--model", "default", "--results", str(garbage), "--resume")
    # The error line wraps at the console's width, inside the file's path where the temporary folder is long.
    assert broken.exit_code == 2 and "garbage.jsonl:1:notaJSONline" in "".join(broken.output.split())


def test_cli_ids_ask_only_the_named_samples(tmp_path: Path) -> None:
    samples = nestful.load_samples("dev", 5)
    picked = [samples[3], samples[1]]  # asked in the data's order, whatever order the ids come in
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(nestful.replay_script([samples[1], samples[3]])), encoding="utf-8")
    listed = tmp_path / "ids.txt"
    listed.write_text("\n".join(s.sample_id for s in picked) + "\n", encoding="utf-8")
    for ids in (",".join(s.sample_id for s in picked), f"@{listed}"):
        run = _bench("--model", f"replay:{replies}", "--ids", ids, "--json")
        assert run.exit_code == 0, run.output
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        assert summary["samples"] == 2 and summary["correct"] == 2
    oracle = _bench("--oracle", "--ids", samples[0].sample_id, "--json")
    assert json.loads(oracle.stdout.strip().splitlines()[-1])["samples"] == 1


def test_cli_ids_errors_say_what_was_expected(tmp_path: Path) -> None:
    unknown = _bench("--model", "default", "--ids", "nope,also-nope")
    assert unknown.exit_code == 2 and "2 of 2 ids are not samples of the dev split" in " ".join(unknown.output.split())
    empty = _bench("--model", "default", "--ids", " , ")
    assert empty.exit_code == 2 and "names no sample" in empty.output
    missing = _bench("--model", "default", "--ids", f"@{tmp_path / 'none.txt'}")
    assert missing.exit_code == 2 and "cannot read the file" in " ".join(missing.output.split())


async def test_expression_plans_through_the_graph_with_repair_and_self_correction() -> None:
    # The planner writes arithmetic (Context.plan_format="expression"); the graph compiles it into calls of the
    # real math MCP server, hands a reply that is no expression back with the problem, and after a failed call
    # shows the planner its own expression (not JSON) with the error.
    from langchain_core.messages import AIMessage, HumanMessage

    from planwerk.core.expressions import plan_expression
    from planwerk.prompts.texts import ENGLISH

    samples = nestful.load_samples("dev", 2)
    gold = [plan_expression(nestful.gold_plan(sample.calls)) for sample in samples]
    values = [json.loads(nestful.replay_script([s], "{value}")[1]) for s in samples]
    script = [
        "I think the answer is 5.",  # no expression: back to the planner with the problem
        gold[0],
        f"The result is {values[0]}.",
        "1 / (7 - 7)",  # compiles and runs; the math server refuses to divide by 0: the verifier sends it back
        gold[1],
        f"The result is {values[1]}.",
    ]
    model = ReplayChatModel.of(script)
    report = await nestful.run_planner("dev", model, limit=2, plan_format="expression")
    assert model.calls == len(script)
    assert [r.correct for r in report.results] == [True, True]
    assert list(report.results[0].tools_called) == [c["name"] for c in samples[0].calls]
    first, repaired, _, second, corrected, _ = model.prompts
    system = str(first[0].content)
    assert "arithmetic expression" in system and f"{ENGLISH.operators_label} a + b" in system
    assert '"steps"' not in system  # no JSON anywhere: the examples are earlier turns, written as expressions
    example_question, example_reply = first[1:3]
    assert isinstance(example_question, HumanMessage) and isinstance(example_reply, AIMessage)
    assert str(example_question.content).startswith(ENGLISH.question_label)
    assert isinstance(ast.parse(str(example_reply.content), mode="eval").body, ast.BinOp | ast.Call)
    assert isinstance(repaired[-2], AIMessage) and repaired[-2].content == "I think the answer is 5."
    assert "as one arithmetic expression only" in str(repaired[-1].content)
    assert isinstance(corrected[-2], AIMessage) and corrected[-2].content == "1 / (7 - 7)"
    assert isinstance(corrected[-1], HumanMessage)
    assert str(corrected[-1].content).startswith("The calculation ran, but calls failed")
    assert "divide" in str(corrected[-1].content)
    assert second != first


class _GrammarRecordingReplay(ReplayChatModel):
    """A replay model that supports constrained decoding: it records each plan schema and grammar it is bound to."""

    schemas: list[dict[str, object]] = Field(default_factory=list)
    grammars: list[str] = Field(default_factory=list)

    def with_plan_schema(self, schema: dict[str, object]) -> ReplayChatModel:
        self.schemas.append(dict(schema))
        return self

    def with_plan_grammar(self, grammar: str) -> ReplayChatModel:
        self.grammars.append(grammar)
        return self


@pytest.mark.parametrize("plan_format", ["json", "expression"])
async def test_each_plan_format_is_decoded_under_its_own_grammar(plan_format: str) -> None:
    # The JSON schema bound to an expression planner would force JSON out of it, and the reverse.
    import xgrammar as xgr

    from planwerk.core.expressions import plan_expression

    sample = nestful.load_samples("dev", 1)[0]
    plan, answer = nestful.replay_script([sample], "The result is {value}.")
    reply = plan_expression(json.loads(plan)) if plan_format == "expression" else plan
    model = _GrammarRecordingReplay(responses=[reply, answer])
    report = await nestful.run_planner("dev", model, limit=1, plan_format=plan_format)  # type: ignore[arg-type]
    assert report.results[0].correct
    # One plan schema or grammar; the answer is plain text (answers by reference are off by default).
    assert (len(model.schemas), len(model.grammars)) == ((1, 0) if plan_format == "json" else (0, 1))
    if plan_format == "expression":
        # The grammar is the sample's: its tools are in it, and the gold plan written as an expression passes.
        grammar = xgr.Grammar.from_ebnf(model.grammars[0])
        assert xgr.testing._is_grammar_accept_string(grammar, reply)
        assert all(f'"{name}("' in model.grammars[0] for name in sample.tool_names)


async def test_a_json_plan_answered_to_an_expression_prompt_runs() -> None:
    # A served model trained on JSON tool plans may answer the expression protocol with one: it is still a plan.
    # A broken one gets the expression's problem back, not JSON's.
    sample = nestful.load_samples("dev", 1)[0]
    plan, answer = nestful.replay_script([sample], "The result is {value}.")
    broken = '{"steps": [oops'
    model = ReplayChatModel.of([broken, plan, answer])
    report = await nestful.run_planner("dev", model, limit=1, plan_format="expression")
    assert report.results[0].correct and report.results[0].plan_attempts == 2
    feedback = str(model.prompts[1][-1].content)
    assert "arithmetic expression" in feedback and "JSON" not in feedback


@pytest.mark.parametrize("plan_format", ["json", "expression"])
async def test_a_number_beyond_64_bits_in_a_plan_does_not_crash_the_run(plan_format: str) -> None:
    # Measured: "1 / 1 + 2 / 1 * 4000…0" (48 zeros) crashed the run when its state was checkpointed.
    huge = 4 * 10**48
    plan = json.dumps(
        {"steps": [{"tools": [{"id": "a", "name": "multiply", "arguments": {"arg_0": huge, "arg_1": 2}}]}]}
    )
    reply = plan if plan_format == "json" else f"{huge} * 2"
    model = ReplayChatModel.of([reply, "Eight.", "Eight."])  # answers the check refuses: the result is stated
    report = await nestful.run_planner("dev", model, limit=1, plan_format=plan_format)  # type: ignore[arg-type]
    assert report.results[0].error is None and report.results[0].predicted == pytest.approx(8e48)

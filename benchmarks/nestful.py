"""The NESTFUL benchmark (math subset): the engine on the gold call sequences, and the planner end to end.

Two runs, both through the bundled math MCP server over ONE persistent stdio session:

- **oracle** (:func:`run_oracle`): each sample's gold call sequence becomes a planwerk plan (:func:`gold_plan`)
  and runs through :func:`planwerk.execution.execute_plan`. The engine is correct when every gold answer comes
  out; the per-call wall times show what an MCP call costs on a persistent session.
- **planner** (:func:`run_planner`): the real graph (profile ``math``, no retrieval) gets the question and only
  that sample's tools; its plan runs and the last call's result is scored.

Scoring follows the official rules (:func:`matches`). The data (NESTFUL v2, Apache-2.0) ships in
``benchmarks/data/nestful`` with its NOTICE.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import statistics
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from planwerk.core.plan import Plan
from planwerk.core.scheduling import dependency_depth
from planwerk.core.tools import ToolError, ToolSpec
from planwerk.execution import CallRecord, ExecutionPolicy, execute_plan
from planwerk.graph.context import PlanFormatChoice
from planwerk.tools.base import ToolSource

Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
DATA = Path(__file__).parent / "data" / "nestful"
MATH_ONLY_CONFIG: dict[str, Any] = {
    "mcpServers": {
        "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30}
    }
}
"""The bundled math server alone (``${PYTHON}`` is this interpreter)."""
TODAY = "2026-01-15"
"""The date the planner's prompt calls today: fixed, so runs are reproducible."""

NO_CALLS = "the plan has no tool calls"
"""The error of a sample whose plan passed the check but calls no tool."""

_REF = re.compile(r"^\$(?P<label>[A-Za-z_]\w*)\.(?P<path>[\w.]+)\$$")
"""A reference in the gold data: the whole string ``"$var_1.result$"``."""


# --- data -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One benchmark question with its gold call sequence."""

    sample_id: str
    question: str
    calls: tuple[Mapping[str, Any], ...]
    """Gold calls: ``{"name", "label": "$var_1", "arguments": {"arg_0": ..., ...}}``."""
    tools: tuple[Mapping[str, Any], ...]
    """The tool specs the benchmark offers for this sample (name, description, parameters, output_parameters)."""
    gold_answer: Any
    gold_kind: Literal["json", "python_str"]

    @property
    def gold(self) -> Any:
        """The gold value: a ``python_str`` answer is ``str()`` of the value and is read back with literal_eval."""
        if self.gold_kind == "python_str":
            try:
                return ast.literal_eval(self.gold_answer)
            except (ValueError, SyntaxError):
                return self.gold_answer
        return self.gold_answer

    @property
    def tool_names(self) -> frozenset[str]:
        """Names of the tools offered for this sample."""
        return frozenset(str(tool["name"]) for tool in self.tools)


def data_path(split: str) -> Path:
    """The packaged JSONL file of ``split``; ``ValueError`` naming the splits otherwise."""
    if split not in SPLITS:
        raise ValueError(f"unknown NESTFUL split {split!r}; expected one of: {', '.join(SPLITS)}")
    return DATA / f"math_{split}.jsonl"


def load_samples(
    split: str, limit: int | None = None, *, path: Path | None = None, ids: frozenset[str] | None = None
) -> list[Sample]:
    """The first ``limit`` (all when ``None``) samples of ``split`` (or of the JSONL file ``path``); with ``ids``,
    only those samples (in the data's order; the limit counts them)."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of samples, got {limit}")
    source = path or data_path(split)
    samples = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            samples.append(
                Sample(
                    sample_id=str(raw["sample_id"]),
                    question=str(raw["input"]),
                    calls=tuple(raw["output"]),
                    tools=tuple(raw["tools"]),
                    gold_answer=raw["gold_answer"],
                    gold_kind=raw.get("gold_answer_kind", "json"),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(
                f"{source}:{number}: not a NESTFUL record ({error}); expected JSON with sample_id, input, output, "
                "tools, gold_answer"
            ) from None
        if ids is not None and samples[-1].sample_id not in ids:
            samples.pop()
        if limit is not None and len(samples) >= limit:
            break
    return samples


# --- pure conversion and scoring --------------------------------------------------------------------------------


def parse_ids(text: str, split: str) -> frozenset[str]:
    """Sample ids from ``--ids``: comma-separated, or ``@FILE`` with one per line; ``ValueError`` naming what is
    wrong (an unreadable file, no ids, ids that are not in ``split``)."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).expanduser().read_text(encoding="utf-8").replace("\n", ",")
        except OSError as error:
            raise ValueError(f"--ids {text}: cannot read the file ({error.strerror or error})") from None
    ids = frozenset(part.strip() for part in text.split(",") if part.strip())
    if not ids:
        raise ValueError("--ids names no sample; expected ids separated by commas or @FILE with one per line")
    unknown = ids - {sample.sample_id for sample in load_samples(split)}
    if unknown:
        shown = ", ".join(sorted(unknown)[:3]) + (" …" if len(unknown) > 3 else "")
        raise ValueError(f"--ids: {len(unknown)} of {len(ids)} ids are not samples of the {split} split: {shown}")
    return ids


def label_id(label: str) -> str:
    """``"$var_1"`` → ``"var_1"``."""
    return label[1:] if label.startswith("$") else label


def convert_value(value: Any) -> Any:
    """A gold argument as a plan argument: ``"$var_1.result$"`` → ``{"$ref": "var_1.result"}``, recursively."""
    if isinstance(value, str) and (match := _REF.match(value)):
        return {"$ref": f"{match['label']}.{match['path']}"}
    if isinstance(value, list):
        return [convert_value(item) for item in value]
    if isinstance(value, dict):
        return {key: convert_value(item) for key, item in value.items()}
    return value


def gold_plan(calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A gold call sequence as a plan: one step per dependency depth, calls in their gold order within a step."""
    planned = [
        {"id": label_id(str(call["label"])), "name": call["name"], "arguments": convert_value(call["arguments"])}
        for call in calls
    ]
    flat = Plan.model_validate({"steps": [{"description": "", "tools": planned}], "final": None})
    depth = dependency_depth(flat)
    levels = max(depth.values(), default=-1) + 1
    steps = [
        {
            "description": f"Ebene {level + 1}: " + ", ".join(c["name"] for c in planned if depth[c["id"]] == level),
            "tools": [c for c in planned if depth[c["id"]] == level],
        }
        for level in range(levels)
    ]
    return {"steps": steps, "final": None}


def nesting_depth(calls: Sequence[Mapping[str, Any]]) -> int:
    """Length of the longest chain of dependent calls (1 = no call needs another)."""
    return len(gold_plan(calls)["steps"])


def _decimals(gold: float | str) -> int:
    try:
        exponent = Decimal(str(gold)).as_tuple().exponent
    except InvalidOperation:
        return 0
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def single_output(result: Any) -> Any:
    """A tool's single output: ``{"result": x}`` → ``x``; anything else unchanged."""
    if isinstance(result, Mapping) and len(result) == 1:
        return next(iter(result.values()))
    return result


def matches(predicted: Any, sample: Sample) -> bool:
    """The official scoring: both floats → the prediction rounded to the gold's decimals; a tuple counts as a list."""
    gold = sample.gold
    if isinstance(predicted, tuple):
        predicted = list(predicted)
    if isinstance(gold, tuple):
        gold = list(gold)
    if isinstance(predicted, float) and isinstance(gold, float):
        shown = sample.gold_answer if sample.gold_kind == "python_str" else repr(gold)
        return round(predicted, _decimals(shown)) == gold
    return bool(predicted == gold)


def last_result(
    plan: Mapping[str, Any] | None, calls: Sequence[CallRecord], last_id: str | None = None
) -> tuple[Any, str | None]:
    """The single output of call ``last_id`` (default: the plan's last call), by its latest record; or
    ``(None, why not)``."""
    if not plan:
        return None, "no plan passed the check"
    ids = [call.id for _, call in Plan.model_validate(plan).calls()]
    if not ids:
        return None, NO_CALLS
    last_id = last_id or ids[-1]
    latest = {record["id"]: record for record in calls}
    record = latest.get(last_id)
    if record is None:
        return None, f"the last call {last_id} did not run"
    if record["status"] != "ok":
        return None, f"the last call {last_id} failed: {record['error']}"
    return single_output(record["result"]), None


# --- tools ------------------------------------------------------------------------------------------------------


class SubsetToolSource:
    """A view of a tool source that offers only ``names`` (a sample's tools), over the same sessions."""

    def __init__(self, base: ToolSource, names: frozenset[str] | set[str]):
        missing = sorted(set(names) - set(base.specs))
        if missing:
            raise ValueError(f"the tool source lacks tool(s) {', '.join(missing)}; it offers {len(base.specs)} tools")
        self._base = base
        self._specs = {name: spec for name, spec in base.specs.items() if name in names}

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """Only the offered tools."""
        return self._specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call ``name`` if it is offered; otherwise a ToolError naming the offered tools."""
        if name not in self._specs:
            offered = ", ".join(sorted(self._specs))
            raise ToolError(
                f"tool {name!r} is not offered here; offered: {offered}", tool=name, kind="invalid_arguments"
            )
        return await self._base.call(name, arguments)


class InProcessMathTools:
    """The math functions called in-process (no MCP): the baseline that isolates the MCP cost per call."""

    def __init__(self) -> None:
        from planwerk.tools.servers.math import TOOLS

        self._arity = {tool.name: len(tool.params) for tool in TOOLS}
        self._specs = {tool.name: ToolSpec(tool.name, tool.description, server="in-process") for tool in TOOLS}

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """Every math function."""
        return self._specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """``{"result": value}`` as the MCP server gives it; ToolError for a bad call."""
        from planwerk.tools.servers.math import call

        try:
            return {"result": call(name, *(arguments[f"arg_{i}"] for i in range(self._arity[name])))}
        except (KeyError, ValueError, TypeError, ArithmeticError) as error:
            raise ToolError(f"{name} failed: {error}", tool=name, server="in-process") from None


# --- results ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleResult:
    """What one sample produced."""

    sample_id: str
    depth: int
    """Nesting depth of the gold sequence."""
    correct: bool
    predicted: Any
    gold: Any
    error: str | None = None
    valid_plan: bool = True
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    plan_attempts: int = 0
    call_seconds: tuple[float, ...] = ()
    """Wall time of every tool call of the sample."""
    wall_s: float = 0.0
    tools_called: tuple[str, ...] = ()
    """The tools the final plan called, in order (the gold sequence's length and names are the comparison)."""
    problems: tuple[str, ...] = ()
    """Why the last reply or plan was rejected, or which calls failed (the graph's ``plan_errors``), so a long
    run's results file says why plans fail, not only that they did."""


@dataclass(frozen=True)
class Report:
    """A whole run: the figures people and programs read."""

    benchmark: str
    split: str
    mode: Literal["oracle", "planner"]
    model: str | None
    results: tuple[SampleResult, ...]
    wall_s: float
    setup_s: float = 0.0
    """Opening the MCP session (and loading the model)."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def samples(self) -> int:
        """How many samples ran."""
        return len(self.results)

    @property
    def correct(self) -> int:
        """How many were scored correct."""
        return sum(r.correct for r in self.results)

    def summary(self) -> dict[str, Any]:
        """The figures as one JSON-able object."""
        seconds = sorted(s for r in self.results for s in r.call_seconds)
        n = max(self.samples, 1)
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "split": self.split,
            "mode": self.mode,
            "model": self.model,
            "samples": self.samples,
            "correct": self.correct,
            "accuracy": round(self.correct / n, 4),
            "tool_calls": len(seconds),
            "per_call_ms": _percentiles(seconds),
            "wall_s": round(self.wall_s, 3),
            "setup_s": round(self.setup_s, 3),
            "by_depth": {
                str(depth): {"samples": len(group), "correct": sum(r.correct for r in group)}
                for depth, group in sorted(_by_depth(self.results).items())
            },
            "failures": [
                {"sample_id": r.sample_id, "gold": r.gold, "predicted": r.predicted, "error": r.error}
                for r in self.results
                if not r.correct
            ],
        }
        if self.mode == "planner":
            out |= {
                "valid_plans": sum(r.valid_plan for r in self.results),
                # valid, but the model answered without any call: nothing to score (counted in valid_plans)
                "plans_without_calls": sum(r.valid_plan and r.error == NO_CALLS for r in self.results),
                "plan_validity": round(sum(r.valid_plan for r in self.results) / n, 4),
                "llm_calls_per_sample": round(sum(r.llm_calls for r in self.results) / n, 3),
                "prompt_tokens_per_sample": round(sum(r.prompt_tokens for r in self.results) / n, 1),
                "completion_tokens_per_sample": round(sum(r.completion_tokens for r in self.results) / n, 1),
                "plan_attempts_per_sample": round(sum(r.plan_attempts for r in self.results) / n, 3),
                "seconds_per_sample": round(sum(r.wall_s for r in self.results) / n, 3),
            }
        return out | dict(self.extra)


def _by_depth(results: Sequence[SampleResult]) -> dict[int, list[SampleResult]]:
    groups: dict[int, list[SampleResult]] = {}
    for result in results:
        groups.setdefault(result.depth, []).append(result)
    return groups


def _percentiles(seconds: Sequence[float]) -> dict[str, float] | None:
    if not seconds:
        return None
    ms = sorted(s * 1000 for s in seconds)
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[18] if len(ms) > 1 else ms[0]
    return {
        "mean": round(statistics.fmean(ms), 3),
        "p50": round(statistics.median(ms), 3),
        "p95": round(p95, 3),
        "max": round(ms[-1], 3),
    }


# --- runs -------------------------------------------------------------------------------------------------------

Tick = Callable[[SampleResult], None]


async def oracle_sample(sample: Sample, tools: ToolSource, *, timeout_s: float = 30.0) -> SampleResult:
    """Run ``sample``'s gold sequence as a plan through the engine and score the last result."""
    plan = gold_plan(sample.calls)
    started = time.perf_counter()
    records = await execute_plan(plan, tools, policy=ExecutionPolicy(timeout_s=timeout_s))
    wall = time.perf_counter() - started
    # The answer is the last GOLD call's output (steps group calls by depth, so it may sit in an earlier step).
    predicted, error = last_result(plan, list(records.values()), label_id(str(sample.calls[-1]["label"])))
    return SampleResult(
        sample_id=sample.sample_id,
        depth=len(plan["steps"]),
        correct=error is None and matches(predicted, sample),
        predicted=predicted,
        gold=sample.gold,
        error=error,
        call_seconds=tuple(r["duration_s"] for r in records.values() if r["status"] != "skipped"),
        wall_s=round(wall, 4),
    )


async def run_oracle(
    split: str,
    *,
    limit: int | None = None,
    config: Mapping[str, Any] | str | Path | None = None,
    tick: Tick | None = None,
    ids: frozenset[str] | None = None,
) -> Report:
    """Every gold sequence of ``split`` (or of the samples ``ids`` names) through ``execute_plan`` on one
    persistent session of the math server."""
    from planwerk.tools.mcp import open_tools

    samples = load_samples(split, limit, ids=ids)
    started = time.perf_counter()
    async with open_tools(config or MATH_ONLY_CONFIG) as tools:
        _require_tools(tools, samples)
        setup = time.perf_counter() - started
        results = []
        for sample in samples:
            result = await oracle_sample(sample, tools)
            results.append(result)
            if tick:
                tick(result)
    wall = time.perf_counter() - started
    # Baseline in the same run: the same plans through the same engine with in-process tools (no MCP).
    local = InProcessMathTools()
    baseline_started = time.perf_counter()
    baseline = [await oracle_sample(sample, local) for sample in samples]
    baseline_wall = time.perf_counter() - baseline_started
    seconds = [s for r in baseline for s in r.call_seconds]
    extra = {
        "baseline_in_process": {
            "correct": sum(r.correct for r in baseline),
            "per_call_ms": _percentiles(seconds),
            "wall_s": round(baseline_wall, 3),
        }
    }
    return Report("nestful", split, "oracle", None, tuple(results), wall, setup, extra)


def _require_tools(tools: ToolSource, samples: Sequence[Sample]) -> None:
    needed = set().union(*(s.tool_names for s in samples)) if samples else set()
    missing = sorted(needed - set(tools.specs))
    if missing:
        unavailable = getattr(tools, "unavailable", {})
        why = f" (unavailable servers: {dict(unavailable)})" if unavailable else ""
        raise RuntimeError(f"the MCP tools lack {', '.join(missing)}{why}; is the math server configured?")


def math_model_spec(spec: str) -> str:
    """``spec``, or the math profile's model for ``profile``: what the samples run with and the report names."""
    from planwerk.graph.context import Context
    from planwerk.graph.run_context import model_spec_of

    return model_spec_of(Context(profile="math", model=spec))


def chat_model_for(spec: str) -> BaseChatModel:
    """The model ``spec`` names; a ``replay:`` spec gets a fresh replay model (the process cache would share
    its position between runs)."""
    if spec.startswith("replay:"):
        from planwerk.models.replay import ReplayChatModel

        return ReplayChatModel.from_file(Path(spec.removeprefix("replay:")).expanduser())
    from planwerk.models.specs import load_chat_model

    return load_chat_model(spec)


async def planner_sample(
    sample: Sample,
    tools: ToolSource,
    model: BaseChatModel,
    *,
    max_plan_attempts: int = 3,
    plan_samples: int = 1,
    plan_format: PlanFormatChoice = "profile",
) -> SampleResult:
    """Ask the real graph (profile ``math``, no retrieval) ``sample``'s question with only the sample's tools;
    ``plan_samples`` > 1 switches self-consistency on (the voted result is the prediction); ``plan_format`` is the
    run's ``Context.plan_format``."""
    from planwerk.agent import Agent
    from planwerk.core.vote import vote
    from planwerk.graph.context import Context

    context = Context(
        profile="math",
        today=TODAY,
        max_plan_attempts=max_plan_attempts,
        plan_samples=plan_samples,
        plan_format=plan_format,
    )
    subset = SubsetToolSource(tools, sample.tool_names)
    thread = uuid.uuid4().hex
    started = time.perf_counter()
    async with Agent(model=model, profile="math", tools=subset, retriever=False, context=context) as agent:
        reply = await agent.ask(sample.question, thread_id=thread)
        state = await agent.state(thread)
    wall = time.perf_counter() - started
    calls: list[CallRecord] = list(state.get("calls", []))
    plan = state.get("plan")
    predicted, error = last_result(plan, calls)
    if candidates := state.get("candidates"):
        outcome = vote(candidates, calls)
        predicted, error = (outcome.value, None) if outcome.winner else (None, "no sampled plan ran cleanly")
    meta = reply.metadata
    return SampleResult(
        sample_id=sample.sample_id,
        depth=nesting_depth(sample.calls),
        correct=error is None and matches(predicted, sample),
        predicted=predicted,
        gold=sample.gold,
        error=error,
        valid_plan=plan is not None,
        llm_calls=int(meta.get("llm_calls", 0)),
        prompt_tokens=int(meta.get("prompt_tokens", 0)),
        completion_tokens=int(meta.get("completion_tokens", 0)),
        plan_attempts=int(meta.get("plan_attempts", 0)),
        call_seconds=tuple(r["duration_s"] for r in calls if r["status"] != "skipped"),
        wall_s=round(wall, 3),
        tools_called=tuple(r["tool"] for r in calls if r["status"] != "skipped"),
        problems=tuple(state.get("plan_errors") or ()),
    )


async def run_planner(
    split: str,
    model: str | BaseChatModel,
    *,
    limit: int | None = None,
    config: Mapping[str, Any] | str | Path | None = None,
    tick: Tick | None = None,
    plan_samples: int = 1,
    done: Sequence[SampleResult] = (),
    shard: Shard | None = None,
    ids: frozenset[str] | None = None,
    plan_format: PlanFormatChoice = "profile",
) -> Report:
    """The planner on ``split``: plan, execute, score; model calls and tokens per sample (``plan_samples``: see
    :func:`planner_sample`).

    ``done`` holds results of an earlier, interrupted run (:func:`read_results`): those samples are not asked again
    and count in the report as they are. ``shard`` runs only every N-th sample (processes side by side); ``tick``
    sees every new result as it comes, so a caller can write it down at once; ``ids`` asks only those samples.
    """
    from planwerk.tools.mcp import open_tools

    samples = load_samples(split, limit, ids=ids)
    samples = shard.select(samples) if shard else samples
    wanted = {sample.sample_id for sample in samples}
    finished = {result.sample_id: result for result in done if result.sample_id in wanted}
    todo = [sample for sample in samples if sample.sample_id not in finished]
    started = time.perf_counter()
    if isinstance(model, str):
        model = math_model_spec(model)
    spec = model if isinstance(model, str) else type(model).__name__
    if not todo:  # all answered already: the report alone, without loading the model
        return Report("nestful", split, "planner", spec, _in_order(samples, finished), 0.0, 0.0)
    chat_model = await asyncio.to_thread(chat_model_for, model) if isinstance(model, str) else model
    async with open_tools(config or MATH_ONLY_CONFIG) as tools:
        _require_tools(tools, todo)
        setup = time.perf_counter() - started
        for sample in todo:
            try:
                result = await planner_sample(
                    sample, tools, chat_model, plan_samples=plan_samples, plan_format=plan_format
                )
            except Exception as error:  # one sample's crash (model, graph) is a wrong answer, not the end of the run
                result = SampleResult(
                    sample.sample_id,
                    nesting_depth(sample.calls),
                    False,
                    None,
                    sample.gold,
                    error=f"run failed: {type(error).__name__}: {error}",
                    valid_plan=False,
                )
            finished[sample.sample_id] = result
            if tick:
                tick(result)
    results = _in_order(samples, finished)
    return Report("nestful", split, "planner", spec, results, time.perf_counter() - started, setup)


def _in_order(samples: Sequence[Sample], results: Mapping[str, SampleResult]) -> tuple[SampleResult, ...]:
    return tuple(results[sample.sample_id] for sample in samples)


@dataclass(frozen=True)
class Shard:
    """Every ``count``-th sample starting at ``index`` (0-based): ``Shard(0, 2)`` and ``Shard(1, 2)`` split a
    split between two processes."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not (self.count >= 1 and 0 <= self.index < self.count):
            raise ValueError(f"shard {self.index}/{self.count}: expected K/N with 0 <= K < N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` (``--shard 0/2``)."""
        index, _, count = text.partition("/")
        try:
            return cls(int(index), int(count))
        except ValueError:
            raise ValueError(f"shard {text!r}: expected K/N with 0 <= K < N (0/2 and 1/2: two processes)") from None

    def select(self, samples: Sequence[Sample]) -> list[Sample]:
        """This shard's samples, in order."""
        return [sample for i, sample in enumerate(samples) if i % self.count == self.index]


def replay_script(samples: Sequence[Sample], answer: str = "The result is {value}.") -> list[str]:
    """Replies that a perfect planner would give (each gold plan, then an answer in the questions' language, English):
    a replay file for demos and tests."""
    from planwerk.tools.servers.math import call as math_call

    script = []
    for sample in samples:
        plan = gold_plan(sample.calls)
        results: dict[str, Any] = {}
        for call in sample.calls:
            args = [
                results[label_id(match["label"])] if isinstance(v, str) and (match := _REF.match(v)) else v
                for _, v in sorted(call["arguments"].items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
            ]
            results[label_id(str(call["label"]))] = math_call(call["name"], *args)
        value = results[label_id(str(sample.calls[-1]["label"]))]
        script += [json.dumps(plan, ensure_ascii=False), answer.format(value=value)]
    return script


def report_json(report: Report) -> str:
    """The summary as one JSON line."""
    return json.dumps(report.summary(), ensure_ascii=False, default=str)


def result_json(result: SampleResult) -> dict[str, Any]:
    """One sample's result, JSON-able (one line of ``--results``)."""
    return asdict(result)


def read_results(path: Path) -> list[SampleResult]:
    """The results a ``--results`` file holds (several files may be concatenated; a later line for the same
    sample wins). A line cut off by a killed run is skipped; any other bad line is an error naming it."""
    results: dict[str, SampleResult] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # the last line of a run killed while writing
                continue
            raise ValueError(f"{path}:{number}: not a JSON line of a --results file") from None
        try:
            for key in ("call_seconds", "tools_called", "problems"):  # JSON lists back to the dataclass's tuples
                row[key] = tuple(row.get(key, ()))
            result = SampleResult(**row)
        except TypeError as error:
            raise ValueError(f"{path}:{number}: not a sample result ({error})") from None
        results[result.sample_id] = result
    return list(results.values())

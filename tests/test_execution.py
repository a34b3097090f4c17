"""The plain executor: steps as barriers, concurrency within a step, timeouts, failures recorded with their kind."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace

from planwerk.core.plan import Plan
from planwerk.core.scheduling import call_dependencies, dependency_depth
from planwerk.core.tools import ToolSpec
from planwerk.execution import ExecutionPolicy, clip_result, execute_plan
from planwerk.tools.base import FunctionToolSource

STARTED: dict[str, float] = {}


def make_tools() -> FunctionToolSource:
    async def wait(name: str, seconds: float, value: float = 0) -> dict:
        STARTED[name] = time.perf_counter()
        await asyncio.sleep(seconds)
        return {"value": value, "name": name}

    async def boom(reason: str) -> dict:
        raise RuntimeError(reason)

    return FunctionToolSource([wait, boom])


def call(call_id: str, seconds: float, **extra: object) -> dict:
    return {"id": call_id, "name": "wait", "arguments": {"name": call_id, "seconds": seconds, **extra}}


async def test_a_step_starts_only_when_every_call_of_the_steps_before_has_finished() -> None:
    # c needs only a (fast), and d references nothing: both still wait for b (slow), because b is in step 0.
    plan = Plan.model_validate(
        {
            "steps": [
                {"tools": [call("a", 0.05), call("b", 0.5)]},
                {"tools": [call("c", 0.05, value={"$ref": "a.value"}), call("d", 0.05)]},
            ]
        }
    )
    start = time.perf_counter()
    records = await execute_plan(plan, make_tools())
    assert [r["status"] for r in records.values()] == ["ok", "ok", "ok", "ok"]
    assert STARTED["c"] - start >= 0.5 and STARTED["d"] - start >= 0.5
    assert [r["step"] for r in records.values()] == [0, 0, 1, 1]


async def test_independent_calls_run_concurrently() -> None:
    plan = Plan.model_validate({"steps": [{"tools": [call(f"c{i}", 0.3) for i in range(5)]}]})
    start = time.perf_counter()
    await execute_plan(plan, make_tools())
    assert time.perf_counter() - start < 1.0  # serial would be 1.5 s


async def test_timeouts_and_failures_are_recorded_and_dependants_skipped() -> None:
    plan = Plan.model_validate(
        {
            "steps": [
                {
                    "tools": [
                        call("slow", 5),
                        {"id": "bad", "name": "boom", "arguments": {"reason": "kaputt"}},
                        call("ok", 0),
                    ]
                },
                {
                    "tools": [
                        call("after", 0, value={"$ref": "slow.value"}),
                        call("fine", 0, value={"$ref": "ok.value"}),
                    ]
                },
            ]
        }
    )
    events: list[dict] = []
    start = time.perf_counter()
    records = await execute_plan(plan, make_tools(), policy=ExecutionPolicy(timeout_s=0.2), emit=events.append)
    assert time.perf_counter() - start < 2
    assert records["slow"]["error"] == "wait timed out after 0.2 s" and records["slow"]["kind"] == "timeout"
    assert records["bad"]["error"] == "boom failed: RuntimeError: kaputt" and records["bad"]["kind"] == "error"
    assert records["after"]["status"] == "skipped" and "slow" in records["after"]["error"]
    assert records["after"]["kind"] == "skipped" and records["fine"]["kind"] is None
    assert records["fine"]["status"] == "ok"
    kinds = [(e["event"], e["id"]) for e in events]
    assert ("tool_error", "slow") in kinds and ("tool_result", "fine") in kinds


async def test_bad_reference_at_run_time_is_an_error_record() -> None:
    plan = Plan.model_validate(
        {"steps": [{"tools": [call("a", 0)]}, {"tools": [call("b", 0, value={"$ref": "a.missing"})]}]}
    )
    records = await execute_plan(plan, make_tools())
    assert "no key 'missing' in a" in records["b"]["error"] and records["b"]["kind"] == "ref"


def test_dependencies_and_depth() -> None:
    plan = Plan.model_validate(
        {
            "steps": [
                {"tools": [call("a", 0)]},
                {"tools": [call("b", 0, value={"$ref": "a.value"})]},
                {"tools": [call("c", 0, value={"$ref": "b.value"}, name={"$ref": "a.name"})]},
            ]
        }
    )
    assert call_dependencies(plan) == {"a": frozenset(), "b": frozenset({"a"}), "c": frozenset({"a", "b"})}
    assert dependency_depth(plan) == {"a": 0, "b": 1, "c": 2}


def test_large_results_are_truncated_with_a_note() -> None:
    clipped = clip_result({"data": "x" * 1000}, 100)
    assert clipped["truncated"] is True and "truncated to 100" in clipped["note"]
    assert clip_result({"a": 1}, 100) == {"a": 1}


async def test_results_of_any_tool_source_are_sanitized_so_they_always_checkpoint() -> None:
    """Not only MCP results: an in-process tool's 300-deep result and lone surrogate are cleaned in ``call_one``."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from planwerk.core.scheduling import ReadyCall
    from planwerk.execution import call_one

    async def poison() -> dict:
        """A result msgpack cannot write: too deep, and a lone surrogate."""
        deep: dict = {"text": "a\ud800b"}
        for _ in range(300):
            deep = {"inner": deep}
        return deep

    record = await call_one(FunctionToolSource([poison]), ReadyCall("p", "poison", 0, {}), ExecutionPolicy())
    assert record["status"] == "ok"
    JsonPlusSerializer().dumps_typed(record["result"])  # what a checkpoint write does; raised before
    assert "\ud800" not in str(record["result"])


class OwnTimeouts(FunctionToolSource):
    """Tools whose source names a timeout per tool, as an MCP server's configured ``timeout`` does."""

    def __init__(self, timeouts: dict[str, float]) -> None:
        super().__init__(list(make_tools()._functions.values()))
        self._own = {name: replace(spec, timeout_s=timeouts.get(name)) for name, spec in super().specs.items()}

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        return self._own


async def test_without_a_policy_timeout_each_tool_gets_its_sources_own() -> None:
    """A server configured for 0.2 s is cut at 0.2 s, not at the default 30 s; a run's override wins over it."""
    plan = Plan.model_validate({"steps": [{"tools": [call("slow", 5)]}]})
    start = time.perf_counter()
    records = await execute_plan(plan, OwnTimeouts({"wait": 0.2}))
    assert records["slow"]["error"] == "wait timed out after 0.2 s" and time.perf_counter() - start < 2
    records = await execute_plan(plan, OwnTimeouts({"wait": 0.2}), policy=ExecutionPolicy(timeout_s=0.3))
    assert records["slow"]["error"] == "wait timed out after 0.3 s"
    quick = Plan.model_validate({"steps": [{"tools": [call("quick", 0.3)]}]})
    assert (await execute_plan(quick, OwnTimeouts({"wait": 5})))["quick"]["status"] == "ok"

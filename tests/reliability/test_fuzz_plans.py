"""Model output fuzzing: generated and mutated planner replies through parse → check → resolve → render.

Every case must end in a runnable plan or a precise error (PlanParseError, a list of problems, RefError), never in
another exception and never in a hang (each case runs under a wall-clock alarm). The strategies and the pipeline
are :mod:`benchmarks.fuzz`'s (the benchmark runs them at 10,000 cases); here they run at CI size, derandomized,
and a violation fails the test (``strict``) so hypothesis shrinks it. Sources: valid plans generated from the real
math server's and the travel tools' schemas, the recorded Llama 3.1 outputs, the replay fixtures and the packaged
example plans, each mutated, plus arbitrary JSON and arbitrary text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.fuzz import (
    CASE_LIMIT_S,
    SERVERS,
    Figures,
    Pipeline,
    json_replies,
    load_specs,
    mutated_replies,
    packaged_seed_texts,
    text_replies,
    valid_plans,
)
from planwerk.core.parsing import parse_plan
from planwerk.core.tools import ToolSpec
from tests.conftest import FIXTURES
from tests.graph.tools import travel_tools

MATH_CONFIG = {"mcpServers": {"math": {**SERVERS["mcpServers"]["math"], "timeout": 30}}}
FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SPECS: dict[str, ToolSpec] = {}
"""Filled once by the :func:`specs` fixture; the strategies and the pipeline read it per case."""
FIGURES = Figures()
PIPELINE = Pipeline(SPECS, FIGURES)


def _recorded_replies() -> list[str]:
    """The recorded Llama 3.1 outputs and the replay fixture's replies."""
    texts = [
        json.loads(path.read_text(encoding="utf-8"))["raw"]
        for path in sorted((FIXTURES / "llama31-outputs").glob("*.json"))
    ]
    return texts + list(json.loads((FIXTURES / "replay" / "barcelona_weather.json").read_text("utf-8")))


SEEDS = _recorded_replies() + packaged_seed_texts()


@pytest.fixture(scope="module", autouse=True)
def specs() -> dict[str, ToolSpec]:
    """The real math server's schemas plus the travel tools' (geocode, get_weather), loaded once."""
    if not SPECS:
        math = asyncio.run(load_specs(MATH_CONFIG))
        assert "add" in math, "the math MCP server did not start"
        SPECS.update({**math, **travel_tools().specs})
    return SPECS


@settings(FUZZ, max_examples=400)
@given(plan=valid_plans(SPECS))
def test_generated_valid_plans_parse_check_and_resolve(plan: dict[str, Any]) -> None:
    assert PIPELINE.run(json.dumps(plan), "valid", strict=True) == "ok"
    assert parse_plan(json.dumps(plan)).model_dump()["steps"][0]["tools"][0]["id"] == "c1"


@settings(FUZZ, max_examples=1800)
@given(text=mutated_replies(SPECS, SEEDS))
def test_mutated_replies_end_in_a_plan_or_a_precise_error(text: str) -> None:
    PIPELINE.run(text, "mutated", strict=True)


@settings(FUZZ, max_examples=700)
@given(text=json_replies())
def test_arbitrary_json_ends_in_a_plan_or_a_precise_error(text: str) -> None:
    PIPELINE.run(text, "json", strict=True)


@settings(FUZZ, max_examples=400)
@given(text=text_replies())
def test_arbitrary_text_ends_in_a_plan_or_a_precise_error(text: str) -> None:
    PIPELINE.run(text, "text", strict=True)


@pytest.mark.fuzz  # it reads what the fuzz tests of this module counted, so it runs in their tier
def test_fuzz_summary(figures: Any) -> None:
    """Runs last in this module: every case was classified, and no case came near the time bound."""
    outcomes = FIGURES.outcomes
    total = sum(outcomes.values())
    figures.record(
        "fuzz", cases=total, slowest_case_s=round(FIGURES.slowest_case_s, 3), unhandled=FIGURES.failures, **outcomes
    )
    assert total >= 3000 and FIGURES.failures == 0
    assert outcomes["ok"] >= 400 and outcomes["parse_error"] and outcomes["rejected"] and outcomes["ref_error"]
    assert FIGURES.slowest_case_s < CASE_LIMIT_S

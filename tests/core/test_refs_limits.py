"""Resolved arguments are capped like results: many references to a large result fail with a clear RefError."""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from planwerk.core.calls import CallRecord
from planwerk.core.plan import Plan
from planwerk.core.refs import ArgumentLimits, ArgumentsTooLarge, RefError, json_size, resolve_arguments
from planwerk.core.scheduling import resolve_step

BIG = {"data": "x" * 150_000}


@pytest.mark.parametrize("stored", ["object", "json text"])
def test_3000_refs_to_a_150_kb_result_fail_early_in_bounded_memory(stored: str) -> None:
    results = {"big": BIG if stored == "object" else json.dumps(BIG)}
    arguments = {"items": [{"$ref": "big.data"} for _ in range(3000)]}
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(ArgumentsTooLarge) as caught:
        resolve_arguments(arguments, results, {})
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    message = str(caught.value)
    assert message.startswith("$ref 'big.data': ")
    assert "over the limit of 1,000,000 bytes" in message and "150,002 bytes" in message
    assert isinstance(caught.value, RefError) and caught.value.limit == 1_000_000
    assert peak < 2_000_000 and seconds < 1.0  # one parse of the text at most, no 450 MB


def test_distinct_paths_into_a_json_text_result_parse_it_once() -> None:
    results = {"big": json.dumps({"data": ["y" * 50] * 3000})}
    arguments = {"items": [{"$ref": f"big.data.{i}"} for i in range(3000)]}
    started = time.perf_counter()
    resolved = resolve_arguments(arguments, results, {})
    assert len(resolved["items"]) == 3000 and time.perf_counter() - started < 2.0


def test_the_limit_is_configurable_and_literals_count() -> None:
    results = {"r": {"text": "z" * 1000}}
    arguments = {"a": {"$ref": "r.text"}, "b": {"$ref": "r.text"}}
    assert resolve_arguments(arguments, results, {}, ArgumentLimits(max_bytes=2100))["a"] == "z" * 1000
    with pytest.raises(ArgumentsTooLarge, match="over the limit of 2,000 bytes"):
        resolve_arguments(arguments, results, {}, ArgumentLimits(max_bytes=2000))
    with pytest.raises(ArgumentsTooLarge):
        resolve_arguments({"x": {"$ref": "r.text"}, "pad": "p" * 500}, results, {}, ArgumentLimits(max_bytes=1200))


def test_resolve_step_records_an_oversized_call_as_a_ref_failure() -> None:
    plan = Plan.model_validate(
        {
            "steps": [
                {
                    "description": "",
                    "tools": [{"id": "c", "name": "count", "arguments": {"items": [{"$ref": "big.data"}] * 10}}],
                }
            ]
        }
    )
    records: list[CallRecord] = []
    ready, failed = resolve_step(plan, 0, records=records, results={"big": BIG}, user={})
    assert not ready and failed[0]["kind"] == "ref" and "1,000,000" in (failed[0]["error"] or "")


def test_resolved_arguments_lose_lone_surrogates_from_json_text_results() -> None:
    results = {"l": json.dumps({"text": "a\ud800b"})}
    assert resolve_arguments({"t": {"$ref": "l.text"}}, results, {}) == {"t": "a\ufffdb"}


def test_json_size_estimate_is_close_and_stops_at_the_cap() -> None:
    value = {"a": [1, 2.5, None, True, "text"], "b": {"c": "ü" * 10}}
    exact = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    assert exact <= json_size(value, 10_000) <= exact + 30  # colons and commas are over-counted a little
    assert json_size(["x" * 100] * 1_000_000, 1000) > 1000  # over the cap, without walking a million strings

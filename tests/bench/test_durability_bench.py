"""The durability benchmark runs at a tiny size and reports both modes on SQLite."""

from __future__ import annotations

from benchmarks.durability import measure


async def test_durability_bench_reports_both_modes() -> None:
    row = await measure("sqlite", None, steps=2, repeats=1)
    assert set(row["median_ms"]) == {"async", "sync"}
    assert row["saver"] == "sqlite" and row["steps"] == 2
    assert isinstance(row["sync_cost_per_step_ms"], float)

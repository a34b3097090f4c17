"""The overhead benchmark's figures and table (the measuring itself runs as ``python -m``, not in tests)."""

from __future__ import annotations

from rich.console import Console

from benchmarks.mcp_overhead import _figure, table


def test_figures_and_speedup_column() -> None:
    baseline = _figure("stdio", "session per call", [0.5] * 19 + [1.5])
    fast = _figure("stdio", "persistent, MCPToolSource", [0.002, 0.003, 0.004])
    assert (baseline.mean_ms, baseline.p50_ms, baseline.p95_ms, baseline.total_s) == (
        550.0,
        500.0,
        550.0,
        11.0,
    )
    assert (fast.calls, fast.p50_ms) == (3, 3.0)
    console = Console(record=True, width=140)
    console.print(table([baseline, fast]))
    text = console.export_text()
    assert "session per call" in text and "1.0x" in text and "183.3x" in text

"""The cluster benchmark's own logic: the latency summary and the table (the load itself runs against a cluster:
``python -m benchmarks.cluster``)."""

from __future__ import annotations

import pytest

from benchmarks.cluster import Latency, SizeFigures, render, summarize


def test_summary_takes_the_median_and_the_inclusive_95th_percentile() -> None:
    durations = [float(n) for n in range(1, 21)]  # 1 .. 20 s
    assert summarize(durations) == Latency(p50_s=10.5, p95_s=19.05, max_s=20.0)
    assert summarize([0.4]) == Latency(p50_s=0.4, p95_s=0.4, max_s=0.4)


def test_an_empty_load_is_refused_with_what_was_expected() -> None:
    with pytest.raises(ValueError, match="expected at least one finished run"):
        summarize([])


def test_the_table_has_one_row_per_cluster_size() -> None:
    figures = [
        SizeFigures(1, 10, 2, 2.0, 5.0, 0.3, 0.5, 0.6, 0),
        SizeFigures(2, 10, 2, 1.0, 10.0, 0.2, 0.4, 0.5, 0),
    ]
    rows = render(figures).splitlines()
    assert len(rows) == 4
    assert rows[2].startswith("| 1 | 10 | 2 | 2.0 | 5.0 |") and rows[3].startswith("| 2 | 10 | 2 | 1.0 | 10.0 |")

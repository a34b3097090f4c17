"""The bandwidth measures the local-backend benchmarks divide decode speed by (benchmarks/backends.py)."""

from __future__ import annotations

import pytest

from benchmarks.backends import memory_bandwidth_gbs, read_bandwidth_gbs

pytestmark = pytest.mark.bench


def test_both_measures_give_a_rate_and_reading_splits_over_threads() -> None:
    copy, read_one, read_two = (
        memory_bandwidth_gbs(mib=16, repeats=2),
        read_bandwidth_gbs(1, 16, 2),
        read_bandwidth_gbs(2, 16, 2),
    )
    assert copy > 0 and read_one > 0 and read_two > 0
    with pytest.raises(ValueError):  # no threads is no measure
        read_bandwidth_gbs(-1, 16, 1)

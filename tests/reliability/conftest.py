"""Reliability tests: every test records what it tried in ``figures``; the totals are printed at the end of the
run (pytest captures ``print``, so CI output would not show them otherwise)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

_FIGURES: dict[str, dict[str, Any]] = defaultdict(dict)


class Figures:
    """What the reliability tests tried, by area: counts of cases, failures injected, runs resumed, threads."""

    def record(self, area: str, **values: Any) -> None:
        """Set figures of ``area`` (numbers add up when recorded twice, other values are replaced)."""
        current = _FIGURES[area]
        for key, value in values.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and key in current:
                current[key] += value
            else:
                current[key] = value
        print(f"[reliability] {area}: {values}")


@pytest.fixture(scope="session")
def figures() -> Figures:
    """The session's reliability figures."""
    return Figures()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per area with what was tried and that nothing was lost."""
    if not _FIGURES:
        return
    terminalreporter.section("reliability figures")
    for area, values in sorted(_FIGURES.items()):
        terminalreporter.write_line(f"{area}: " + ", ".join(f"{k}={v}" for k, v in values.items()))

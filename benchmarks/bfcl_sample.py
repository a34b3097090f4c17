"""Draw BFCL entries from the leaderboard's own files (the ``bfcl-eval`` wheel) into the sample's record format.

``sample.jsonl`` holds every k-th entry of each category's file (k = the file's length / 8), starting at the first;
``holdout.jsonl`` holds entries no session has seen: from the positions halfway between the sample's ones
(k/2, 2k + k/2, 4k + k/2, 6k + k/2), four a category. It was drawn after the tuning and report halves had been
used to tune, so a figure on it is the held-out one. Reproduce it with::

    pip download bfcl-eval==2026.3.23 --no-deps -d /tmp/bfcl
    python -m benchmarks.bfcl_sample /tmp/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl > benchmarks/data/bfcl/holdout.jsonl
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_irrelevance": "live_irrelevance",
}
"""The sample's category names and the leaderboard's file stems (``BFCL_v4_<stem>.json``)."""

HOLDOUT_POSITIONS: tuple[float, ...] = (0.5, 2.5, 4.5, 6.5)
"""Where the holdout entries stand, in units of k (a category file's length / 8)."""


def _rows(archive: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    text = archive.read(name).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def draw(wheel: Path, positions: Sequence[float] = HOLDOUT_POSITIONS) -> Iterator[dict[str, Any]]:
    """The records at ``positions`` (in units of k) of each category, in the sample's format."""
    with zipfile.ZipFile(wheel) as archive:
        for category, stem in CATEGORIES.items():
            entries = _rows(archive, f"bfcl_eval/data/BFCL_v4_{stem}.json")
            answers: dict[str, Any] = {}
            if not category.endswith("irrelevance"):
                answers = {
                    row["id"]: row["ground_truth"]
                    for row in _rows(archive, f"bfcl_eval/data/possible_answer/BFCL_v4_{stem}.json")
                }
            k = len(entries) // 8
            for position in positions:
                entry = entries[int(position * k)]
                yield {
                    "id": entry["id"],
                    "category": category,
                    "messages": entry["question"][0],
                    "functions": entry["function"],
                    "possible_answer": answers.get(entry["id"]),
                }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m benchmarks.bfcl_sample BFCL_EVAL_WHEEL > holdout.jsonl")
    for record in draw(Path(sys.argv[1])):
        print(json.dumps(record, ensure_ascii=False))

"""Two recorded travel runs side by side (``python -m benchmarks travel-diff BEFORE AFTER``): what a change did.

Each run's totals (passed, model-written and passed: the issue-30 share, answer kinds, model calls and the median
seconds a question) and every question whose outcome, answer kind or answer text changed, with both answers. A
change to the answer prompt moves a small model's answers on questions it was not aimed at; reading only the totals
hid that twice (BENCHMARKS.md §12, session 13), so the questions come first.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.domains import answer_kind

MODEL_WRITTEN = ("kept", "regenerated")
"""The answer kinds the model wrote (as the first answer, or after one regeneration or a code amendment)."""


@dataclass(frozen=True)
class Outcome:
    """One question of a recorded run, as far as the comparison reads it."""

    qid: str
    passed: bool
    kind: str
    answer: str
    llm_calls: int
    wall_s: float

    @property
    def model_written_passed(self) -> bool:
        """Passed with an answer the model wrote."""
        return self.passed and self.kind in MODEL_WRITTEN


def load_outcomes(path: Path) -> dict[str, Outcome]:
    """The questions of a travel ``--results`` JSONL file by id; ``ValueError`` naming the line and what is missing."""
    outcomes: dict[str, Outcome] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"line {number} is not JSON ({error})") from None
        missing = [key for key in ("qid", "passed") if key not in record]
        if not isinstance(record, Mapping) or missing:
            raise ValueError(f"line {number} lacks {', '.join(missing) or 'an object'}; expected a travel result")
        outcomes[str(record["qid"])] = Outcome(
            qid=str(record["qid"]),
            passed=bool(record["passed"]),
            kind=str(record.get("answer_kind") or answer_kind(record.get("answer_source"))),
            answer=str(record.get("answer") or ""),
            llm_calls=int(record.get("llm_calls") or 0),
            wall_s=float(record.get("wall_s") or 0.0),
        )
    return outcomes


def totals(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """A run's figures: questions, passed, model-written and passed (count and share), answers by kind, model calls
    and the median seconds a question."""
    count = len(outcomes)
    written = sum(o.model_written_passed for o in outcomes)
    return {
        "questions": count,
        "passed": sum(o.passed for o in outcomes),
        "model_written_passed": written,
        "model_written_passed_rate": round(written / count, 3) if count else 0.0,
        "kinds": {kind: sum(o.kind == kind for o in outcomes) for kind in sorted({o.kind for o in outcomes})},
        "llm_calls_per_question": round(sum(o.llm_calls for o in outcomes) / count, 2) if count else 0.0,
        "median_seconds": round(statistics.median(o.wall_s for o in outcomes), 1) if count else 0.0,
    }


def diff_runs(before: Path, after: Path) -> dict[str, Any]:
    """Both runs' totals over the questions they share, the questions only one holds, and each shared question whose
    outcome, kind or answer changed (``gained``/``lost``: model-written and passed after but not before, and the
    reverse)."""
    old, new = load_outcomes(before), load_outcomes(after)
    shared = [qid for qid in new if qid in old]
    changed = []
    for qid in shared:
        a, b = old[qid], new[qid]
        if (a.passed, a.kind, a.answer) == (b.passed, b.kind, b.answer):
            continue
        change = "gained" if b.model_written_passed and not a.model_written_passed else ""
        change = "lost" if a.model_written_passed and not b.model_written_passed else change
        changed.append({
            "id": qid,
            "change": change or "other",
            "before": {"passed": a.passed, "kind": a.kind, "answer": a.answer},
            "after": {"passed": b.passed, "kind": b.kind, "answer": b.answer},
        })  # fmt: skip
    return {
        "before": {"file": str(before), **totals([old[q] for q in shared])},
        "after": {"file": str(after), **totals([new[q] for q in shared])},
        "only_before": sorted(set(old) - set(new)),
        "only_after": sorted(set(new) - set(old)),
        "gained": [c["id"] for c in changed if c["change"] == "gained"],
        "lost": [c["id"] for c in changed if c["change"] == "lost"],
        "changed": changed,
    }

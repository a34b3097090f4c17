"""Rerun the answer check over recorded travel bench answers (a ``python -m benchmarks travel`` JSONL file) and print
each record's verdict as JSON lines: ``{"qid", "ok", "kinds"}``.

The records hold the answer, the question, the calls' tools and arguments and which calls failed, but neither the
calls' results nor the retrieved chunks. ``--results none`` checks with empty results (numbers from results are
then ungrounded for every check alike); ``--results answer`` gives every successful call a result holding the
answer's own text, so grounding passes and only the other rules decide (would the answer pass if its values were
right?). Works with the package (``planwerk.checks``) and with the modules before it (``planwerk.answer_check``),
so the same file can be checked before and after::

    PYTHONPATH=/path/to/old python scripts/recheck_travel.py docs/results/travel_all_a08ed0d.jsonl > before.jsonl
    PYTHONPATH=$PWD python scripts/recheck_travel.py docs/results/travel_all_a08ed0d.jsonl > after.jsonl
"""

from __future__ import annotations

import argparse
import inspect
import json
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.travel import DATA, TODAY
from planwerk.checks import build_answer_check
from planwerk.profiles import PROFILES


def _calls(record: dict[str, Any], results: str) -> list[dict[str, Any]]:
    failed = {}
    for line in record.get("failed_calls") or []:
        tool, _, rest = line.partition(": ")
        failed.setdefault(tool, rest.split(":", 1)[0].strip())
    calls = []
    for index, line in enumerate(record.get("calls") or []):
        tool, _, args = line.partition(" ")
        call: dict[str, Any] = {"id": f"c{index}", "tool": tool, "step": index, "args": json.loads(args or "{}")}
        if tool in failed:
            call |= {"status": "error", "kind": failed.pop(tool), "error": "failed"}
        else:
            call |= {"status": "ok", "result": {"text": record["answer"]} if results == "answer" else None}
        calls.append(call)
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records")
    parser.add_argument("--results", choices=("none", "answer"), default="none")
    args = parser.parse_args()
    history = {q["id"]: [turn["text"] for turn in q.get("history", [])] for q in _questions()}
    accepts = set(inspect.signature(build_answer_check).parameters)
    travel = PROFILES["travel"]
    for line in Path(args.records).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        extra: dict[str, Any] = {"earlier": history.get(record["qid"], []), "language": record["language"]}
        extra |= {"domain": travel.domain} if "domain" in accepts else {}
        if "instructions" in accepts:  # imported here: older checks read them themselves and lack this constant
            from planwerk.prompts.texts import ANSWER_INSTRUCTIONS

            extra["instructions"] = ANSWER_INSTRUCTIONS
        check = build_answer_check(
            record["question"], calls=_calls(record, args.results), hits=[], asked=history.get(record["qid"], []),
            today=date.fromisoformat(TODAY), plan=None, output_schemas={},
            refusals=tuple(travel.refusals.values()),
            **{k: v for k, v in extra.items() if k in accepts},
        )  # fmt: skip
        report = check(record["answer"] or "")
        print(json.dumps({"qid": record["qid"], "ok": report.ok, "kinds": sorted({p.kind for p in report.problems})}))


def _questions() -> list[dict[str, Any]]:
    return json.loads((DATA / "questions.json").read_text(encoding="utf-8"))["questions"]


if __name__ == "__main__":
    main()

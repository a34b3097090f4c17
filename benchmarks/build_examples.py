"""Build the math few-shot library (``examples/math.json``) from the NESTFUL **dev** split.

``python -m benchmarks.build_examples`` rewrites the file; the result is committed, so a change shows up as a
diff. Only the dev split is read: the test split is for reporting (``tests/models/test_examples.py`` checks that no
test question or gold call sequence is in the library).

What goes in, and why:

- chains of :data:`MIN_CALLS` to :data:`MAX_CALLS` calls: the 0.5B model copies the shape of its example, and a
  single two-call example made 22 of 24 test plans two calls long (issue 12); NESTFUL's questions mostly need 3 to 6;
- questions of at most :data:`MAX_QUESTION_CHARS` characters and plans of at most :data:`MAX_PLAN_CHARS` characters
  of compact JSON, so ``Context.plan_examples`` examples stay a bounded part of the prompt;
- gold sequences that reproduce the gold answer with the bundled math server's functions (the answer a plan of this
  shape gives is then right), using only tools that server offers;
- the plan shape the planner writes: one step per dependency level (calls of a level run in parallel), ids
  ``var_N`` as in the data, ``{"$ref": "var_N.result"}`` references, and the step's tool names as its description.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.nestful import Sample, convert_value, gold_plan, label_id, load_samples, matches

MIN_CALLS = 3
MAX_CALLS = 6
MAX_QUESTION_CHARS = 300
MAX_PLAN_CHARS = 700
"""Compact JSON (``separators=(",", ":")``), as the prompt renders it."""
SOURCE_PREFIX = "nestful-dev:"
"""An example's ``source``: where it came from (the dev sample id), so a dev run can leave its own sample out."""


def compact(value: Any) -> str:
    """JSON as the prompt shows it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def example_plan(calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A gold call sequence as the planner writes a plan: steps by dependency level, described by their tools."""
    plan = gold_plan(calls)
    for step in plan["steps"]:
        step["description"] = ", ".join(call["name"] for call in step["tools"])
    return plan


def replayed_answer(calls: Sequence[Mapping[str, Any]]) -> Any:
    """The last call's result when the gold sequence runs on the bundled math functions (positional arguments in
    ``arg_i`` order); raises what the functions raise (unknown tool, bad argument, missing reference)."""
    from planwerk.tools.servers.math import call as math_call

    results: dict[str, Any] = {}

    def value(argument: Any) -> Any:
        converted = convert_value(argument)
        if isinstance(converted, Mapping) and "$ref" in converted:
            ref_id, _, field = str(converted["$ref"]).partition(".")
            if field != "result":
                raise KeyError(f"reference to {converted['$ref']!r}: math tools have only 'result'")
            return results[ref_id]
        return converted

    for call in calls:
        arguments = call["arguments"]
        ordered = sorted(arguments.items(), key=lambda item: int(str(item[0]).rsplit("_", 1)[1]))
        results[label_id(str(call["label"]))] = math_call(str(call["name"]), *(value(v) for _, v in ordered))
    return results[label_id(str(calls[-1]["label"]))]


def why_not(sample: Sample, tool_names: frozenset[str]) -> str | None:
    """Why ``sample`` does not become an example, as ``"<reason>: <detail>"`` (``None``: it does)."""
    if not MIN_CALLS <= len(sample.calls) <= MAX_CALLS:
        return f"not {MIN_CALLS} to {MAX_CALLS} calls: {len(sample.calls)}"
    question = sample.question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        return f"question too long: {len(question)} characters"
    if len(compact(example_plan(sample.calls))) > MAX_PLAN_CHARS:
        return f"plan too long: over {MAX_PLAN_CHARS} characters"
    if unknown := sorted({str(call["name"]) for call in sample.calls} - tool_names):
        return f"tools the math server lacks: {', '.join(unknown)}"
    try:
        answer = replayed_answer(sample.calls)
    except (KeyError, ValueError, TypeError, ArithmeticError, IndexError) as error:
        return f"gold sequence does not run: {error}"
    if not matches(answer, sample):
        return f"gold sequence gives another answer: {answer!r}, not {sample.gold!r}"
    return None


def math_examples(samples: Iterable[Sample], tool_names: frozenset[str]) -> list[dict[str, Any]]:
    """The library entries (question, plan, source) of the ``samples`` that qualify, in their order."""
    return [
        {
            "question": sample.question.strip(),
            "plan": example_plan(sample.calls),
            "source": SOURCE_PREFIX + sample.sample_id,
        }
        for sample in samples
        if why_not(sample, tool_names) is None
    ]


def library_json(entries: Sequence[Mapping[str, Any]]) -> str:
    """The file's text: a JSON array with one example per line (reviewable diffs, no wasted lines)."""
    return "[\n" + ",\n".join(json.dumps(entry, ensure_ascii=False) for entry in entries) + "\n]\n"


def default_target() -> Path:
    """``planwerk/prompts/examples/math.json`` of this checkout."""
    return Path(__file__).resolve().parents[1] / "planwerk" / "prompts" / "examples" / "math.json"


def main(argv: Sequence[str] | None = None) -> int:
    """Rebuild the math library from the dev split and say how many samples qualified and why the others not."""
    from planwerk.tools.servers.math import TOOLS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=default_target(), help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    samples = load_samples("dev")
    names = frozenset(tool.name for tool in TOOLS)
    entries = math_examples(samples, names)
    args.out.write_text(library_json(entries), encoding="utf-8")
    reasons = Counter(reason.split(":")[0] for sample in samples if (reason := why_not(sample, names)))
    print(f"{len(entries)} of {len(samples)} dev samples → {args.out}")
    for reason, count in reasons.most_common():
        print(f"  left out, {reason}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

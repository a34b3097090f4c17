"""The travel set's stricter pass criterion (issue 30 requirement 5): a wrong answer does not pass.

The first criterion (:attr:`benchmarks.travel.QuestionResult.passed`) counted as passed a follow-up "Und am 19.
Januar?" answered with the 18th, "And in Rome?" answered for another date, a parks question about Palma answered with
a chunk about something else, and English questions refused in German. Per question,
``benchmarks/data/travel_bench/strict.json`` names the referent (the places the answer must name, the days the calls
and the answer must stay inside, texts that would name another referent, argument values the calls must have); every
answer must also be in the question's language. :func:`strict_problems` applies it to one answer and its calls;
:func:`rescore` applies it to a recorded ``--results`` file, so older runs can be judged again without the model.

Each answer is also counted by where it came from (:func:`benchmarks.domains.answer_kind`): kept as the model
wrote it, regenerated, or the fallback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.domains import answer_kind
from planwerk.tools.servers.travel.spots import ACTIVITY_NAMES

DATA = Path(__file__).parent / "data" / "travel_bench"
_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


@dataclass(frozen=True)
class Referent:
    """What one question is about, for the stricter criterion."""

    places: tuple[tuple[str, ...], ...] = ()
    """Each group: one alternative must be named in the answer."""
    dates: tuple[str, str] | None = None
    """First and last day (YYYY-MM-DD): every ISO date in the calls' arguments and in the answer lies inside."""
    wrong: tuple[str, ...] = ()
    """Texts the answer must not hold (another referent's date or place, in the forms a model writes)."""
    args: Mapping[str, Mapping[str, Any]] | None = None
    """Per tool: argument values every call of that tool must have (a sightseeing question asks for sights)."""


def load_referents() -> dict[str, Referent]:
    """The packaged referents by question id."""
    raw = json.loads((DATA / "strict.json").read_text(encoding="utf-8"))["questions"]
    return {
        qid: Referent(
            places=tuple(tuple(group) for group in spec.get("places", [])),
            dates=(spec["dates"][0], spec["dates"][1]) if spec.get("dates") else None,
            wrong=tuple(spec.get("wrong", [])),
            args=spec.get("args"),
        )
        for qid, spec in raw.items()
    }


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _iso_dates(value: Any) -> Iterable[str]:
    return _ISO_DATE.findall(json.dumps(value, ensure_ascii=False, default=str))


def strict_problems(
    answer: str,
    *,
    language: str,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    referent: Referent,
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """What makes ``answer`` wrong for its question (empty when nothing does): its language, a place it does not
    name, a date outside the referent in the calls or the answer, a text naming another referent, a call with other
    argument values than the question asks for. ``calls`` are ``(tool, arguments)`` of the calls that ran;
    ``aliases`` maps argument values the server reads as another (``joggen`` -> ``running``) before comparing."""
    from planwerk.core.language import detect_language

    problems: list[str] = []
    folded = _fold(answer)
    if detect_language(answer, default=language) != language:  # type: ignore[arg-type]
        problems.append(f"language: not in {language}")
    for group in referent.places:
        if not any(_fold(place) in folded for place in group):
            problems.append(f"place: does not name {' / '.join(group)}")
    if referent.dates is not None:
        first, last = referent.dates
        for tool, args in calls:
            if outside := sorted({d for d in _iso_dates(args) if not first <= d <= last}):
                problems.append(f"referent: {tool} called for {', '.join(outside)}, asked {first}..{last}")
        if outside := sorted({d for d in _ISO_DATE.findall(answer) if not first <= d <= last}):
            problems.append(f"referent: the answer states {', '.join(outside)}, asked {first}..{last}")
    for text in referent.wrong:
        if _fold(text) in folded:
            problems.append(f"wrong referent: the answer states {text!r}")
    for tool, args in calls:
        for name, value in ((referent.args or {}).get(tool) or {}).items():
            given = args.get(name)
            if (aliases or {}).get(str(given).casefold().strip(), given) != value:
                problems.append(f"arguments: {tool} called with {name}={args.get(name)!r}, the question asks {value!r}")
    return problems


def parse_call(line: str) -> tuple[str, dict[str, Any]]:
    """A recorded ``calls`` entry (``tool {arguments as JSON}``) as ``(tool, arguments)``."""
    tool, _, rest = line.partition(" ")
    try:
        args = json.loads(rest) if rest.strip() else {}
    except json.JSONDecodeError:
        args = {}
    return tool, args if isinstance(args, dict) else {}


@dataclass(frozen=True)
class Rescored:
    """One recorded answer judged again."""

    qid: str
    passed_before: bool
    passed_strict: bool
    answer_kind: str
    problems: tuple[str, ...]


def rescore_record(record: Mapping[str, Any], referents: Mapping[str, Referent]) -> Rescored:
    """One ``--results`` line judged by the stricter criterion (the old criterion and no strict problem)."""
    referent = referents.get(str(record["qid"]), Referent())
    calls = [parse_call(c) for c in record.get("calls", [])]
    problems = strict_problems(
        str(record.get("answer") or ""),
        language=str(record["language"]),
        calls=calls,
        referent=referent,
        aliases=ACTIVITY_NAMES,
    )
    before = bool(record.get("passed"))
    return Rescored(
        qid=str(record["qid"]),
        passed_before=before,
        passed_strict=before and not problems,
        answer_kind=answer_kind(record.get("answer_source")),
        problems=tuple(problems),
    )


def rescore(path: Path) -> dict[str, Any]:
    """A recorded travel run judged by the stricter criterion: how many of its passed answers are wrong, by answer
    kind, and each wrong one with its problems."""
    referents = load_referents()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    judged = [rescore_record(record, referents) for record in lines]
    kinds = sorted({j.answer_kind for j in judged})
    return {
        "file": str(path),
        "questions": len(judged),
        "passed_before": sum(j.passed_before for j in judged),
        "passed_strict": sum(j.passed_strict for j in judged),
        "passed_but_wrong": sum(j.passed_before and not j.passed_strict for j in judged),
        "by_answer_kind": {
            kind: {
                "answers": sum(j.answer_kind == kind for j in judged),
                "passed_before": sum(j.passed_before for j in judged if j.answer_kind == kind),
                "passed_strict": sum(j.passed_strict for j in judged if j.answer_kind == kind),
            }
            for kind in kinds
        },
        "wrong": [
            {"id": j.qid, "answer_kind": j.answer_kind, "problems": list(j.problems)}
            for j in judged
            if j.passed_before and not j.passed_strict
        ],
    }

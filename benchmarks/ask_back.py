"""Does planwerk ask back when a question lacks a value the tools need? (issue 32)

``python -m benchmarks.ask_back [--model SPEC] [--attempts N] [--json]`` asks the travel profile questions
that name no place (German and English) with the bundled tools and no retrieval, one thread each, and reports per
question what happened before any tool ran:

- ``asked (model)``: the planner's own first plan was ``ask_user``;
- ``asked (check)``: the planner planned for a place nobody named and the plan check asked instead of planning
  again (the model alone would have invented it: that is the baseline beside the mechanism);
- ``invented``: a tool was called (a value nobody gave went to a tool);
- ``other``: an answer without calls, or the run gave up.

Each row also counts the plans rejected before that (``rejected_plans``: 0 is "asked in one plan attempt").

Slow on a CPU (one planner call per question with the packaged model): keep ``--attempts`` small.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any

from planwerk.agent import Agent
from planwerk.graph.context import Context

QUESTIONS: tuple[str, ...] = (
    "Wie wird heute das Wetter?",
    "Regnet es morgen?",
    "Wie warm wird es am Wochenende?",
    "Brauche ich heute einen Regenschirm?",
    "Wie ist das Wetter übermorgen?",
    "What's the weather like today?",
    "Will it rain tomorrow?",
    "How warm will it be this weekend?",
    "Do I need an umbrella today?",
    "What is the forecast for the day after tomorrow?",
)
"""Questions that need a place for the tools and name none (the set the ask-back mechanism was tuned on)."""

HELD_OUT: tuple[str, ...] = (
    "Soll ich morgen eine Jacke mitnehmen?",
    "Wird es heute Abend kalt?",
    "Wie viel Regen fällt morgen?",
    "Scheint am Sonntag die Sonne?",
    "Gibt es morgen Gewitter?",
    "Is it going to be sunny on Saturday?",
    "How cold will it get tonight?",
    "Do I need sunscreen tomorrow?",
    "What will the temperature be on Monday?",
    "Will it be windy tomorrow?",
)
"""Questions of the same kind written after the mechanism was built, never tuned on (``--set held-out``). The
mechanism for plans that read a geocoder's result from a call they left out was built on two of their failures."""

FRESH: tuple[str, ...] = (
    "Wird es morgen neblig?",
    "Friert es heute Nacht?",
    "Wie warm ist es gerade draußen?",
    "Lohnt sich am Samstag ein Ausflug ans Meer?",
    "Schneit es diese Woche?",
    "Should I wear shorts tomorrow?",
    "Will there be snow this week?",
    "How hot does it get on Friday?",
    "Is today a good day for a walk?",
    "Will it be cloudy the day after tomorrow?",
)
"""Questions of the same kind written on 2026-11-27 before the left-out-geocoder mechanism was measured, never
tuned on (``--set fresh``)."""

SETS = {"tuned": QUESTIONS, "held-out": HELD_OUT, "fresh": FRESH}
"""The question sets by ``--set`` name."""


def outcome(events: list[dict[str, Any]]) -> tuple[str, str]:
    """What a run did, from its events: the outcome and a detail (the question asked, or what was called)."""
    calls = [e for e in events if e["event"] == "tool_call"]
    if calls:
        return "invented", json.dumps(calls[0]["args"], ensure_ascii=False)[:80]
    asked = next((e for e in events if e["event"] == "ask_user"), None)
    if asked is not None:
        by_check = any(e["event"] == "replan" and e.get("decision") == "ask_user" for e in events)
        if by_check:
            plans = [e["reason"] for e in events if e["event"] == "replan" and e.get("decision") == "ask_user"]
            return "asked (check)", plans[0][:80]
        return "asked (model)", asked["question"][:80]
    final = next((e for e in events if e["event"] == "final_answer"), None)
    return "other", (final or {}).get("answer", "")[:80]


async def measure(
    model: str | None, attempts: int, first: int = 0, questions: tuple[str, ...] = QUESTIONS
) -> list[dict[str, Any]]:
    """One run per question of ``questions`` (from the ``first``); the outcome of each."""
    rows = []
    context = Context(max_plan_attempts=attempts, profile="travel")
    async with Agent(model=model, retriever=False, context=context) as agent:
        for question in questions[first:]:
            started = time.monotonic()
            events = [event async for event in agent.events(question)]
            kind, detail = outcome(events)
            rejected = sum(1 for e in events if e["event"] == "replan" and e.get("decision") == "rejected")
            rows.append({"question": question, "outcome": kind, "detail": detail, "rejected_plans": rejected,
                         "seconds": round(time.monotonic() - started, 1)})  # fmt: skip
            print(f"{kind:14} {rows[-1]['seconds']:6.1f} s  {rejected} rejected  {question}  → {detail}",
                  file=sys.stderr, flush=True)  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    """Run the questions and print a table (``--json``: one JSON object on the last line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model spec (default: the profile's, the packaged model)")
    parser.add_argument("--attempts", type=int, default=2, help="max_plan_attempts (default 2)")
    parser.add_argument("--first", type=int, default=0, help="start at this question (0-based; 5: the English ones)")
    parser.add_argument("--set", choices=tuple(SETS), default="tuned", help="which questions (default tuned)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    questions = SETS[args.set]
    rows = asyncio.run(measure(args.model, args.attempts, args.first, questions))
    for row in rows:
        print(f"{row['outcome']:14} {row['question']}")
    counts = Counter(row["outcome"] for row in rows)
    print("; ".join(f"{kind}: {count}" for kind, count in sorted(counts.items())))
    if args.json:
        print(json.dumps({"rows": rows, "counts": dict(counts)}, ensure_ascii=False))


if __name__ == "__main__":
    main()

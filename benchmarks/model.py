"""Benchmark of the packaged default model on this machine: load, speed, plan validity, prefix cache.

``python -m benchmarks.model [--json] [--limit N] [--spec SPEC]``

In one run (so the comparisons share the machine's current load):

- load time of the model (first load in the process);
- prompt tokens/s (prefill without a cached prefix) and generated tokens/s;
- plan validity over fixed travel questions (German and English, travel tools), with and without constrained
  decoding: strict (the raw reply is JSON matching the plan schema), checked (the tolerant parser plus the plan
  check accept it) and expected tools (the plan calls exactly the tools the question needs);
- the time of the second plan call with and without the prefix cache.

Prints a table; with ``--json`` one JSON object as the last line. Slow: ~10-20 s per question and mode on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

from planwerk.core.tools import ToolSpec

log = logging.getLogger("benchmarks.model")

TODAY = date(2026, 11, 22)
"""The fixed "today" of the prompts, so runs are comparable."""


@dataclass(frozen=True)
class BenchQuestion:
    """A question and the tools a good plan for it calls."""

    text: str
    tools: frozenset[str]


def _q(text: str, *tools: str) -> BenchQuestion:
    return BenchQuestion(text, frozenset(tools))


WEATHER = ("geocode", "get_weather")
QUESTIONS: tuple[BenchQuestion, ...] = (
    _q("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", *WEATHER),
    _q("Wie ist das Wetter in Madrid vom 2. bis 4. Juni 2026?", *WEATHER),
    _q("Regnet es in Hamburg am 15.03.2026?", *WEATHER),
    _q("Welche Parks gibt es im Umkreis von 2 km um Wien?", "geocode", "get_parks"),
    _q("Ich möchte bei Innsbruck wandern: welche Wanderorte gibt es im Umkreis von 15 km?", "geocode", "get_spots"),
    _q("Wo kann ich in Valencia vom 3. bis 5. Juli 2026 am besten an den Strand?", "geocode", "rank_spots"),
    _q("Vergleiche das Wetter in Berlin und München am 10. Oktober 2026.", *WEATHER),
    _q("Wie warm wird es in Lissabon am 20. August 2026?", *WEATHER),
    _q("Welche Sehenswürdigkeiten gibt es im Umkreis von 5 km um Florenz?", "geocode", "get_spots"),
    _q("Wie wird das Wetter in Rom vom 1. bis 7. Mai 2026?", *WEATHER),
    _q("Gibt es Parks im Umkreis von 3 km um Zürich?", "geocode", "get_parks"),
    _q("Wo kann ich in Kopenhagen am 12. September 2026 am besten joggen?", "geocode", "rank_spots"),
    _q("What is the weather in Paris on 2026-11-22?", *WEATHER),
    _q("What will the weather be in Tarragona from 2026-12-01 to 2026-12-03?", *WEATHER),
    _q("Which parks are within 3 km of Amsterdam?", "geocode", "get_parks"),
    _q("Find hiking spots within 20 km of Salzburg.", "geocode", "get_spots"),
    _q("Where is the best place to go running in Prague from 2026-04-10 to 2026-04-12?", "geocode", "rank_spots"),
    _q("Compare the weather in Oslo and Stockholm on 2026-06-21.", *WEATHER),
    _q("Will it rain in Dublin on 2026-03-17?", *WEATHER),
    _q("What sightseeing spots are within 4 km of Athens?", "geocode", "get_spots"),
    _q("How hot will it be in Seville on 2026-08-01?", *WEATHER),
    _q("Wie wird das Wetter morgen in Köln?", *WEATHER),
    _q("Wie funktioniert ein Dieselmotor?"),
    _q("Hallo! Wer bist du?"),
)
"""Fixed benchmark questions (>= 20); an empty tool set means the plan should answer with ``final``."""


def travel_specs(names: Collection[str] | None = None) -> dict[str, ToolSpec]:
    """The travel MCP server's tool specs (read from the server object; no network, no process)."""
    from planwerk.tools.servers.travel.server import build_server

    return server_specs(build_server(), "travel", names)


def math_specs(names: Collection[str] | None = None) -> dict[str, ToolSpec]:
    """The math MCP server's tool specs (read from the server object; no network, no process)."""
    from planwerk.tools.servers.math import build_server

    return server_specs(build_server(), "math", names)


def server_specs(server: Any, server_name: str, names: Collection[str] | None = None) -> dict[str, ToolSpec]:
    """The tool specs a FastMCP ``server`` lists (all, or those in ``names``), as an MCP client sees them."""
    tools = asyncio.run(server.list_tools())
    return {
        tool.name: ToolSpec(
            name=tool.name,
            description=tool.description or "",
            input_schema=tool.inputSchema,
            output_schema=tool.outputSchema,
            server=server_name,
        )
        for tool in tools
        if names is None or tool.name in names
    }


def plan_messages(question: str, specs: Mapping[str, ToolSpec]) -> list[Any]:
    """The planner's prompt for ``question``: persona, protocol, catalog and the closest example."""
    from planwerk.prompts.examples import select_examples
    from planwerk.prompts.render import build_plan_messages
    from planwerk.prompts.travel import PERSONA

    examples = select_examples(question, specs, k=1, include_saved=False)
    return build_plan_messages(persona=PERSONA, specs=specs, examples=examples, question=question, today=TODAY)


@dataclass(frozen=True)
class PlanOutcome:
    """One plan call of the benchmark."""

    question: str
    constrained: bool
    seconds: float
    prefill_s: float
    decode_s: float
    input_tokens: int
    output_tokens: int
    finish_reason: str
    strict_valid: bool
    checked_valid: bool
    expected_tools: bool
    problem: str


def judge(text: str, question: BenchQuestion, specs: Mapping[str, ToolSpec], schema: Mapping[str, Any]) -> dict:
    """Strict validity, checked validity and whether the plan calls the expected tools."""
    import jsonschema

    from planwerk.core.checking import check_plan
    from planwerk.core.parsing import PlanParseError, parse_plan

    try:
        jsonschema.validate(json.loads(text), schema)
        strict = True
    except (ValueError, jsonschema.ValidationError):
        strict = False
    try:
        plan = parse_plan(text)
    except PlanParseError as exc:
        return {"strict_valid": strict, "checked_valid": False, "expected_tools": False, "problem": str(exc)[:200]}
    problems = check_plan(plan, specs)
    used = {call.name for _, call in plan.calls()}
    return {
        "strict_valid": strict,
        "checked_valid": not problems,
        "expected_tools": used == set(question.tools) and (bool(used) or plan.final is not None),
        "problem": "; ".join(problems)[:200],
    }


def run(spec: str, limit: int | None, progress: bool) -> dict[str, Any]:
    """Run the benchmark and return its figures."""
    from rich.progress import Progress

    from planwerk.core.plan_schema import plan_json_schema
    from planwerk.models.specs import load_chat_model

    specs = travel_specs()
    schema = plan_json_schema(specs)
    questions = QUESTIONS[:limit] if limit else QUESTIONS

    started = time.perf_counter()
    model = load_chat_model(spec)
    load_s = time.perf_counter() - started
    runtime = model.runtime
    constrained_model = model.with_plan_schema(schema)
    free_model = model.with_free_decoding()

    # Prefix cache: the second of two calls of the same prompt, without and with the cache.
    messages = plan_messages(QUESTIONS[0].text, specs)
    uncached = constrained_model.model_copy(update={"use_prefix_cache": False})
    first_uncached = uncached.invoke(messages)
    log.info("prefix cache comparison: first call %.1f s", meta_s(first_uncached))
    t0 = time.perf_counter()
    second_uncached = uncached.invoke(messages)
    second_uncached_s = time.perf_counter() - t0
    runtime.prefix_cache.clear()
    constrained_model.invoke(messages)  # builds the entry
    t0 = time.perf_counter()
    second_cached = constrained_model.invoke(messages)
    second_cached_s = time.perf_counter() - t0
    meta = first_uncached.response_metadata
    prompt_tps = first_uncached.usage_metadata["input_tokens"] / max(meta["prefill_s"], 1e-9)

    outcomes: list[PlanOutcome] = []
    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("plans", total=2 * len(questions))
        for question in questions:
            messages = plan_messages(question.text, specs)
            for constrained, chat in ((True, constrained_model), (False, free_model)):
                t0 = time.perf_counter()
                reply = chat.invoke(messages)
                seconds = time.perf_counter() - t0
                verdict = judge(str(reply.content), question, specs, schema)
                outcomes.append(
                    PlanOutcome(
                        question=question.text,
                        constrained=constrained,
                        seconds=round(seconds, 2),
                        prefill_s=reply.response_metadata["prefill_s"],
                        decode_s=reply.response_metadata["decode_s"],
                        input_tokens=reply.usage_metadata["input_tokens"],
                        output_tokens=reply.usage_metadata["output_tokens"],
                        finish_reason=reply.response_metadata["finish_reason"],
                        **verdict,
                    )
                )
                bar.advance(task)
                last = outcomes[-1]
                log.info(
                    "%s %s: %.1f s, %d tokens, %s, checked=%s tools=%s",
                    "constrained" if constrained else "free",
                    question.text[:50],
                    seconds,
                    last.output_tokens,
                    last.finish_reason,
                    last.checked_valid,
                    last.expected_tools,
                )
    decode_rates = [(o.output_tokens - 1) / o.decode_s for o in outcomes if o.decode_s > 0 and o.output_tokens > 1]

    def summary(constrained: bool) -> dict[str, Any]:
        rows = [o for o in outcomes if o.constrained is constrained]
        n = len(rows)
        return {
            "plans": n,
            "strict_valid": sum(o.strict_valid for o in rows),
            "checked_valid": sum(o.checked_valid for o in rows),
            "expected_tools": sum(o.expected_tools for o in rows),
            "mean_s": round(statistics.fmean(o.seconds for o in rows), 2) if rows else None,
            "mean_output_tokens": round(statistics.fmean(o.output_tokens for o in rows), 1) if rows else None,
            "stopped_by_repetition": sum(o.finish_reason == "repetition" for o in rows),
            "hit_length_limit": sum(o.finish_reason == "length" for o in rows),
        }

    return {
        "spec": spec,
        "device": str(runtime.device),
        "dtype": str(next(runtime.model.parameters()).dtype),
        "threads": _threads(),
        "load_s": round(load_s, 1),
        "prompt_tokens": first_uncached.usage_metadata["input_tokens"],
        "prompt_tokens_per_s": round(prompt_tps, 1),
        "generated_tokens_per_s": round(statistics.median(decode_rates), 2) if decode_rates else None,
        "second_call_s_without_prefix_cache": round(second_uncached_s, 2),
        "second_call_s_with_prefix_cache": round(second_cached_s, 2),
        "prefill_s_without_prefix_cache": second_uncached.response_metadata["prefill_s"],
        "prefill_s_with_prefix_cache": second_cached.response_metadata["prefill_s"],
        "cached_prefix_tokens": second_cached.response_metadata["cached_prefix_tokens"],
        "same_output_with_and_without_cache": second_cached.content == second_uncached.content,
        "constrained": summary(True),
        "free": summary(False),
        "plans": [asdict(o) for o in outcomes],
    }


def meta_s(reply: Any) -> float:
    """Prefill plus decode seconds of a reply."""
    return reply.response_metadata["prefill_s"] + reply.response_metadata["decode_s"]


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def render(figures: Mapping[str, Any]) -> None:
    """Print the figures as tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 150)  # files and pipes get readable rows
    table = Table(title=f"model {figures['spec']} on {figures['device']} ({figures['dtype']})")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key in (
        "load_s",
        "prompt_tokens",
        "prompt_tokens_per_s",
        "generated_tokens_per_s",
        "second_call_s_without_prefix_cache",
        "second_call_s_with_prefix_cache",
        "prefill_s_without_prefix_cache",
        "prefill_s_with_prefix_cache",
        "cached_prefix_tokens",
        "same_output_with_and_without_cache",
    ):
        table.add_row(key, str(figures[key]))
    console.print(table)
    plans = Table(title="plan validity (xgrammar-constrained vs free decoding)")
    plans.add_column("")
    plans.add_column("constrained", justify="right")
    plans.add_column("free", justify="right")
    for key in figures["constrained"]:
        plans.add_row(key, str(figures["constrained"][key]), str(figures["free"][key]))
    console.print(plans)
    detail = Table(title="per question")
    for column in ("question", "mode", "s", "out tok", "finish", "strict", "checked", "tools ok"):
        detail.add_column(column)
    for row in figures["plans"]:
        detail.add_row(
            row["question"][:60],
            "constrained" if row["constrained"] else "free",
            str(row["seconds"]),
            str(row["output_tokens"]),
            row["finish_reason"],
            "✓" if row["strict_valid"] else "✗",
            "✓" if row["checked_valid"] else "✗",
            "✓" if row["expected_tools"] else "✗",
        )
    console.print(detail)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument("--limit", type=int, default=None, help=f"use the first N of {len(QUESTIONS)} questions")
    parser.add_argument("--spec", default="default", help="model spec (default: the packaged model)")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be at least 1, got {args.limit}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)  # one line per plan: the run is long
    figures = run(args.spec, args.limit, progress=sys.stderr.isatty())
    render(figures)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

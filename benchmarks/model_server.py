"""In-process transformers against llama.cpp's server, the same packaged GGUF, in one run.

``python -m benchmarks.model_server [--json] [--rounds N]``

Both backends serve the packaged Qwen2.5-Coder-0.5B-Instruct GGUF: ``default`` (transformers in this process, the
GGUF de-quantized to bf16, from its converted copy) and ``endpoint:`` (llama.cpp's server from ``.llama-venv/``,
the Q4_K_M weights as they are, on a free loopback port). Measured for each, interleaved round by round so both
see the same machine load:

1. **tokens per second**: three planner prompts (constrained by the plan schema: xgrammar in-process, the server's
   grammar through ``response_format``) and one free-text prompt, streamed. Time to the first token (the prefill)
   and generated tokens per second after it; tokens are counted with the same tokenizer for both;
2. **question to answer**: the demo question through :class:`planwerk.agent.Agent` (retrieval, MCP tools, plan,
   answer and its check), process-warm (the first question of each Agent warms the embedder and MCP sessions and is
   reported apart).

Also the server's start (process start to ``/v1/models`` answering) and the in-process model's load. Prints a table;
with ``--json`` the last line of stdout is one JSON object. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.cold_start import DEMO_QUESTION

log = logging.getLogger("benchmarks.model_server")

PLAN_QUESTIONS = (
    "Wie wird das Wetter morgen in Köln?",
    "Vergleiche das Wetter in Rom und Paris am 3. Dezember 2026.",
    "Welche Parks gibt es in Barcelona?",
)
FREE_PROMPT = "Erkläre in drei Sätzen, warum man Regenjacken auf Reisen mitnimmt."
BACKENDS = ("in-process", "server")


async def _stream_timed(model: Any, messages: Sequence[Any], tokenizer: Any) -> dict[str, float]:
    """Stream one reply: seconds to the first token, tokens (counted with ``tokenizer``), tokens per second after
    the first."""
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    async for chunk in model.astream(list(messages)):
        if chunk.text and first is None:
            first = time.perf_counter()
        parts.append(chunk.text)
    ended = time.perf_counter()
    text = "".join(parts)
    tokens = len(tokenizer.encode(text, add_special_tokens=False))
    first = first or ended
    decode_s = ended - first
    return {
        "first_token_s": round(first - started, 3),
        "total_s": round(ended - started, 3),
        "tokens": tokens,
        "tokens_per_s": round((tokens - 1) / decode_s, 2) if tokens > 1 and decode_s > 0 else 0.0,
    }


async def _ask(agent: Any, question: str, thread_id: str) -> dict[str, Any]:
    started = time.perf_counter()
    final: dict[str, Any] = {}
    async for event in agent.events(question, thread_id=thread_id):
        if event["event"] == "final_answer":
            final = event
    meta = final.get("metadata", {})
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "llm_calls": meta.get("llm_calls"),
        "answer_source": meta.get("answer_source"),
        "answer": final.get("answer", "")[:200],
    }


async def _run(rounds: int, home: Path) -> dict[str, Any]:
    from benchmarks.model import plan_messages, travel_specs
    from planwerk.agent import Agent
    from planwerk.core.plan_schema import plan_json_schema
    from planwerk.models.llama_server import LlamaServer
    from planwerk.models.packaged import ensure_packaged_model
    from planwerk.models.specs import load_chat_model

    gguf = ensure_packaged_model()
    started = time.perf_counter()
    local = await asyncio.to_thread(load_chat_model, "default")
    load_s = time.perf_counter() - started
    tokenizer = local.tokenizer  # type: ignore[attr-defined]
    specs = await asyncio.to_thread(travel_specs)  # it runs its own event loop
    schema = plan_json_schema(specs)
    plans = await asyncio.to_thread(lambda: [plan_messages(question, specs) for question in PLAN_QUESTIONS])
    prompts = [("plan", messages) for messages in plans] + [("free", [("user", FREE_PROMPT)])]

    server = LlamaServer(gguf, log_file=home / "llama-server.log")
    started = time.perf_counter()
    with server.start():
        server_start_s = time.perf_counter() - started
        remote = load_chat_model(server.spec)
        models = {"in-process": local, "server": remote}
        streams: dict[str, list[dict[str, Any]]] = {name: [] for name in BACKENDS}
        answers: dict[str, list[dict[str, Any]]] = {name: [] for name in BACKENDS}
        async with (
            Agent(model="default", db=home / "local.sqlite") as local_agent,
            Agent(model=server.spec, db=home / "server.sqlite") as server_agent,
        ):
            agents = {"in-process": local_agent, "server": server_agent}
            for name in BACKENDS:  # warm-up question: embedder, MCP sessions, grammar compile, prefix caches
                warm = await _ask(agents[name], DEMO_QUESTION, f"{name}-warmup")
                answers[name].append({**warm, "round": 0})
                log.info("%s warm-up question: %.1f s", name, warm["seconds"])
            for round_index in range(1, rounds + 1):
                for name in BACKENDS:
                    for kind, messages in prompts:
                        chat = models[name].with_plan_schema(schema) if kind == "plan" else models[name]
                        figures = await _stream_timed(chat, messages, tokenizer)
                        streams[name].append({**figures, "kind": kind, "round": round_index})
                        log.info("%s %s: %s", name, kind, figures)
                    result = await _ask(agents[name], DEMO_QUESTION, f"{name}-{round_index}")
                    answers[name].append({**result, "round": round_index})
                    log.info("%s question: %.1f s", name, result["seconds"])

    def median(rows: list[dict[str, Any]], key: str, kind: str) -> float:
        return round(statistics.median(row[key] for row in rows if row["kind"] == kind), 2)

    def summary(name: str) -> dict[str, Any]:
        rows = streams[name]
        timed = [a["seconds"] for a in answers[name] if a["round"] > 0]
        return {
            "plan_tokens_per_s": median(rows, "tokens_per_s", "plan"),
            "plan_first_token_s": median(rows, "first_token_s", "plan"),
            "free_tokens_per_s": median(rows, "tokens_per_s", "free"),
            "free_first_token_s": median(rows, "first_token_s", "free"),
            "question_to_answer_s": round(statistics.median(timed), 1),
            "question_to_answer_s_warmup": answers[name][0]["seconds"],
        }

    return {
        "rounds": rounds,
        "cpus": len(os.sched_getaffinity(0)),
        "load_s_in_process": round(load_s, 1),
        "start_s_server": round(server_start_s, 1),
        "summary": {name: summary(name) for name in BACKENDS},
        "streams": streams,
        "answers": answers,
        "schema_format": remote.schema_format,  # type: ignore[attr-defined]
    }


def render(figures: dict[str, Any]) -> None:
    """The summary as a table on stderr."""
    table = Table(title=f"in-process transformers vs llama.cpp server ({figures['rounds']} rounds)")
    table.add_column("figure")
    for name in BACKENDS:
        table.add_column(name, justify="right")
    for key in next(iter(figures["summary"].values())):
        table.add_row(key, *(str(figures["summary"][name][key]) for name in BACKENDS))
    table.add_row("load / start s", str(figures["load_s_in_process"]), str(figures["start_s_server"]))
    Console(stderr=True).print(table)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_server", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds after the warm-up (default 3)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    with tempfile.TemporaryDirectory(prefix="planwerk-model-server-") as home:
        figures = asyncio.run(_run(args.rounds, Path(home)))
    render(figures)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What ``durability="sync"`` costs per plan step, against LangGraph's default ``"async"``.

``python -m benchmarks.durability [--repeats 7] [--steps 8] [--postgres URI] [--json]`` runs a chain of
``--steps`` one-call steps (0 ms tools, so only the engine and the checkpointer are timed) through the real
``resolve_refs`` and ``call_tool`` nodes (:func:`benchmarks.topology.build_new_graph`), once with each
durability mode, on planwerk's SQLite saver (a temporary file) and, with ``--postgres``, on PostgreSQL (a fresh
schema-less database is not created: the URI's database gets langgraph's tables). Each repetition is a fresh thread;
the modes alternate which goes first; one untimed warm-up per mode. It prints the median wall time per mode and the
difference per step (each plan step is two supersteps: the resolver and the call), with ``--json`` as one JSON
object on the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver

from benchmarks.cli import machine
from benchmarks.topology import _chain, bench_tools, build_new_graph, input_state
from planwerk.agent import RECURSION_LIMIT
from planwerk.graph.context import Context

Mode = Literal["async", "sync"]
MODES: tuple[Mode, ...] = ("async", "sync")


@asynccontextmanager
async def open_saver(kind: str, postgres: str | None) -> AsyncIterator[BaseCheckpointSaver]:
    """planwerk's SQLite saver on a temporary file, or langgraph's PostgreSQL saver on ``postgres``."""
    if kind == "sqlite":
        from planwerk.serving.sqlite_saver import DurableSqliteSaver

        with tempfile.TemporaryDirectory(prefix="planwerk-durability-") as folder:
            async with DurableSqliteSaver.from_conn_string(str(Path(folder) / "threads.sqlite")) as saver:
                yield saver
        return
    from planwerk.serving.postgres_saver import ServerPostgresSaver

    assert postgres is not None
    async with ServerPostgresSaver.from_conn_string(postgres) as saver:
        await saver.setup()
        yield saver


async def run_once(saver: BaseCheckpointSaver, plan: dict[str, Any], mode: Mode) -> float:
    """Seconds for one run of ``plan`` on a fresh thread with ``mode``."""
    graph = build_new_graph(bench_tools(), saver)  # a plain CompiledStateGraph: the mode is what we pass
    config: dict[str, Any] = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": RECURSION_LIMIT}
    started = time.perf_counter()
    async for _ in graph.astream(
        input_state(plan), config, context=Context(), stream_mode=["custom", "updates"], durability=mode
    ):
        pass
    return time.perf_counter() - started


async def measure(kind: str, postgres: str | None, steps: int, repeats: int) -> dict[str, Any]:
    """Median milliseconds per mode and the per-step difference, on one saver."""
    plan = {"steps": _chain([f"c{i}" for i in range(1, steps + 1)], 0.0)}
    samples: dict[Mode, list[float]] = {mode: [] for mode in MODES}
    async with open_saver(kind, postgres) as saver:
        for mode in MODES:
            await run_once(saver, plan, mode)  # warm-up
        for repeat in range(repeats):
            order = MODES if repeat % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                samples[mode].append(await run_once(saver, plan, mode) * 1000)
    median = {mode: statistics.median(values) for mode, values in samples.items()}
    return {
        "saver": kind,
        "steps": steps,
        "repeats": repeats,
        "median_ms": {mode: round(value, 1) for mode, value in median.items()},
        "min_ms": {mode: round(min(values), 1) for mode, values in samples.items()},
        "sync_cost_per_step_ms": round((median["sync"] - median["async"]) / steps, 2),
    }


def main(argv: list[str] | None = None) -> None:
    """Command line: see the module doc."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.durability", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--postgres", help="a PostgreSQL URI to measure too (its database gets langgraph's tables)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.steps < 1:
        parser.error("--repeats and --steps must be at least 1")
    kinds = ["sqlite"] + (["postgres"] if args.postgres else [])
    rows = [asyncio.run(measure(kind, args.postgres, args.steps, args.repeats)) for kind in kinds]
    for row in rows:
        print(
            f"{row['saver']:9} {row['steps']} steps: async {row['median_ms']['async']:.1f} ms, "
            f"sync {row['median_ms']['sync']:.1f} ms (median of {row['repeats']}); "
            f"sync costs {row['sync_cost_per_step_ms']:+.2f} ms per step",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps({"machine": machine(), "rows": rows}))


if __name__ == "__main__":
    main()

"""Per-call overhead of MCP tool calls: a persistent session against a session per call, stdio and HTTP.

``python -m benchmarks.mcp_overhead [--calls N] [--json]`` calls the bundled math server's ``add`` N times
in a row in each mode and prints mean, median and 95th percentile per call as a table; with ``--json``
the last line is one JSON object with the same figures. The session-per-call mode (what
``MultiServerMCPClient.get_tools()`` tools do) is the baseline the persistent modes are compared with.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Literal

from langchain_mcp_adapters.client import MultiServerMCPClient
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from planwerk.tools.mcp import open_tools
from planwerk.tools.servers.launch import serve_http

Transport = Literal["stdio", "http"]
Mode = Literal["session per call", "persistent, raw session", "persistent, MCPToolSource"]
MATH_MODULE = "planwerk.tools.servers.math"


@dataclass(frozen=True)
class Figure:
    """Timings of one transport and mode, in milliseconds per call."""

    transport: Transport
    mode: Mode
    calls: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    total_s: float


def _figure(transport: Transport, mode: Mode, seconds: list[float]) -> Figure:
    ms = sorted(s * 1000 for s in seconds)
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[18] if len(ms) > 1 else ms[0]
    return Figure(
        transport,
        mode,
        len(ms),
        round(statistics.fmean(ms), 2),
        round(statistics.median(ms), 2),
        round(p95, 2),
        round(sum(seconds), 3),
    )


async def _timed(calls: int, one: Callable[[int], Awaitable[Any]], tick: Callable[[], None]) -> list[float]:
    out = []
    for i in range(calls):
        started = time.perf_counter()
        await one(i)
        out.append(time.perf_counter() - started)
        tick()
    return out


@contextmanager
def _http_math_server(timeout_s: float = 30) -> Iterator[str]:
    """The math server over streamable HTTP as a subprocess; yields its URL."""
    with serve_http(["-m", MATH_MODULE], timeout_s=timeout_s) as (url, _):
        yield url


def _connection(transport: Transport, url: str) -> dict[str, Any]:
    read_timeout = {"read_timeout_seconds": timedelta(seconds=30)}
    if transport == "http":
        return {"transport": "streamable_http", "url": url, "session_kwargs": read_timeout}
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", MATH_MODULE, "stdio"],
        "session_kwargs": read_timeout,
    }


async def _measure(transport: Transport, url: str, calls: int, progress: Progress) -> list[Figure]:
    connection = _connection(transport, url)
    figures = []

    # Baseline: the adapters' default tools open a new session (over stdio: a new process) for every call.
    task = progress.add_task(f"{transport}: session per call", total=calls)
    client = MultiServerMCPClient({"math": connection})  # type: ignore[dict-item]
    add = next(t for t in await client.get_tools() if t.name == "add")
    seconds = await _timed(calls, lambda i: add.ainvoke({"arg_0": i, "arg_1": 1}), lambda: progress.advance(task))
    figures.append(_figure(transport, "session per call", seconds))

    task = progress.add_task(f"{transport}: persistent, raw session", total=calls)
    async with client.session("math") as session:
        seconds = await _timed(
            calls,
            lambda i: session.call_tool("add", {"arg_0": i, "arg_1": 1}),
            lambda: progress.advance(task),
        )
    figures.append(_figure(transport, "persistent, raw session", seconds))

    task = progress.add_task(f"{transport}: persistent, MCPToolSource", total=calls)
    config: dict[str, Any] = (
        {"url": url, "timeout": 30}
        if transport == "http"
        else {"command": sys.executable, "args": ["-m", MATH_MODULE, "stdio"], "timeout": 30}
    )
    async with open_tools({"mcpServers": {"math": config}}) as tools:
        seconds = await _timed(
            calls, lambda i: tools.call("add", {"arg_0": i, "arg_1": 1}), lambda: progress.advance(task)
        )
    figures.append(_figure(transport, "persistent, MCPToolSource", seconds))
    return figures


async def run(calls: int, console: Console) -> list[Figure]:
    """Measure every transport and mode with ``calls`` sequential calls each."""
    figures: list[Figure] = []
    with Progress(console=console, transient=True) as progress:
        figures += await _measure("stdio", "", calls, progress)
        with _http_math_server() as url:
            figures += await _measure("http", url, calls, progress)
    return figures


def table(figures: list[Figure]) -> Table:
    """The figures as a rich table, with the speed-up against the session-per-call baseline."""
    out = Table(title="MCP per-call overhead (math server, add)")
    for column in ("transport", "mode", "calls", "mean ms", "p50 ms", "p95 ms", "total s", "vs. per call"):
        out.add_column(column, justify="left" if column in ("transport", "mode") else "right")
    baseline = {f.transport: f.mean_ms for f in figures if f.mode == "session per call"}
    for f in figures:
        speedup = baseline[f.transport] / f.mean_ms if f.mean_ms else float("inf")
        out.add_row(
            f.transport,
            f.mode,
            str(f.calls),
            f"{f.mean_ms:.2f}",
            f"{f.p50_ms:.2f}",
            f"{f.p95_ms:.2f}",
            f"{f.total_s:.3f}",
            f"{speedup:.1f}x",
        )
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="sequential calls per mode (default 20)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    # Progress goes to stderr; the table and the JSON line to stdout, wide enough when piped.
    progress_console = Console(stderr=True)
    console = Console(width=None if sys.stdout.isatty() else 120)
    figures = asyncio.run(run(args.calls, progress_console))
    console.print(table(figures))
    if args.json:
        baseline = {f.transport: f.mean_ms for f in figures if f.mode == "session per call"}
        payload = {
            "benchmark": "mcp_overhead",
            "calls": args.calls,
            "figures": [asdict(f) for f in figures],
            "speedup_vs_session_per_call": {
                f"{f.transport}/{f.mode}": round(baseline[f.transport] / f.mean_ms, 1)
                for f in figures
                if f.mode != "session per call" and f.mean_ms
            },
        }
        print(json.dumps(payload))


if __name__ == "__main__":
    main()

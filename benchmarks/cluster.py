"""Cluster benchmark: runs per second and latency of planwerk on Aegra + PostgreSQL with 1 and with 2 instances.

``python -m benchmarks.cluster [--runs 40] [--concurrency 8] [--json]`` (from a source checkout: it starts the
cluster with ``scripts/cluster.sh``, each size in its own fresh state folder, and stops it after).

The same load for both sizes, in the same run: ``--runs`` runs, each on a new thread, at most ``--concurrency`` in
flight, spread round-robin over the instances' base URLs (plain langgraph-sdk clients). Every run is a real planwerk
run: the replay model (a plan of one ``add`` call, then the answer; no model compute, so the figures are the
serving overhead: HTTP, PostgreSQL checkpoints and run records, the graph, one MCP call over streamable HTTP to the
bundled math server). One warm-up run per instance first (it loads the example ranker's embedder). Latency is one
``runs.wait`` from request to answer. Every answer is checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import typer

from planwerk.graph.run_policy import MCP_CONFIGS_ENV, MODEL_DIRS_ENV
from planwerk.serving.tokens import mint_token

ROOT = Path(__file__).resolve().parents[1]
CLUSTER_SH = ROOT / "scripts" / "cluster.sh"
UP_TIMEOUT_S = 600.0
DOWN_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 300.0
MCP_START_TIMEOUT_S = 60.0
GRAPH = "planwerk"
AUTH_ENV = ("PLANWERK_AUTH", "PLANWERK_JWT_SECRET", "PLANWERK_JWKS", "PLANWERK_JWT_AUDIENCE")
BENCH_USER = "bench"


@dataclass(frozen=True)
class Latency:
    """Per-run latency of one load, in seconds."""

    p50_s: float
    p95_s: float
    max_s: float


def summarize(durations_s: Sequence[float]) -> Latency:
    """p50, p95 (inclusive quantiles) and the maximum of ``durations_s``; ``ValueError`` if it is empty."""
    if not durations_s:
        raise ValueError("no run durations to summarize: expected at least one finished run")
    ordered = sorted(durations_s)
    if len(ordered) == 1:
        return Latency(p50_s=ordered[0], p95_s=ordered[0], max_s=ordered[0])
    cuts = statistics.quantiles(ordered, n=20, method="inclusive")
    return Latency(p50_s=round(statistics.median(ordered), 3), p95_s=round(cuts[18], 3), max_s=round(ordered[-1], 3))


@dataclass(frozen=True)
class SizeFigures:
    """What one cluster size did under the load."""

    instances: int
    runs: int
    concurrency: int
    wall_s: float
    runs_per_s: float
    p50_s: float
    p95_s: float
    max_s: float
    wrong_answers: int


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cluster(state: Path, *args: str, timeout_s: float, allowed: Path | None = None) -> str:
    """Run ``scripts/cluster.sh`` with its state in ``state``; its stdout, or ``RuntimeError`` with its stderr.
    ``allowed``: the folder whose MCP configs and replay files the instances' runs may name (they inherit it)."""
    if not CLUSTER_SH.exists():
        raise RuntimeError(f"{CLUSTER_SH} is missing: the cluster benchmark runs from a source checkout")
    allow = {MCP_CONFIGS_ENV: str(allowed), MODEL_DIRS_ENV: str(allowed)} if allowed is not None else {}
    done = subprocess.run(
        ["bash", str(CLUSTER_SH), *args],
        # The cluster's own JWT secret (jwt_secret_file), whatever auth settings this shell has.
        env={**{k: v for k, v in os.environ.items() if k not in AUTH_ENV}, **allow, "PLANWERK_CLUSTER_DIR": str(state)},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)} failed ({done.returncode}): {done.stderr[-3000:]}")
    return done.stdout


class MathServer:
    """The bundled math MCP server over streamable HTTP on loopback, for the benchmark's life."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._log = (folder / "math.log").open("ab")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "planwerk.tools.servers.math", "http", "--port", str(self.port)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_listening(self) -> None:
        """Return once the endpoint answers HTTP; ``RuntimeError`` if the server exits or does not listen in time."""
        deadline = time.monotonic() + MCP_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the math MCP server exited with {self._process.returncode}")
            try:
                httpx.get(self.url, timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"the math MCP server did not listen on {self.url} within {MCP_START_TIMEOUT_S:g} s")

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop)."""
        self._process.terminate()
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=20)
        self._log.close()


def _replay(folder: Path, name: str, a: int, b: int) -> str:
    """A replay file for one run (its own: an instance loads a spec afresh): plan ``add(a, b)``, then answer."""
    call = {"id": "s", "name": "add", "arguments": {"arg_0": a, "arg_1": b}}
    plan = {"steps": [{"description": "add", "tools": [call]}], "final": None}
    path = folder / f"{name}.json"
    path.write_text(json.dumps([json.dumps(plan), f"{a} + {b} = {a + b}."]), encoding="utf-8")
    return f"replay:{path}"


async def _one_run(client: Any, folder: Path, mcp_config: Path, name: str, a: int, b: int) -> tuple[float, bool]:
    """One run on a new thread; its latency and whether the answer was right."""
    context = {
        "model": _replay(folder, name, a, b),
        "profile": "math",
        "mcp_config": str(mcp_config),
        "today": "2026-11-22",
    }
    started = time.perf_counter()
    thread = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        thread, GRAPH, input={"messages": [{"role": "user", "content": f"{a} + {b}?"}]}, context=context
    )
    return time.perf_counter() - started, out.get("answer") == f"{a} + {b} = {a + b}."


async def _load(
    urls: Sequence[str], token: str, folder: Path, mcp_config: Path, runs: int, concurrency: int
) -> SizeFigures:
    """Warm every instance with one run, then ``runs`` runs round-robin, ``concurrency`` at a time."""
    from langgraph_sdk import get_client

    headers = {"Authorization": f"Bearer {token}"}
    clients = [get_client(url=url, timeout=RUN_TIMEOUT_S, headers=headers) for url in urls]
    for index, client in enumerate(clients):
        _, correct = await _one_run(client, folder, mcp_config, f"warm-{len(urls)}-{index}", 1, 1)
        if not correct:
            raise RuntimeError(f"the warm-up run on {urls[index]} did not answer correctly")
    slots = asyncio.Semaphore(concurrency)

    async def limited(index: int) -> tuple[float, bool]:
        async with slots:
            client = clients[index % len(clients)]
            return await _one_run(client, folder, mcp_config, f"run-{len(urls)}-{index}", index, 2)

    started = time.perf_counter()
    done = await asyncio.gather(*(limited(index) for index in range(runs)))
    wall_s = time.perf_counter() - started
    latency = summarize([seconds for seconds, _ in done])
    return SizeFigures(
        instances=len(urls),
        runs=runs,
        concurrency=concurrency,
        wall_s=round(wall_s, 2),
        runs_per_s=round(runs / wall_s, 2),
        p50_s=latency.p50_s,
        p95_s=latency.p95_s,
        max_s=latency.max_s,
        wrong_answers=sum(1 for _, correct in done if not correct),
    )


def run_sizes(sizes: Sequence[int], runs: int, concurrency: int) -> list[SizeFigures]:
    """The same load on a fresh cluster of each size (started and stopped here), against one math server."""
    folder = Path(tempfile.mkdtemp(prefix="planwerk-bench-cluster-"))
    folder.chmod(0o755)  # as root, PostgreSQL runs as the postgres user and must enter the state folders
    math = MathServer(folder)
    try:
        math.wait_listening()
        mcp_config = folder / "mcp.json"
        mcp_config.write_text(json.dumps({"mcpServers": {"math": {"url": math.url, "timeout": 30}}}), encoding="utf-8")
        figures: list[SizeFigures] = []
        for size in sizes:
            state = folder / f"cluster-{size}"
            state.mkdir()
            try:
                printed = json.loads(
                    _cluster(state, "up", "--instances", str(size), timeout_s=UP_TIMEOUT_S, allowed=folder)
                    .strip()
                    .splitlines()[-1]
                )
                secret = Path(printed["jwt_secret_file"]).read_text(encoding="utf-8").strip()
                token = mint_token(secret, BENCH_USER)
                figures.append(asyncio.run(_load(printed["instances"], token, folder, mcp_config, runs, concurrency)))
            finally:
                _cluster(state, "down", timeout_s=DOWN_TIMEOUT_S)
        return figures
    finally:
        math.stop()
        shutil.rmtree(folder, ignore_errors=True)


def render(figures: Sequence[SizeFigures]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| instances | runs | in flight | wall (s) | runs/s | p50 (s) | p95 (s) | max (s) | wrong answers |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for f in figures:
        lines.append(
            f"| {f.instances} | {f.runs} | {f.concurrency} | {f.wall_s} | {f.runs_per_s} | {f.p50_s} | {f.p95_s} "
            f"| {f.max_s} | {f.wrong_answers} |"
        )
    return "\n".join(lines)


def main(
    runs: int = typer.Option(40, "--runs", min=1, max=2000, help="Runs per cluster size (each on a new thread)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=200, help="Runs in flight at once."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object as the last line."),
) -> None:
    """Measure runs per second and p50/p95 latency on Aegra + PostgreSQL with 1 and with 2 instances."""
    figures = run_sizes((1, 2), runs, concurrency)
    print(render(figures))
    if as_json:
        print(json.dumps({"benchmark": "cluster", "sizes": [asdict(f) for f in figures]}))
    if any(f.wrong_answers for f in figures):
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)

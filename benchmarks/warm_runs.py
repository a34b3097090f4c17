"""Warm runs under ``langgraph dev``: graph-load time per run and time to the first event, cold and warm.

``python -m benchmarks.warm_runs [--runs 5] [--model replay|default] [--json]``

Two fresh ``langgraph dev`` servers on loopback ports, one after the other, each serving ``--runs`` runs one after the
other on one thread through langgraph-sdk, with the default MCP config (the bundled travel and math servers over
stdio) and the math profile:

- **cold**: ``PLANWERK_WARM_START=none``: the first run opens the MCP sessions (and loads the model and the retriever);
  the runs after it find them open;
- **warm**: ``PLANWERK_WARM_START=all``: the server loads the model, the MCP sessions and the retriever with its
  embedder at start (timed from the log), and the runs start after that (with ``--model replay``, whose model is a
  fresh script per run, ``tools,retriever``).

Per run: the graph load the server logs (``graph load: … ms``, the time langgraph's factory took, which it reports
as "Slow graph load" at warning level above 100 ms and at error level above 250 ms), the time from sending the run to
its first planwerk event (``start``, stream mode ``custom``), to the first message a chat shows (stream mode
``messages-tuple``, as agent-chat-ui streams: the progress message), to the first piece of the answer there, and to
its end. ``--model replay`` (default) plans
``add(2, 3)`` from a script, so the figures are the server's own; ``--model default`` uses the packaged model.
Prints a table; with ``--json`` the last line of stdout is one JSON object. Progress goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import typer

from planwerk.graph.run_policy import MODEL_DIRS_ENV
from planwerk.models.endpoint_keys import ALLOWED_ENDPOINTS_ENV
from planwerk.serving.tokens import mint_token

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 120.0
WARM_TIMEOUT_S = 900.0
"""Bounds the warm start (the packaged model and the embedder on a slow machine)."""
RUN_TIMEOUT_S = 900.0
GRAPH_LOAD = re.compile(r"graph load: ([\d.]+) ms \(MCP sessions (warm|cold)\)")
QUESTION = "Was ist 2 + 3?"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _Server:
    """``langgraph dev`` on the repo's ``langgraph.json`` in ``folder``."""

    def __init__(self, folder: Path, warm: str, context: dict[str, Any]):
        self.folder = folder
        self.port = _free_port()
        self.log = folder / "server.log"
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "PLANWERK_JWT"))}
        for name in ("DATABASE_URI", "PLANWERK_POSTGRES_URI", "PLANWERK_AUTH", "PLANWERK_JWKS"):
            env.pop(name, None)
        self.secret = secrets.token_urlsafe(32)
        """The server's own JWT secret: auth on, as served; :attr:`token` signs in with it."""
        self.token = mint_token(self.secret, "bench")
        self.env = {
            **env,
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PLANWERK_CHECKPOINT_DB": str(folder / "checkpoints.sqlite"),
            "PLANWERK_WARM_START": warm,
            "PLANWERK_WARM_START_CONTEXT": json.dumps(context),
            "PLANWERK_JWT_SECRET": self.secret,
            # The runs' replay files lie in the folder; the model the caller named is allowed too.
            **_allowing(folder, context.get("model", "")),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start it; seconds until ``/ok`` answered."""
        import httpx

        command = [
            str(Path(sys.executable).parent / "langgraph"),
            *("dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(self.port)),
            *("--config", str(ROOT / "langgraph.json")),
        ]
        started = time.monotonic()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        while time.monotonic() - started < START_TIMEOUT_S:
            if self.process.poll() is not None:
                raise RuntimeError(f"langgraph dev exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1.0).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"langgraph dev did not answer within {START_TIMEOUT_S:g} s:\n{self.tail()}")

    def wait_for(self, pattern: str, timeout_s: float) -> re.Match[str]:
        """The first match of ``pattern`` in the log, waiting for it (bounded)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            match = re.search(pattern, self.text())
            if match:
                return match
            time.sleep(0.2)
        raise TimeoutError(f"{pattern!r} not in the server log within {timeout_s:g} s:\n{self.tail()}")

    def text(self) -> str:
        """The server's log so far."""
        return self.log.read_text(errors="replace")

    def tail(self, lines: int = 30) -> str:
        """The end of the log."""
        return "\n".join(self.text().splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to its process group; SIGKILL if it does not stop within 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def _allowing(folder: Path, spec: str) -> dict[str, str]:
    """The server's allow-lists (:mod:`planwerk.graph.run_policy`): ``folder`` (the runs' replay files) and the
    model the caller named, a file's folder or an endpoint."""
    from planwerk.models.specs import endpoint_base_url, parse_model_spec

    folders = [folder]
    parsed = parse_model_spec(spec) if spec and spec != "profile" else None
    if parsed is not None and parsed.kind == "endpoint":
        return {MODEL_DIRS_ENV: str(folder), ALLOWED_ENDPOINTS_ENV: endpoint_base_url(parsed.target)}
    if parsed is not None and parsed.kind in ("hf", "gguf", "replay"):
        target = Path(parsed.target).expanduser().resolve()
        folders.append(target if parsed.kind == "hf" else target.parent)
    return {MODEL_DIRS_ENV: os.pathsep.join(map(str, folders))}


def _replay(folder: Path, index: int) -> str:
    plan = {
        "steps": [{"description": "add", "tools": [{"id": "s", "name": "add", "arguments": {"arg_0": 2, "arg_1": 3}}]}],
        "final": None,
    }
    path = folder / f"replay-{index}.json"
    path.write_text(json.dumps([json.dumps(plan), "2 + 3 = 5."]), encoding="utf-8")
    return f"replay:{path}"


ANSWER_NODES = frozenset({"answer", "regenerate", "fallback", "check_answer", "deliver"})
"""The nodes whose AI messages are the answer (a draft streamed as decoded, or the checked text)."""


def _rounded(seconds: float | None) -> float | None:
    return round(seconds, 3) if seconds is not None else None


async def _runs(server: _Server, count: int, model: str) -> list[dict[str, Any]]:
    from langgraph_sdk import get_client

    client = get_client(url=server.url, timeout=RUN_TIMEOUT_S, headers={"Authorization": f"Bearer {server.token}"})
    thread = (await client.threads.create())["thread_id"]
    figures = []
    for index in range(count):
        spec = _replay(server.folder, index) if model == "replay" else model
        context = {"profile": "math", "model": spec}
        started = time.perf_counter()
        first: float | None = None
        shown: float | None = None  # the first message a chat draws
        answering: float | None = None  # the first piece of the answer a chat draws
        answer = None
        async for part in client.runs.stream(
            thread,
            "planwerk",
            input={"messages": [{"role": "user", "content": QUESTION}]},
            context=context,
            stream_mode=["custom", "messages-tuple"],
        ):
            now = time.perf_counter() - started
            if part.event == "custom" and first is None:
                first = now
            if part.event == "custom" and isinstance(part.data, dict) and part.data.get("event") == "final_answer":
                answer = part.data.get("answer")
            if part.event == "messages" and isinstance(part.data, list) and part.data:
                message, metadata = part.data[0], part.data[-1]
                if isinstance(message, dict) and message.get("type") in ("ai", "AIMessageChunk"):
                    shown = now if shown is None else shown
                    node = metadata.get("langgraph_node") if isinstance(metadata, dict) else None
                    if answering is None and node in ANSWER_NODES and message.get("content"):
                        answering = now
        total = time.perf_counter() - started
        figures.append(
            {
                "first_event_s": _rounded(first),
                "first_chat_message_s": _rounded(shown),
                "first_answer_text_s": _rounded(answering),
                "run_s": round(total, 3),
                "answer": answer,
            }
        )
        _progress(
            f"  run {index + 1}: first event after {first or 0:.2f} s, first chat message after {shown or 0:.2f} s, "
            f"answer text after {answering or 0:.2f} s, done after {total:.2f} s"
        )
    loads = GRAPH_LOAD.findall(server.text())
    for figure, (ms, kind) in zip(figures, loads[-count:], strict=False):
        figure["graph_load_ms"] = float(ms)
        figure["mcp_sessions"] = kind
    return figures


def _measure(mode: str, runs: int, model: str) -> dict[str, Any]:
    # A replay model is cheap and stateful (a fresh one per run): only the tools and the embedder are warmed then.
    warm = "none" if mode == "cold" else "all" if model != "replay" else "tools,retriever"
    context = {"profile": "math"} if model == "replay" else {"profile": "math", "model": model}
    with tempfile.TemporaryDirectory(prefix=f"planwerk-warm-{mode}-") as folder:
        server = _Server(Path(folder), warm, context)
        try:
            startup = server.start()
            _progress(f"{mode}: langgraph dev answered after {startup:.1f} s")
            warm_start: dict[str, float] = {}
            if mode == "warm":
                done = server.wait_for(r"warm start: done after ([\d.]+) s", WARM_TIMEOUT_S)
                for part, seconds in re.findall(r"warm start: (\w+) ready after ([\d.]+) s", server.text()):
                    warm_start[part] = float(seconds)
                warm_start["total"] = float(done.group(1))
                _progress(f"{mode}: warm start {warm_start}")
            figures = asyncio.run(_runs(server, runs, model))
            log = server.text()
        finally:
            server.stop()
    loads = [f["graph_load_ms"] for f in figures if "graph_load_ms" in f]
    return {
        "mode": mode,
        "startup_s": round(startup, 2),
        "warm_start_s": warm_start,
        "runs": figures,
        "graph_load_ms_p50": round(statistics.median(loads), 1) if loads else None,
        "graph_load_ms_after_first_p50": round(statistics.median(loads[1:]), 1) if len(loads) > 1 else None,
        "slow_graph_load_errors": len(re.findall(r"error.*Slow graph load", log, flags=re.IGNORECASE)),
        "slow_graph_load_warnings": len(re.findall(r"warning.*Slow graph load", log, flags=re.IGNORECASE)),
    }


def main(
    runs: int = typer.Option(5, "--runs", min=1, max=100, help="Runs per server, one after the other."),
    model: str = typer.Option("replay", "--model", help="replay (scripted plan) or a model spec such as default."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object as the last line."),
) -> None:
    """Graph-load time per run and time to the first event, on a cold and on a warm-started server."""
    results = [_measure(mode, runs, model) for mode in ("cold", "warm")]
    for result in results:
        loads = ", ".join(f"{f.get('graph_load_ms', '?')}" for f in result["runs"])
        firsts = ", ".join(f"{f['first_event_s']}" for f in result["runs"])
        shown = ", ".join(f"{f['first_chat_message_s']}" for f in result["runs"])
        answering = ", ".join(f"{f['first_answer_text_s']}" for f in result["runs"])
        print(f"{result['mode']}: warm start {result['warm_start_s'] or '-'}")
        print(f"  graph load ms per run: {loads} (p50 {result['graph_load_ms_p50']})")
        print(f"  first event s per run: {firsts}")
        print(f"  first chat message s per run: {shown}")
        print(f"  first answer text s per run: {answering}")
        print(
            f"  'Slow graph load' log lines: {result['slow_graph_load_errors']} at error level, "
            f"{result['slow_graph_load_warnings']} at warning level"
        )
    if as_json:
        print(json.dumps({"model": model, "runs": runs, "results": results}))


if __name__ == "__main__":
    typer.run(main)

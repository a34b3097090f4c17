"""Time to an answer: loading the packaged model cold (GGUF) against its converted copy, and the demo question.

``python -m benchmarks.cold_start [--json] [--skip-demo]``

Every figure comes from a fresh Python process (a cold start is a process start), all in one run so they share the
machine's load:

1. **load, GGUF** (the baseline): ``PLANWERK_MODEL_CACHE=0``, the tokenizer rebuilt from the GGUF vocab and every
   tensor de-quantized;
2. **load, GGUF + conversion**: the first start with the cache on, in a fresh ``PLANWERK_HOME`` (the packaged GGUF
   linked in, not re-assembled): the baseline plus writing the converted copy once;
3. **load, converted copy**: the next start, from the copy;
4. **demo question, cold**: ``planwerk ask "<demo question>" --json`` in a new process with the converted copy present:
   process start to the ``final_answer`` event (model, embedder, MCP servers, retrieval, two or more model calls);
5. **demo question, warm**: the same question again in one Python process that already answered it once (model,
   embedder and MCP sessions loaded): what a server or a chat session pays per question.

Prints a table; with ``--json`` the last line of stdout is one JSON object. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

DEMO_QUESTION = "Wo kann man das Razepato am besten beobachten?"
"""The question ``scripts/demo.sh`` asks."""
PROCESS_TIMEOUT_S = 1800

_LOAD = """
import json, logging, time
started = time.perf_counter()
logging.basicConfig(level=logging.INFO, format="%(message)s")
from planwerk.models.specs import load_chat_model
load_chat_model("default")
print(json.dumps({"load_s": round(time.perf_counter() - started, 2)}))
"""

_WARM = """
import asyncio, json, sys, time
from planwerk.agent import Agent

async def main() -> None:
    async with Agent(model="default") as agent:
        figures = []
        for _ in range(2):
            started = time.perf_counter()
            reply = await agent.ask(sys.argv[1])
            figures.append({"seconds": round(time.perf_counter() - started, 2), "answer": reply.answer,
                            "llm_calls": reply.metadata.get("llm_calls")})
    print(json.dumps(figures, ensure_ascii=False))

asyncio.run(main())
"""


def _env(home: Path, *, cache: bool) -> dict[str, str]:
    return {
        **os.environ,
        "PLANWERK_HOME": str(home),
        "PLANWERK_MODEL_CACHE": "1" if cache else "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def _last_json(stdout: str) -> Any:
    for line in reversed(stdout.splitlines()):
        if line.startswith(("{", "[")):
            return json.loads(line)
    raise RuntimeError(f"no JSON line in the output:\n{stdout[-2000:]}")


def _python(code: str, env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S
    )
    if done.returncode:
        raise RuntimeError(f"benchmark process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return _last_json(done.stdout)


def fresh_home(source_home: Path, into: Path) -> Path:
    """A PLANWERK_HOME with the assembled packaged GGUF and its sidecar linked/copied in, and nothing else."""
    from planwerk.models.packaged import ensure_packaged_model

    gguf = ensure_packaged_model(home=source_home)
    models = into / "models"
    models.mkdir(parents=True)
    (models / gguf.name).symlink_to(gguf)
    sidecar = gguf.with_name(gguf.name + ".verified.json")
    shutil.copy2(sidecar, models / sidecar.name)
    return into


def demo_cold(env: dict[str, str], question: str) -> dict[str, Any]:
    """``planwerk ask QUESTION --json`` in a new process: seconds to the final answer and the answer."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "planwerk.cli", "ask", question, "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first_event_s = None
    final: dict[str, Any] | None = None
    assert process.stdout is not None
    for line in process.stdout:
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        first_event_s = first_event_s or round(time.perf_counter() - started, 2)
        if event.get("event") == "final_answer":
            final = {"seconds": round(time.perf_counter() - started, 2), "answer": event["answer"]}
    process.wait(timeout=PROCESS_TIMEOUT_S)
    if final is None:
        raise RuntimeError(f"planwerk ask ended ({process.returncode}) without a final answer")
    return {**final, "first_event_s": first_event_s}


def run(*, demo: bool, progress: Console) -> dict[str, Any]:
    """Every figure of the module doc, in order."""
    from planwerk.home import planwerk_home

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="planwerk-cold-") as folder:
        home = fresh_home(planwerk_home(), Path(folder) / "home")
        progress.print("1/5 loading the GGUF without the cache (baseline)…")
        figures["load_gguf_s"] = _python(_LOAD, _env(home, cache=False))["load_s"]
        progress.print("2/5 first start with the cache: load the GGUF and write the converted copy…")
        figures["load_gguf_and_convert_s"] = _python(_LOAD, _env(home, cache=True))["load_s"]
        progress.print("3/5 loading the converted copy…")
        figures["load_converted_s"] = _python(_LOAD, _env(home, cache=True))["load_s"]
        if demo:
            progress.print("4/5 the demo question in a new process (cold)…")
            figures["demo_cold"] = demo_cold(_env(home, cache=True), DEMO_QUESTION)
            progress.print("5/5 the demo question twice in one process (the second is warm)…")
            first, second = _python(_WARM, _env(home, cache=True), DEMO_QUESTION)
            figures["demo_in_process_first"] = first
            figures["demo_warm"] = second
    figures["load_speedup"] = round(figures["load_gguf_s"] / max(figures["load_converted_s"], 0.01), 1)
    return figures


def table(figures: dict[str, Any]) -> Table:
    """The figures for people."""
    out = Table(title="Time to an answer, packaged default model (each row a fresh process unless noted)")
    out.add_column("what")
    out.add_column("seconds", justify="right")
    out.add_row("load, GGUF (cache off: the baseline)", f"{figures['load_gguf_s']:.1f}")
    out.add_row("load, GGUF + writing the converted copy (first start)", f"{figures['load_gguf_and_convert_s']:.1f}")
    out.add_row("load, converted copy (every later start)", f"{figures['load_converted_s']:.1f}")
    if "demo_cold" in figures:
        cold = figures["demo_cold"]
        out.add_row("demo question, new process: first event", f"{cold['first_event_s']:.1f}")
        out.add_row("demo question, new process: answer", f"{cold['seconds']:.1f}")
        out.add_row("demo question, warm (second in one process)", f"{figures['demo_warm']['seconds']:.1f}")
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    parser.add_argument("--skip-demo", action="store_true", help="only the load figures (1-3)")
    args = parser.parse_args(argv)
    figures = run(demo=not args.skip_demo, progress=Console(stderr=True))
    Console(width=None if sys.stdout.isatty() else 160).print(table(figures))
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""``python -m benchmarks backends``: the local backends side by side on the same packaged GGUF and the same prompts.

For each backend (``transformers``: the GGUF de-quantized to bf16/fp32 in torch; ``llama.cpp``: the quantized
weights in this process), in a child process of its own (so its peak RSS is its own):

- **load**: seconds until the chat model is ready (from the converted copy for transformers, when it exists);
- **prompt tokens/s**: one planner prompt evaluated cold (no cached prefix), its tokens over the time to the first
  new token;
- **decode tokens/s**: new tokens after the first over the time they took (free text, up to 64 tokens);
- **demo question**: the demo question through :class:`planwerk.agent.Agent`, once to warm up (embedder, MCP
  sessions, grammars, prompt caches), then once warm: wall seconds and model calls;
- **peak RSS** of the child;
- **bandwidth fraction**: decode tokens/s against the limit ``memory bandwidth / bytes read per token``, where the
  bandwidth is measured in the same run (a numpy copy of 256 MiB: bytes read plus written per second) and the
  bytes per token are the weights' bytes less the token-embedding table, of which a token reads one row
  (:func:`bytes_read_per_token`; the weights' bytes are reported too);
- **read bandwidth fraction**: the same against reading alone, on as many threads as the process may use
  (:func:`read_bandwidth_gbs`), which is what decoding does with its weights.

The parent prints a table; with ``--json`` the last line of stdout is one JSON object. Progress goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BACKENDS = ("transformers", "llama.cpp")
FREE_PROMPT = "Write a short story of about 200 words about a lighthouse keeper."
DECODE_TOKENS = 64


def memory_bandwidth_gbs(mib: int = 256, repeats: int = 5) -> float:
    """The best of ``repeats`` numpy copies of ``mib`` MiB: bytes read plus bytes written per second, in GB/s."""
    import numpy as np

    source = np.ones(mib * 1024 * 1024 // 8, dtype=np.float64)
    target = np.empty_like(source)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - started)
    return round(2 * source.nbytes / best / 1e9, 2)


def read_bandwidth_gbs(threads: int | None = None, mib: int = 512, repeats: int = 5) -> float:
    """The best of ``repeats`` reads of ``mib`` MiB split over ``threads`` threads (default: the CPUs this process
    may use), each OR-reducing its part as 64-bit words (numpy releases the GIL): bytes read per second, in GB/s.

    What a decoded token does is read its weights once, on the backend's threads; a copy (:func:`memory_bandwidth_gbs`)
    also writes, on one thread. Both are reported, so a fraction is never shown against one measure alone."""
    import threading

    import numpy as np

    count = threads or len(os.sched_getaffinity(0))
    words = np.ones(mib * 1024 * 1024 // 8, dtype=np.uint64)
    parts = np.array_split(words, count)
    best = float("inf")
    for _ in range(repeats):
        workers = [threading.Thread(target=np.bitwise_or.reduce, args=(part,)) for part in parts]
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        best = min(best, time.perf_counter() - started)
    return round(words.nbytes / best / 1e9, 2)


def bytes_read_per_token(total: int, lookup_table: int, rows: int, tied: bool) -> int:
    """What one decoded token reads of weights holding ``total`` bytes: every matrix once, but of the token-embedding
    table (``lookup_table`` bytes in ``rows`` rows) only its token's row, unless the same table is also the output
    matrix (``tied``), which reads it whole. The table is a fifth of a small model's bytes (94 of the packaged 0.5B
    GGUF's 485 MB), so counting it whole would put the bandwidth limit a quarter too low."""
    if tied or rows <= 0:
        return total
    return total - lookup_table + lookup_table // rows


def gguf_bytes_read_per_token(path: str | Path) -> int:
    """:func:`bytes_read_per_token` of a GGUF file, from its tensor table (``token_embd.weight``; an ``output.weight``
    of its own, or the embedding table is the output matrix too)."""
    import gguf

    tensors = {tensor.name: tensor for tensor in gguf.GGUFReader(str(path)).tensors}
    total = sum(int(tensor.n_bytes) for tensor in tensors.values())
    table = tensors.get("token_embd.weight")
    if table is None:
        return total
    rows = int(table.shape[-1])  # GGUF lists dimensions innermost first: (embedding width, vocabulary)
    return bytes_read_per_token(total, int(table.n_bytes), rows, tied="output.weight" not in tensors)


def _weights_bytes(model: Any) -> int:
    """The bytes the backend holds its weights in (what loading reads)."""
    runtime = model.runtime
    if hasattr(runtime, "llama"):
        import llama_cpp

        return int(llama_cpp.llama_model_size(runtime.llama._model.model))
    return int(sum(p.numel() * p.element_size() for p in runtime.model.parameters()))


def _read_bytes(model: Any) -> int:
    """:func:`bytes_read_per_token` of the loaded model."""
    runtime = model.runtime
    if hasattr(runtime, "llama"):
        return gguf_bytes_read_per_token(runtime.llama.model_path)
    torch_model = runtime.model
    table = torch_model.get_input_embeddings().weight
    output = torch_model.get_output_embeddings()
    tied = output is not None and output.weight.data_ptr() == table.data_ptr()
    total = sum(p.numel() * p.element_size() for p in torch_model.parameters())
    return bytes_read_per_token(int(total), table.numel() * table.element_size(), int(table.shape[0]), tied)


async def _demo(spec: str, home: Path) -> dict[str, Any]:
    from benchmarks.cold_start import DEMO_QUESTION
    from planwerk.agent import Agent

    rows = []
    async with Agent(model=spec, db=home / "bench.sqlite") as agent:
        for index in range(2):
            started = time.perf_counter()
            final: dict[str, Any] = {}
            async for event in agent.events(DEMO_QUESTION, thread_id=f"demo-{index}"):
                if event["event"] == "final_answer":
                    final = event
            rows.append(
                {
                    "seconds": round(time.perf_counter() - started, 1),
                    "llm_calls": final.get("metadata", {}).get("llm_calls"),
                    "answer": str(final.get("answer", ""))[:160],
                }
            )
    return {"demo_cold_s": rows[0]["seconds"], "demo_warm_s": rows[1]["seconds"], **{"demo": rows}}


def child(backend: str, spec: str, demo: bool) -> dict[str, Any]:
    """The figures of one backend, measured in this process (run it in a fresh one)."""
    os.environ["PLANWERK_LOCAL_BACKEND"] = backend
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.cold_start import DEMO_QUESTION
    from benchmarks.model import plan_messages, travel_specs
    from planwerk.models.generation import GenerationOptions, message_dicts
    from planwerk.models.specs import load_chat_model

    started = time.perf_counter()
    model = load_chat_model(spec)
    load_s = time.perf_counter() - started
    runtime = model.runtime  # type: ignore[attr-defined]
    specs = travel_specs()
    plan = message_dicts(plan_messages(DEMO_QUESTION, specs))
    cold = runtime.generate(plan, GenerationOptions(max_new_tokens=1, use_prefix_cache=False))
    free = runtime.generate([{"role": "user", "content": FREE_PROMPT}], GenerationOptions(max_new_tokens=DECODE_TOKENS))
    figures: dict[str, Any] = {
        "backend": backend,
        "model": spec,
        "load_s": round(load_s, 1),
        "prompt_tokens": cold.input_tokens,
        "prompt_tokens_per_s": round(cold.input_tokens / cold.prefill_s, 1),
        "decode_tokens": free.output_tokens,
        "decode_tokens_per_s": round((free.output_tokens - 1) / free.decode_s, 2) if free.decode_s else 0.0,
        "weights_bytes": _weights_bytes(model),
        "read_bytes_per_token": _read_bytes(model),
    }
    if demo:
        with tempfile.TemporaryDirectory(prefix="planwerk-bench-backends-") as home:
            figures.update(asyncio.run(_demo(spec, Path(home))))
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return figures


def run(spec: str, backends: tuple[str, ...], demo: bool, progress: Any = None) -> dict[str, Any]:
    """Every backend in a child process, and the memory bandwidth, in one run."""
    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    say("measuring memory bandwidth (numpy copy; threads reading) …")
    bandwidth = memory_bandwidth_gbs()
    read = read_bandwidth_gbs()
    results = []
    for backend in backends:
        say(f"{backend}: load, prompt, decode{', demo question twice' if demo else ''} …")
        command = [sys.executable, "-m", "benchmarks.backends", "--child", backend, "--model", spec]
        if not demo:
            command.append("--no-demo")
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
        if done.returncode != 0:
            error = (done.stderr.strip().splitlines() or ["failed"])[-1]
            results.append({"backend": backend, "error": error})
            say(f"{backend}: failed: {error}")
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        limit = bandwidth * 1e9 / figures["read_bytes_per_token"]
        figures["bandwidth_limit_tokens_per_s"] = round(limit, 1)
        figures["bandwidth_fraction"] = round(figures["decode_tokens_per_s"] / limit, 3)
        read_limit = read * 1e9 / figures["read_bytes_per_token"]
        figures["read_limit_tokens_per_s"] = round(read_limit, 1)
        figures["read_bandwidth_fraction"] = round(figures["decode_tokens_per_s"] / read_limit, 3)
        results.append(figures)
        say(f"{backend}: {figures}")
    return {
        "model": spec,
        "memory_bandwidth_gbs": bandwidth,
        "read_bandwidth_gbs": read,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "backends": results,
    }


def main(argv: list[str] | None = None) -> int:
    """The child entry point (``python -m benchmarks.backends --child <backend>``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.backends")
    parser.add_argument("--child", choices=BACKENDS, required=True)
    parser.add_argument("--model", default="default")
    parser.add_argument("--no-demo", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(child(args.child, args.model, not args.no_demo), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m benchmarks decode``: planwerk's llama.cpp decode loop against the library's own, paired in one process.

Two contexts on the same packaged GGUF with the same settings (:func:`planwerk.models.llamacpp.load_llama`: context
size, batch, threads): one used as the plain library (``Llama.generate``, greedy, nothing done per token but counting
the tokens), one inside :class:`planwerk.models.llamacpp.LlamaCppRuntime` (``generate``: stop strings, streaming
hooks, cancellation checks, repetition stop, prompt caches). Each round decodes the same prompt with both, free and
under a JSON-schema grammar, in alternating order (raw first in even rounds, planwerk first in odd ones), so that the
machine's other load falls on both alike. Decode tokens/s: the tokens after the first over the time they took.

The bandwidth limit is the memory bandwidth measured in the same run (a numpy copy:
:func:`benchmarks.backends.memory_bandwidth_gbs`) divided by the bytes one decoded token reads (the weights less
the token-embedding table, of which it reads one row: :func:`benchmarks.backends.bytes_read_per_token`); the
fraction is decode tokens/s over that limit. The last line of stdout is one JSON object with ``--json``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

PROMPT = "Write a short story of about 300 words about a lighthouse keeper."
JSON_PROMPT = "Write a short story of about 300 words about a lighthouse keeper, as JSON with a title and the story."
JSON_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "story": {"type": "string"}},
    "required": ["title", "story"],
}
VARIANTS = ("free", "json")


def _raw_tokens_per_s(llama: Any, ids: list[int], grammar: Any, tokens: int, is_end: Any) -> tuple[float, int]:
    """The library's own loop: ``Llama.generate`` greedy with the sampler settings planwerk uses."""
    first: float | None = None
    count = 0
    llama.reset()
    for token in llama.generate(ids, temp=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, grammar=grammar):
        if first is None:
            first = time.perf_counter()
        if is_end(token):
            break
        count += 1
        if count >= tokens:
            break
    elapsed = time.perf_counter() - (first or time.perf_counter())
    return ((count - 1) / elapsed if elapsed > 0 else 0.0), count


def run(spec: str = "default", tokens: int = 128, rounds: int = 3, progress: Any = None) -> dict[str, Any]:
    """The paired figures: per variant, the median decode tokens/s of both loops and their bandwidth fractions."""
    import llama_cpp

    from benchmarks.backends import gguf_bytes_read_per_token, memory_bandwidth_gbs, read_bandwidth_gbs
    from planwerk.models.generation import GenerationOptions
    from planwerk.models.llamacpp import LlamaCppRuntime, load_llama
    from planwerk.models.packaged import ensure_packaged_model
    from planwerk.models.specs import DEFAULT_PACKAGED, PACKAGED_MODELS, parse_model_spec

    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    load_before = [round(x, 1) for x in os.getloadavg()]
    parsed = parse_model_spec(spec)
    if parsed.kind not in ("default", "packaged"):
        raise ValueError(f"model {spec!r}: expected a packaged model (default or qwen2.5-coder-1.5b)")
    path = ensure_packaged_model(PACKAGED_MODELS[parsed.target or DEFAULT_PACKAGED])
    raw = load_llama(path)
    runtime = LlamaCppRuntime(load_llama(path), state_store=None)
    weights = int(llama_cpp.llama_model_size(raw._model.model))
    per_token = gguf_bytes_read_per_token(path)
    prompts = {"free": [{"role": "user", "content": PROMPT}], "json": [{"role": "user", "content": JSON_PROMPT}]}
    schemas = {"free": None, "json": JSON_SCHEMA}
    bandwidth = memory_bandwidth_gbs()
    read = read_bandwidth_gbs(raw.context_params.n_threads)
    rates: dict[str, list[float]] = {f"{loop}_{variant}": [] for loop in ("raw", "planwerk") for variant in VARIANTS}
    counts: dict[str, int] = {}
    for index in range(rounds):
        for variant in VARIANTS:
            ids, _ = runtime.prompt_ids(prompts[variant])
            grammar = runtime.grammar(schemas[variant]) if schemas[variant] is not None else None
            options = GenerationOptions(max_new_tokens=tokens, schema=schemas[variant])

            def planwerk_loop(variant: str = variant, options: GenerationOptions = options) -> tuple[float, int]:
                done = runtime.generate(prompts[variant], options)
                return ((done.output_tokens - 1) / done.decode_s if done.decode_s else 0.0), done.output_tokens

            def raw_loop(ids: list[int] = ids, grammar: Any = grammar) -> tuple[float, int]:
                return _raw_tokens_per_s(raw, ids, grammar, tokens, runtime._is_end)

            order = [("raw", raw_loop), ("planwerk", planwerk_loop)]
            for loop, measure in order if index % 2 == 0 else order[::-1]:
                rate, count = measure()
                rates[f"{loop}_{variant}"].append(round(rate, 2))
                counts[f"{loop}_{variant}"] = count
        say(f"round {index + 1}/{rounds}: " + ", ".join(f"{key} {values[-1]}" for key, values in rates.items()))
    limit = bandwidth * 1e9 / per_token
    read_limit = read * 1e9 / per_token
    rows = []
    for variant in VARIANTS:
        row: dict[str, Any] = {"variant": variant}
        for loop in ("raw", "planwerk"):
            median = statistics.median(rates[f"{loop}_{variant}"])
            row[f"{loop}_tokens_per_s"] = round(median, 2)
            row[f"{loop}_bandwidth_fraction"] = round(median / limit, 3)
            row[f"{loop}_read_bandwidth_fraction"] = round(median / read_limit, 3)
            row[f"{loop}_runs"] = rates[f"{loop}_{variant}"]
            row[f"{loop}_tokens"] = counts[f"{loop}_{variant}"]
        pairs = zip(rates[f"planwerk_{variant}"], rates[f"raw_{variant}"], strict=True)
        row["planwerk_over_raw"] = round(statistics.median(p / r for p, r in pairs if r), 3)
        rows.append(row)
    return {
        "model": spec,
        "new_tokens": tokens,
        "rounds": rounds,
        "memory_bandwidth_gbs": bandwidth,
        "weights_bytes": weights,
        "read_bytes_per_token": per_token,
        "bandwidth_limit_tokens_per_s": round(limit, 1),
        "read_bandwidth_gbs": read,
        "read_limit_tokens_per_s": round(read_limit, 1),
        "threads": raw.context_params.n_threads,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_before": load_before,
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "variants": rows,
    }

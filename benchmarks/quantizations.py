"""``python -m benchmarks quantizations``: packaged GGUFs of one model in different quantizations, paired in one
process: prefill and decode tokens/s, decode as a fraction of each file's bandwidth limit, and perplexity on the
packaged corpus.

Each file gets a context with :func:`planwerk.models.llamacpp.load_llama`'s settings. Every round evaluates the same
prompt and decodes the same number of greedy tokens with each, in alternating order (as listed in even rounds,
reversed in odd ones), so the machine's other load falls on all alike; the figures are medians over the rounds. A
file's bandwidth limit is the memory bandwidth measured in the same run divided by the bytes one decoded token reads
from that file (:func:`benchmarks.backends.gguf_bytes_read_per_token`), so a smaller file has a higher limit.
Perplexity is over the packaged corpus's text in windows of :data:`PERPLEXITY_WINDOW` tokens: what a quantization
costs in predicting German prose, the language of the travel profile's corpus. The last line of stdout is one JSON
object with ``--json``.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import Any

PERPLEXITY_WINDOW = 1024
"""Tokens per perplexity window (each window starts with an empty context)."""


def corpus_text() -> str:
    """The packaged corpus's documents, joined."""
    from planwerk.rag.corpus import packaged_corpus

    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(packaged_corpus().glob("*.txt")))


def perplexity(model_path: str, text: str, window: int = PERPLEXITY_WINDOW) -> tuple[float, int]:
    """The perplexity of ``text`` under the GGUF at ``model_path``, and the number of tokens predicted."""
    import numpy as np

    from planwerk.models.llama_cpp_lib import import_llama_cpp

    llama = import_llama_cpp().Llama(model_path=model_path, n_ctx=window, n_batch=512, logits_all=True, verbose=False)
    ids = llama.tokenize(text.encode("utf-8"), add_bos=False)
    total, count = 0.0, 0
    for start in range(0, len(ids), window):
        part = ids[start : start + window]
        if len(part) < 2:
            break
        llama.reset()
        llama.eval(part)
        logits = np.asarray(llama.scores[: len(part)], dtype=np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        total -= float(log_probs[np.arange(len(part) - 1), part[1:]].sum())
        count += len(part) - 1
    del llama
    return math.exp(total / count), count


def run(
    specs: Sequence[str] = ("default", "qwen2.5-coder-0.5b-q4_0", "qwen2.5-coder-0.5b-q8_0"),
    tokens: int = 128,
    rounds: int = 3,
    progress: Callable[[str], None] | None = None,
    prompt_tokens: int = 0,
) -> dict[str, Any]:
    """Per packaged model: median prefill and decode tokens/s, the decode's bandwidth fraction, perplexity; the
    prompt one short line, or about ``prompt_tokens`` tokens of the corpus (a planner's prompt is 1,500-6,000)."""
    from benchmarks.backends import gguf_bytes_read_per_token, memory_bandwidth_gbs
    from benchmarks.llama_settings import REQUEST, long_prompt, timed_generation
    from planwerk.models.llamacpp import load_llama
    from planwerk.models.packaged import ensure_packaged_model
    from planwerk.models.specs import DEFAULT_PACKAGED, PACKAGED_MODELS, parse_model_spec

    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    paths = {}
    for spec in specs:
        parsed = parse_model_spec(spec)
        if parsed.kind not in ("default", "packaged"):
            raise ValueError(f"model {spec!r}: expected a packaged model ({', '.join(PACKAGED_MODELS)})")
        paths[spec] = ensure_packaged_model(PACKAGED_MODELS[parsed.target or DEFAULT_PACKAGED])
    load_before = [round(x, 1) for x in os.getloadavg()]
    llamas = {spec: load_llama(path) for spec, path in paths.items()}
    first = next(iter(llamas.values()))
    ids = first.tokenize((long_prompt(first, prompt_tokens) if prompt_tokens else REQUEST).encode("utf-8"))
    prefill: dict[str, list[float]] = {spec: [] for spec in specs}
    decode: dict[str, list[float]] = {spec: [] for spec in specs}
    bandwidth = memory_bandwidth_gbs()
    for index in range(rounds):
        for spec in list(specs) if index % 2 == 0 else list(reversed(specs)):
            prefill_rate, decode_rate = timed_generation(llamas[spec], ids, tokens)
            prefill[spec].append(prefill_rate)
            decode[spec].append(decode_rate)
            say(f"round {index + 1}/{rounds} {spec}: prefill {prefill[spec][-1]:.1f}, decode {decode[spec][-1]:.2f}")
    del llamas
    text = corpus_text()
    rows = {}
    for spec, path in paths.items():
        limit = bandwidth * 1e9 / gguf_bytes_read_per_token(path)
        value, predicted = perplexity(str(path), text)
        say(f"{spec}: perplexity {value:.2f} over {predicted} tokens")
        rows[spec] = {
            "file": path.name,
            "file_mb": round(path.stat().st_size / 1e6, 1),
            "read_mb_per_token": round(gguf_bytes_read_per_token(path) / 1e6, 1),
            "prefill_tokens_per_s": round(statistics.median(prefill[spec]), 1),
            "decode_tokens_per_s": round(statistics.median(decode[spec]), 2),
            "bandwidth_limit_tokens_per_s": round(limit, 1),
            "bandwidth_fraction": round(statistics.median(decode[spec]) / limit, 3),
            "decode_over_first": round(statistics.median(decode[spec]) / statistics.median(decode[specs[0]]), 3),
            "perplexity": round(value, 2),
            "perplexity_tokens": predicted,
        }
    return {
        "prompt_tokens": len(ids),
        "new_tokens": tokens,
        "rounds": rounds,
        "memory_bandwidth_gbs": round(bandwidth, 2),
        "load_average_before": load_before,
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "models": rows,
    }

"""``python -m benchmarks llama-settings``: llama.cpp context settings side by side on the same GGUF, paired in one
process: prompt (prefill) and decode tokens/s, and decode as a fraction of the bandwidth limit.

Each setting gets its own context over the same packaged GGUF, with :func:`planwerk.models.llamacpp.load_llama`'s
size, batch and threads and the setting's keywords on top (``base``: none). Every round evaluates the same prompt and
decodes the same greedy tokens with each, in alternating order (as listed in even rounds, reversed in odd ones), so
the machine's other load falls on all alike; the figures are medians over the rounds. The prompt is short (a
one-line request) or long (``--prompt-tokens``: a planner-sized prompt of about that many tokens, built from the
packaged corpus), since attention's share of a decoded token grows with the context. The bandwidth limit is the
one of :mod:`benchmarks.decode_loop`. The last line of stdout is one JSON object with ``--json``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

SETTINGS: Mapping[str, Mapping[str, Any]] = {
    "base": {},
    "flash_attn": {"flash_attn": True},
    "no_mmap": {"use_mmap": False},
    "flash_attn_q8_kv": {"flash_attn": True, "type_k": 8, "type_v": 8},  # GGML_TYPE_Q8_0
    # Half the cores: decode that halves with them is bound by arithmetic, not by memory bandwidth.
    "one_thread": {"n_threads": 1, "n_threads_batch": 1},
}
"""The settings compared, by name: keywords of ``llama_cpp.Llama`` on top of planwerk's."""

REQUEST = "Write a short story of about 300 words about a lighthouse keeper."


def long_prompt(llama: Any, tokens: int) -> str:
    """About ``tokens`` tokens: the packaged corpus's text, as much as fits, then :data:`REQUEST`."""
    from planwerk.rag.corpus import packaged_corpus

    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted(packaged_corpus().glob("*.txt")))
    ids = llama.tokenize(text.encode("utf-8"), add_bos=False)
    while len(ids) < tokens:
        ids = ids + ids
    return llama.detokenize(ids[:tokens]).decode("utf-8", "ignore") + "\n\n" + REQUEST


def timed_generation(llama: Any, ids: list[int], tokens: int) -> tuple[float, float]:
    """Prefill and decode tokens/s of one greedy generation of ``tokens`` tokens after ``ids``, from an empty
    context (the first token's arrival ends the prefill)."""
    llama.reset()
    start = time.perf_counter()
    first: float | None = None
    count = 0
    for _ in llama.generate(ids, temp=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0):
        if first is None:
            first = time.perf_counter()
            continue
        count += 1
        if count >= tokens:
            break
    assert first is not None, "the model generated nothing"
    return len(ids) / (first - start), count / (time.perf_counter() - first)


def run(
    spec: str = "default",
    tokens: int = 128,
    rounds: int = 3,
    prompt_tokens: int = 0,
    settings: tuple[str, ...] = tuple(SETTINGS),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Per setting: median prefill and decode tokens/s and the decode's bandwidth fraction."""
    from benchmarks.backends import gguf_bytes_read_per_token, memory_bandwidth_gbs
    from planwerk.models.llamacpp import import_llama_cpp, load_llama
    from planwerk.models.packaged import ensure_packaged_model
    from planwerk.models.specs import DEFAULT_PACKAGED, PACKAGED_MODELS, parse_model_spec

    unknown = [name for name in settings if name not in SETTINGS]
    if unknown:
        raise ValueError(f"unknown settings {unknown}: expected some of {list(SETTINGS)}")
    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    parsed = parse_model_spec(spec)
    if parsed.kind not in ("default", "packaged"):
        raise ValueError(f"model {spec!r}: expected a packaged model (default or qwen2.5-coder-1.5b)")
    path = ensure_packaged_model(PACKAGED_MODELS[parsed.target or DEFAULT_PACKAGED])
    load_before = [round(x, 1) for x in os.getloadavg()]
    base = load_llama(path)
    Llama = import_llama_cpp().Llama
    common = {
        "model_path": str(path),
        "n_ctx": base.context_params.n_ctx,
        "n_batch": base.context_params.n_batch,
        "n_threads": base.context_params.n_threads,
        "n_threads_batch": base.context_params.n_threads_batch,
        "verbose": False,
    }
    contexts = {name: base if not SETTINGS[name] else Llama(**{**common, **SETTINGS[name]}) for name in settings}
    prompt = long_prompt(base, prompt_tokens) if prompt_tokens else REQUEST
    ids = base.tokenize(prompt.encode("utf-8"))
    prefill: dict[str, list[float]] = {name: [] for name in settings}
    decode: dict[str, list[float]] = {name: [] for name in settings}
    bandwidth = memory_bandwidth_gbs()
    for index in range(rounds):
        order = list(settings) if index % 2 == 0 else list(reversed(settings))
        for name in order:
            prefill_rate, decode_rate = timed_generation(contexts[name], ids, tokens)
            prefill[name].append(prefill_rate)
            decode[name].append(decode_rate)
            say(f"round {index + 1}/{rounds} {name}: prefill {prefill[name][-1]:.1f}, decode {decode[name][-1]:.2f}")
    limit = bandwidth * 1e9 / gguf_bytes_read_per_token(path)
    rows = {
        name: {
            "prefill_tokens_per_s": round(statistics.median(prefill[name]), 1),
            "decode_tokens_per_s": round(statistics.median(decode[name]), 2),
            "bandwidth_fraction": round(statistics.median(decode[name]) / limit, 3),
            "decode_over_base": round(statistics.median(decode[name]) / statistics.median(decode[settings[0]]), 3),
            "prefill_over_base": round(statistics.median(prefill[name]) / statistics.median(prefill[settings[0]]), 3),
        }
        for name in settings
    }
    return {
        "model": spec,
        "prompt_tokens": len(ids),
        "new_tokens": tokens,
        "rounds": rounds,
        "memory_bandwidth_gbs": round(bandwidth, 2),
        "bandwidth_limit_tokens_per_s": round(limit, 1),
        "load_average_before": load_before,
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "settings": rows,
    }

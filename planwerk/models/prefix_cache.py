"""Reuse the KV cache of a long static prompt prefix (system message: persona, rules, tool catalog).

As transformers documents for prompt reuse: run the prefix through the model once into a ``DynamicCache``,
then give every later ``generate`` a ``copy.deepcopy`` of it as ``past_key_values``; generate only computes the
tokens after the cached ones. Entries are keyed by the prefix's token ids (a digest of them) and kept in a
small LRU. Safe to use from several threads: building and copying happen under a lock, and a copy is private
to its call.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PrefixCacheStats:
    """Counters for the benchmark and logs."""

    hits: int
    misses: int
    entries: int


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_key(token_ids: Sequence[int]) -> str:
    """A short, stable key for a token-id sequence."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(len(token_ids).to_bytes(8, "little"))
    for token in token_ids:
        digest.update(int(token).to_bytes(4, "little", signed=False))
    return digest.hexdigest()


class PrefixCache:
    """An LRU of precomputed KV caches for prompt prefixes of one model."""

    def __init__(self, model: Any, max_entries: int = 4, min_tokens: int = 32):
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self._model = model
        self.max_entries = max_entries
        self.min_tokens = min_tokens
        """Shorter prefixes are not worth a cache entry."""
        self._entries: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def stats(self) -> PrefixCacheStats:
        """Hits, misses and current size."""
        with self._lock:
            return PrefixCacheStats(self._hits, self._misses, len(self._entries))

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def past_for(self, prefix_ids: Sequence[int]) -> Any | None:
        """A private copy of the KV cache for ``prefix_ids`` (computed on first use), or ``None`` when the
        prefix is too short to bother."""
        if len(prefix_ids) < self.min_tokens:
            return None
        key = prefix_key(prefix_ids)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self._misses += 1
                entry = self._build(prefix_ids)
                self._entries[key] = entry
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            else:
                self._hits += 1
                self._entries.move_to_end(key)
            # generate() appends to the cache in place, so every call gets its own copy
            return copy.deepcopy(entry)

    def _build(self, prefix_ids: Sequence[int]) -> Any:
        import torch
        from transformers import DynamicCache

        started = time.perf_counter()
        device = next(self._model.parameters()).device
        ids = torch.tensor([list(prefix_ids)], dtype=torch.long, device=device)
        cache = DynamicCache(config=self._model.config)
        with torch.no_grad():  # not inference_mode: generate later appends to copies of these tensors
            self._model(input_ids=ids, use_cache=True, **{cache_keyword(self._model): cache})
        log.info("cached the KV of a %d-token prompt prefix in %.2f s", len(prefix_ids), time.perf_counter() - started)
        return cache


def cache_keyword(model: Any) -> str:
    """The keyword a transformers model takes its KV cache under: ``cache`` since transformers renamed it (the old
    ``past_key_values`` still works there but prints a FutureWarning on every call, into the user's terminal),
    ``past_key_values`` before. ``generate`` takes the name its model's ``forward`` takes; a subclass whose
    ``forward`` only passes ``*args, **kwargs`` on takes what its base class names."""
    for cls in type(model).__mro__:
        forward = vars(cls).get("forward")
        parameters = inspect.signature(forward).parameters if callable(forward) else {}
        for name in ("cache", "past_key_values"):
            if name in parameters:
                return name
    return "past_key_values"

"""Constrained decoding with xgrammar: JSON schemas and EBNF grammars compiled once per tokenizer and text.

``xgr.contrib.hf.LogitsProcessor`` keeps matcher state, so every ``generate`` call gets a new processor; the
compiled grammar behind it is cached (compiling the plan schema for the 151k Qwen vocab takes ~0.5 s once).
Output is compact JSON (no free whitespace): a small model given free whitespace pretty-prints itself into
``max_new_tokens``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)


class SchemaCompileError(ValueError):
    """xgrammar could not compile a JSON schema (unsupported keyword or malformed schema) or an EBNF grammar."""


def schema_text(schema: Mapping[str, Any]) -> str:
    """The schema as JSON text, keys in their given order (xgrammar emits properties in schema order)."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


class GrammarCache:
    """Compiles JSON schemas and EBNF grammars for one tokenizer and hands out fresh logits processors."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_token_ids: Iterable[int], max_entries: int = 16) -> None:
        self._tokenizer = tokenizer
        self._vocab_size = vocab_size
        self._stop_token_ids = sorted(set(stop_token_ids))
        self._compiler: Any = None
        self._compiled: OrderedDict[str, Any] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def _grammar_compiler(self) -> Any:
        import xgrammar as xgr

        if self._compiler is None:
            started = time.perf_counter()
            info = xgr.TokenizerInfo.from_huggingface(
                self._tokenizer, vocab_size=self._vocab_size, stop_token_ids=self._stop_token_ids
            )
            self._compiler = xgr.GrammarCompiler(info, max_threads=2)
            log.info("xgrammar tokenizer info ready in %.2f s", time.perf_counter() - started)
        return self._compiler

    def compiled(self, schema: Mapping[str, Any]) -> Any:
        """The compiled grammar for the JSON schema ``schema`` (compiled on first use, then cached)."""
        text = schema_text(schema)
        return self._cached(
            "json:" + text,
            "JSON schema",
            lambda compiler: compiler.compile_json_schema(
                text, any_whitespace=False, separators=(",", ":"), strict_mode=True
            ),
        )

    def compiled_ebnf(self, ebnf: str) -> Any:
        """The compiled grammar for the EBNF text ``ebnf`` (root rule ``root``; compiled on first use, then cached)."""
        return self._cached("ebnf:" + ebnf, "EBNF grammar", lambda compiler: compiler.compile_grammar(ebnf))

    def _cached(self, key: str, kind: str, compile_with: Callable[[Any], Any]) -> Any:
        with self._lock:
            grammar = self._compiled.get(key)
            if grammar is not None:
                self._compiled.move_to_end(key)
                return grammar
            started = time.perf_counter()
            try:
                grammar = compile_with(self._grammar_compiler())
            except Exception as exc:  # xgrammar raises RuntimeError/ValueError with its own message
                raise SchemaCompileError(f"xgrammar cannot compile the {kind}: {exc}") from exc
            log.info("compiled a %s in %.2f s", kind, time.perf_counter() - started)
            self._compiled[key] = grammar
            while len(self._compiled) > self._max_entries:
                self._compiled.popitem(last=False)
            return grammar

    def logits_processor(self, schema: Mapping[str, Any] | None = None, *, ebnf: str | None = None) -> Any:
        """A new single-use logits processor that admits only JSON matching ``schema`` or only text of the EBNF
        grammar ``ebnf`` (exactly one of them)."""
        import xgrammar as xgr

        if (schema is None) == (ebnf is None):
            raise ValueError("logits_processor takes a JSON schema or an EBNF grammar, exactly one")
        compiled = self.compiled(schema) if schema is not None else self.compiled_ebnf(ebnf or "")
        return xgr.contrib.hf.LogitsProcessor(compiled)

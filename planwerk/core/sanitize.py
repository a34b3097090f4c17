"""Making tool data storable: a depth cap and no lone surrogates, so every value checkpoints and serialises.

Two things in a tool result (or in arguments resolved from one) break the run after the fact:

- **Depth.** LangGraph's checkpoint serialiser (msgpack) gives up at 255 levels ("Recursion limit reached"), after
  the answer was printed, so nothing is stored and every resume calls the tool again. Values are cut at
  :attr:`SanitizePolicy.max_depth` (64, far below that and far above any real result); a deeper subtree is kept
  as its JSON text inside a marker object that says so.
- **Lone surrogates** (``"\\ud800"``, from JSON escapes or from undecodable bytes) cannot be encoded as UTF-8:
  sending one to an MCP server breaks that server's session, printing one breaks the CLI. They become U+FFFD.

Pure and copy-on-write: a clean value comes back as the very same object (identity is kept, nothing is copied).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes (the Unicode replacement character)."""
DEPTH_NOTE_KEY = "$nested_too_deep"
"""The key of the marker object that replaces a subtree nested deeper than the policy allows."""
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class SanitizePolicy:
    """Limits applied to every tool result and every resolved argument."""

    max_depth: int = 64
    """Containers (objects, lists) nested deeper than this are replaced by their JSON text in a marker object."""


DEFAULT_POLICY = SanitizePolicy()


@dataclass(frozen=True)
class Sanitized:
    """A sanitized value and what was changed in it."""

    value: Any
    cut_subtrees: int = 0
    """Subtrees nested deeper than the limit that were replaced by a marker."""
    surrogates: int = 0
    """Lone surrogates replaced by U+FFFD (in strings and in object keys)."""

    @property
    def changed(self) -> bool:
        """Whether anything was replaced."""
        return bool(self.cut_subtrees or self.surrogates)


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when there is none)."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (which UTF-8 cannot encode)."""
    return _SURROGATE.search(text) is not None


def sanitize(value: Any, policy: SanitizePolicy = DEFAULT_POLICY) -> Sanitized:
    """``value`` with subtrees deeper than ``policy.max_depth`` cut and lone surrogates replaced."""
    counts = [0, 0]  # cut subtrees, surrogates
    return Sanitized(_walk(value, 0, policy.max_depth, counts), cut_subtrees=counts[0], surrogates=counts[1])


def sanitize_value(value: Any, policy: SanitizePolicy = DEFAULT_POLICY) -> Any:
    """Just the sanitized value of :func:`sanitize`."""
    return sanitize(value, policy).value


def depth_marker(subtree: Any, max_depth: int) -> dict[str, str]:
    """The object that stands in for ``subtree``: a note and, when it can be written, the subtree's JSON text."""
    note = f"nested deeper than {max_depth} levels; this part is kept as JSON text"
    try:
        text = json.dumps(subtree, ensure_ascii=True, default=str)
    except (RecursionError, ValueError, TypeError):  # deeper than the interpreter can walk: keep only the note
        return {DEPTH_NOTE_KEY: f"nested deeper than {max_depth} levels (too deep to keep)"}
    # ensure_ascii writes lone surrogates as \\udXXX escapes, so the text itself is valid UTF-8.
    return {DEPTH_NOTE_KEY: note, "json": text}


def _walk(value: Any, depth: int, max_depth: int, counts: list[int]) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        counts[1] += len(_SURROGATE.findall(value))
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, Mapping):
        if depth >= max_depth:
            counts[0] += 1
            return depth_marker(value, max_depth)
        changed = not isinstance(value, dict)  # a non-dict mapping becomes a plain dict (it must serialise)
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = _walk(key, depth, max_depth, counts) if isinstance(key, str) else key
            new_item = _walk(item, depth + 1, max_depth, counts)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    if isinstance(value, list | tuple):
        if depth >= max_depth:
            counts[0] += 1
            return depth_marker(value, max_depth)
        items = [_walk(item, depth + 1, max_depth, counts) for item in value]
        if isinstance(value, list) and all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value

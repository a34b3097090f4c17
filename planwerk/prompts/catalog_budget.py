"""The tool catalog within a token budget: with more tools than fit, the ones most relevant to the question.

A small model's window (32,768 tokens for the default model) holds the persona, examples, retrieved context,
history and the catalog; 2,000 tools render to about 125,000 tokens. :func:`cap_catalog` keeps the catalog under
``Context.catalog_max_tokens``: every tool is scored by how many of the question's words (case- and accent-folded)
its name, description and argument names share, each word weighted by how rare it is in the catalog (IDF), and the
best ones are kept until the budget is spent. The planner's node reports the cut with a ``catalog_capped`` event
(how many tools were left out). Tools left out stay callable; the plan check knows every tool.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from planwerk.core.tools import ToolSpec
from planwerk.prompts.render import render_tool
from planwerk.prompts.texts import GERMAN, PromptTexts
from planwerk.text.places import fold

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class CatalogCut:
    """What :func:`cap_catalog` kept and how many it left out."""

    specs: dict[str, ToolSpec]
    left_out: int
    tokens: int
    """The kept catalog's estimated size in tokens."""


def estimate_tokens(text: str) -> int:
    """A rough token count: about four characters per token for the code-like catalog lines."""
    return len(text) // 4 + 1


def _words(text: str) -> set[str]:
    # snake_case and camelCase names count as their words: get_weather -> get, weather.
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return {fold(word) for word in _WORD.findall(spaced) if len(word) > 1}


def _tool_words(spec: ToolSpec) -> set[str]:
    properties = (spec.input_schema or {}).get("properties") or {}
    return _words(" ".join([spec.name, spec.description or "", *map(str, properties)]))


def cap_catalog(
    specs: Mapping[str, ToolSpec], question: str, max_tokens: int, texts: PromptTexts = GERMAN
) -> CatalogCut:
    """``specs`` as they are when their catalog fits in ``max_tokens``, else the most relevant tools that fit."""
    lines = {name: render_tool(spec, texts) for name, spec in specs.items()}
    sizes = {name: estimate_tokens(line) for name, line in lines.items()}
    total = sum(sizes.values())
    if total <= max_tokens:
        return CatalogCut(dict(specs), 0, total)
    words = {name: _tool_words(spec) for name, spec in specs.items()}
    frequency = Counter(word for found in words.values() for word in found)
    asked = _words(question)
    count = len(specs)

    def score(name: str) -> float:
        return sum(math.log(1 + count / frequency[word]) for word in asked & words[name])

    # Best score first; ties by name, so the same question shows the same tools (a stable prompt prefix).
    ranked = sorted(specs, key=lambda name: (-score(name), name))
    kept: dict[str, ToolSpec] = {}
    used = 0
    for name in ranked:
        if used + sizes[name] > max_tokens:
            continue  # a smaller, less relevant tool may still fit
        kept[name] = specs[name]
        used += sizes[name]
    return CatalogCut(kept, count - len(kept), used)

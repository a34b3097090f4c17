"""Few-shot examples: solved plans, chosen per question.

Small models copy the shape of the example they are shown, so the example should resemble the question and use
only tools that are loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Example:
    """A question and the plan that answers it."""

    question: str
    plan: dict[str, Any] = field(hash=False)

    @property
    def tools(self) -> frozenset[str]:
        """The tool names the plan uses."""
        return frozenset(call["name"] for step in self.plan.get("steps", []) for call in step.get("tools", []))


@cache
def library(name: str = "travel") -> tuple[Example, ...]:
    """The packaged examples of a profile."""
    text = resources.files("planwerk.prompts").joinpath("examples", f"{name}.json").read_text(encoding="utf-8")
    return tuple(Example(item["question"], item["plan"]) for item in json.loads(text))


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2}


def select_examples(
    question: str,
    tool_names: Collection[str],
    k: int = 1,
    examples: Iterable[Example] | None = None,
) -> list[Example]:
    """The ``k`` examples most similar to ``question`` among those whose tools are all loaded."""
    pool = [e for e in (examples if examples is not None else library()) if e.tools <= set(tool_names)]
    words = _words(question)
    ranked = sorted(pool, key=lambda e: -len(words & _words(e.question)) / (1 + len(_words(e.question))))
    return ranked[:k]

"""Profiles: persona, allowed tools and corpus. Another domain is a new profile, not a new graph."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from planwerk.prompts.math import MATH_PERSONA
from planwerk.prompts.travel import PERSONA as TRAVEL_PERSONA
from planwerk.prompts.travel import REFUSAL_OUT_OF_SCOPE, REFUSAL_OUT_OF_SCOPE_EN

Language = Literal["de", "en"]
"""Languages planwerk's prompts and fixed texts exist in."""


@dataclass(frozen=True)
class Profile:
    """What the agent is for."""

    name: str
    persona: str
    """The system prompt's first part: who the assistant is and what it refuses."""
    allowed_tools: frozenset[str] | None = None
    """Tool names plans may use (enforced by the plan check); ``None`` allows every loaded tool."""
    corpus: str | None = "default"
    """Which retrieval corpus to search: ``default`` is the packaged one, ``None`` disables retrieval."""
    examples: str = "travel"
    """Which packaged example library to choose few-shot examples from."""
    language: Language = "de"
    """The language of the protocol, the rules, the repair feedback and planwerk's own texts for this profile."""
    uses_dates: bool = True
    """Whether dates in the question are resolved in code and named in the planner's prompt (travel: yes; math: no,
    its numbers are not dates)."""
    approve: frozenset[str] = frozenset()
    """Tool names whose calls pause for a person's approval (besides tools a server marks destructive)."""
    refusals: Mapping[str, str] = field(default_factory=dict)
    """The profile's refusal by language code: the deterministic answer when the answer check failed twice and no
    tool ran and no retrieved chunk answers (an out-of-domain question); without one, a generic honest sentence."""
    answer_is_last_result: bool = False
    """Whether the answer is the last call's result (a calculation chain): the answer check then requires it,
    and the deterministic answer states it ("The result is 126.")."""


PROFILES: dict[str, Profile] = {
    # A trip planner also calculates budgets and distances: the travel profile may use the math tools too.
    "travel": Profile(
        name="travel",
        persona=TRAVEL_PERSONA,
        refusals={"de": REFUSAL_OUT_OF_SCOPE, "en": REFUSAL_OUT_OF_SCOPE_EN},
    ),
    "math": Profile(
        name="math",
        persona=MATH_PERSONA,
        corpus=None,
        examples="math",
        language="en",
        uses_dates=False,
        answer_is_last_result=True,
    ),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known profiles: {', '.join(sorted(PROFILES))}") from None

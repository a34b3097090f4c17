"""Profiles: persona, allowed tools and corpus. Another domain is a new profile, not a new graph."""

from __future__ import annotations

from dataclasses import dataclass

from planwerk.prompts.math import MATH_PERSONA
from planwerk.prompts.travel import PERSONA as TRAVEL_PERSONA


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
    approve: frozenset[str] = frozenset()
    """Tool names whose calls pause for a person's approval (besides tools a server marks destructive)."""


PROFILES: dict[str, Profile] = {
    # A trip planner also calculates budgets and distances: the travel profile may use the math tools too.
    "travel": Profile(name="travel", persona=TRAVEL_PERSONA),
    "math": Profile(name="math", persona=MATH_PERSONA, corpus=None, examples="math"),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known profiles: {', '.join(sorted(PROFILES))}") from None

"""Routing by pure functions of the state: after the verifier, and through the answer loop (the other nodes route
with ``Command``). Each returns a ``Literal``, so the drawn graph (Studio, ``draw_mermaid``) shows every branch."""

from __future__ import annotations

from typing import Literal

from planwerk.graph.state import AgentState

VerifyRoute = Literal["answer", "plan", "ask_user"]
AnswerRoute = Literal["check_answer", "fallback"]
CheckAnswerRoute = Literal["regenerate", "fallback", "__end__"]

MAX_DRAFTS = 2
"""Model answers per question: the first and one regeneration; a second rejection ends in the fallback."""


def after_verify(state: AgentState) -> VerifyRoute:
    """Where the verifier's decision leads."""
    verdict = state.get("verdict", "done")
    if verdict in ("self_correct", "replan", "next_round"):
        return "plan"
    if verdict == "ask_user":
        return "ask_user"
    return "answer"


def after_answer(state: AgentState) -> AnswerRoute:
    """A draft is checked; without one (no plan passed, or nothing was delivered for the question) the
    deterministic answer follows."""
    return "check_answer" if state.get("draft") is not None else "fallback"


def after_check_answer(state: AgentState) -> CheckAnswerRoute:
    """An accepted draft ends the run (it was delivered); a rejected first draft is regenerated, a rejected second
    one replaced by the deterministic answer."""
    draft = state.get("draft")
    if draft is None or draft.get("verdict") == "accepted":
        return "__end__"
    return "regenerate" if draft.get("attempt", 1) < MAX_DRAFTS else "fallback"

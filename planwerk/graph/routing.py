"""Routing after the verifier: a pure function of the state (the other nodes route with ``Command``)."""

from __future__ import annotations

from typing import Literal

from planwerk.graph.state import AgentState

VerifyRoute = Literal["finalize", "plan", "ask_user"]


def after_verify(state: AgentState) -> VerifyRoute:
    """Where the verifier's decision leads."""
    verdict = state.get("verdict", "done")
    if verdict in ("self_correct", "replan", "next_round"):
        return "plan"
    if verdict == "ask_user":
        return "ask_user"
    return "finalize"

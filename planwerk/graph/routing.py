"""Routing: pure functions of the state."""

from __future__ import annotations

from typing import Literal

from planwerk.graph.state import AgentState


def after_plan(state: AgentState) -> Literal["execute", "ask_user", "finalize", "plan"]:
    """Where the planner's outcome leads."""
    return state.get("route", "finalize")


def after_verify(state: AgentState) -> Literal["finalize", "plan", "ask_user"]:
    """Where the verifier's decision leads."""
    verdict = state.get("verdict", "done")
    if verdict in ("self_correct", "replan"):
        return "plan"
    if verdict == "ask_user":
        return "ask_user"
    return "finalize"

"""The planner: one model call that writes a plan, parsed tolerantly and checked before anything runs."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from planwerk.core.checking import check_plan
from planwerk.core.parsing import PlanParseError, parse_plan
from planwerk.core.plan_schema import plan_json_schema
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState, PlanRoute
from planwerk.models.base import SupportsPlanSchema
from planwerk.nodes.common import (
    event,
    history_before_question,
    profile_of,
    reply_text,
    today_of,
    usage_of,
    visible_specs,
)
from planwerk.prompts.examples import library, select_examples
from planwerk.prompts.protocol import REPAIR_INSTRUCTIONS
from planwerk.prompts.render import build_plan_messages, trim_history

MAX_FEEDBACK_TURNS = 2
"""Earlier rejected replies shown to the planner (the latest ones)."""


def question_with_clarifications(state: AgentState) -> str:
    """The question plus the user's answers to earlier ``ask_user`` questions."""
    text = state["question"]
    for item in state.get("clarifications", []):
        text += f"\nRückfrage: {item['question']}\nAntwort des Nutzers: {item['answer']}"
    return text


async def plan(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Ask the model for a plan; on a reply that does not parse or check, send the problems back (bounded)."""
    context = runtime.context
    profile = profile_of(context)
    specs = visible_specs(deps.tools, profile)
    model = await deps.model_for(context.model)
    feedback = state.get("feedback", [])[-MAX_FEEDBACK_TURNS:]

    def prepare() -> tuple[Any, list[Any]]:
        # Blocking work, so it runs in a worker thread: compiling the plan grammar (seconds, once per tool set),
        # ranking examples (embeds the question; loads the embedder on first use) and resolving the question's
        # dates (dateparser reads its language data on first use). The event loop keeps serving other runs.
        planner = model
        if context.constrained_decoding and specs and isinstance(model, SupportsPlanSchema):
            planner = model.with_plan_schema(plan_json_schema(specs))
        examples = select_examples(state["question"], specs, k=1, examples=library(profile.examples))
        messages = build_plan_messages(
            persona=profile.persona,
            specs=specs,
            examples=examples,
            question=question_with_clarifications(state),
            today=today_of(context),
            hits=state.get("context", []),
            history=trim_history(history_before_question(state), context.history_max_tokens),
            user_fields=state.get("user", {}),
            feedback=[(item["reply"], item["problems"]) for item in feedback],
        )
        return planner, messages

    model, messages = await asyncio.to_thread(prepare)
    reply = await model.ainvoke(messages, config={"tags": ["planwerk:plan"]})
    text = reply_text(reply)
    attempts = state.get("attempts", 0) + 1
    update: dict[str, Any] = {"attempts": attempts, "usage": usage_of(reply, messages)}
    try:
        parsed = parse_plan(text)
        problems = check_plan(
            parsed,
            deps.tools.specs,
            user_fields=state.get("user", {}).keys(),
            allowed_tools=profile.allowed_tools,
            available=state.get("results", {}).keys(),
        )
    except PlanParseError as error:
        parsed, problems = None, [str(error)]
    if problems:
        runtime.stream_writer(event("replan", reason="\n".join(problems), attempt=attempts))
        retry: PlanRoute = "plan" if attempts < context.max_plan_attempts else "finalize"
        rejected = {"reply": text[:4000], "problems": REPAIR_INSTRUCTIONS.format(problems="\n".join(problems))}
        return {**update, "plan": None, "plan_errors": problems, "feedback": [*feedback, rejected], "route": retry}
    assert parsed is not None
    runtime.stream_writer(event("plan", plan=parsed.model_dump()))
    route: PlanRoute = "ask_user" if parsed.ask_user else ("execute" if parsed.call_count else "finalize")
    return {
        **update,
        "plan": parsed.model_dump(),
        "plan_errors": [],
        "feedback": [],
        "pending_question": parsed.ask_user,
        "route": route,
    }

"""The planner: one model call that writes a plan. Parsing and checking it is the ``check`` node's job.

A call after a rejected reply or a failed plan (there is feedback) is a retry: greedy decoding of a nearly identical
prompt gave byte-identical replies on every retry (measured with the 0.5B model), so a retry samples at
``Context.retry_temperature`` (seeded with the attempt number: reruns are reproducible) and sees other examples
(:func:`planwerk.prompts.examples.examples_for_attempt`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from planwerk.core.calls import results_of
from planwerk.core.expression_grammar import expression_grammar
from planwerk.core.parsing import repeats_a_call
from planwerk.core.plan import PlanFormat
from planwerk.core.plan_schema import plan_json_schema
from planwerk.core.rounds import summarize_results
from planwerk.core.tools import ToolSpec
from planwerk.events import CatalogCappedEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.common import (
    context_of,
    history_before_question,
    lost_model_calls,
    prompt_today,
    question_of,
    reply_text,
    usage_of,
    visible_specs,
)
from planwerk.graph.nodes.probe import probed_specs
from planwerk.graph.run_context import model_spec_of, profile_of
from planwerk.graph.state import AgentState, add_usage
from planwerk.models.base import (
    SupportsBatchSampling,
    SupportsPlanGrammar,
    SupportsPlanSchema,
    SupportsTextStop,
    sample_replies,
    sampling_variant,
)
from planwerk.profiles import Profile
from planwerk.prompts.catalog_budget import cap_catalog
from planwerk.prompts.examples import library
from planwerk.prompts.render import build_plan_messages, trim_history
from planwerk.prompts.texts import GERMAN, PromptTexts, texts_for
from planwerk.prompts.zero_shot import examples_for_question
from planwerk.text.conversation import referent_question
from planwerk.text.gazetteer import default_gazetteer

MAX_FEEDBACK_TURNS = 2
"""Earlier rejected replies shown to the planner (the latest ones)."""
PLAN_TAGS = ("planwerk:plan", TAG_NOSTREAM)
"""The planner's JSON is the engine's business, not the chat's: ``nostream`` keeps it out of ``messages`` streams."""


def question_with_clarifications(state: AgentState, texts: PromptTexts = GERMAN) -> str:
    """The question, the earlier question a follow-up continues ("Und morgen? (vorherige Frage: …)", the shape of
    the library's follow-up examples) and the user's answers to earlier ``ask_user`` questions, labelled in
    ``texts``' language."""
    text = question_of(state)
    earlier = [str(m.content) for m in history_before_question(state) if isinstance(m, HumanMessage)]
    if referent := referent_question(text, earlier):
        text += texts.previous_question.format(question=referent)
    for item in state.get("clarifications", []):
        text += texts.clarification_turn.format(question=item["question"], answer=item["answer"])
    return text


async def plan(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Ask the model for a plan (with the problems of rejected replies, when there were any)."""
    context = context_of(runtime)
    profile = profile_of(context)
    specs = visible_specs(deps.tools, profile)
    if profile.probe_results:  # result fields of read-only tools without an output schema, from one real result
        specs = await probed_specs(deps.tools, specs, deps.probed, enforce_roots=profile.enforce_roots)
    # More tools than fit the window: the most relevant to the question, and an event saying how many are left out.
    cut = cap_catalog(specs, question_of(state), context.catalog_max_tokens, texts_for(profile))
    if cut.left_out:
        specs = cut.specs
        if not state.get("feedback"):  # once per question, not on every retry
            runtime.stream_writer(
                CatalogCappedEvent(
                    event="catalog_capped",
                    shown=len(cut.specs),
                    left_out=cut.left_out,
                    max_tokens=context.catalog_max_tokens,
                )
            )
    model = await deps.model_for(model_spec_of(context))
    # Replies rejected (or plans failed) since the last plan that passed: 0 on a first call.
    retry = len(state.get("feedback", []))
    feedback = state.get("feedback", [])[-MAX_FEEDBACK_TURNS:]
    rounds = profile.plan_rounds > 0 and state.get("rounds", 0) < profile.plan_rounds

    def prepare_prompt() -> tuple[Any, list[Any]]:
        # Blocking work, so it runs in a worker thread: compiling the plan grammar (seconds, once per tool set),
        # ranking examples (embeds the question; loads the embedder on first use) and resolving the question's
        # dates (dateparser reads its language data on first use). The event loop keeps serving other runs.
        planner = model
        if context.constrained_decoding and specs:
            planner = constrained_planner(model, specs, profile.plan_format, rounds=rounds)
        if retry and context.retry_temperature > 0:
            planner = sampling_variant(
                planner, context.retry_temperature, seed=state.get("attempts", 0), top_p=context.retry_top_p
            )
        # The profile's library, or examples built from the loaded tools when none of its examples fits them.
        examples = examples_for_question(
            question_of(state),
            specs,
            texts_for(profile),
            library(profile.examples),
            k=context.plan_examples,
            retry=retry,
            gazetteer=default_gazetteer(),
        )
        messages = build_plan_messages(
            persona=profile.persona,
            specs=specs,
            examples=examples,
            question=question_with_clarifications(state, texts_for(profile)),
            today=prompt_today(context, profile),
            hits=state.get("hits", []),
            history=trim_history(history_before_question(state), context.history_max_tokens),
            user_fields=state.get("user", {}),
            feedback=[(item["reply"], item["problems"]) for item in feedback],
            texts=texts_for(profile),
            plan_format=profile.plan_format,
            rounds=rounds,
            round_results=round_results(state, profile),
        )
        return planner, messages

    planner, messages = await asyncio.to_thread(prepare_prompt)
    config: RunnableConfig = {"tags": list(PLAN_TAGS)}
    lost = await lost_model_calls()
    if samples := plan_samples(context, profile, retry):
        replies = await sample_replies(
            planner, messages, samples, temperature=context.sample_temperature, seed=state.get("attempts", 0),
            config=config,
        )  # fmt: skip
        return {
            "reply": reply_text(replies[0]),
            "replies": [reply_text(r) for r in replies],
            "attempts": state.get("attempts", 0) + 1,
            "usage": add_usage(
                samples_usage(replies, messages, batched=isinstance(planner, SupportsBatchSampling)),
                {"llm_calls": lost},
            ),
        }
    reply = await planner.ainvoke(messages, config=config)
    return {
        "reply": reply_text(reply),
        "replies": None,
        "attempts": state.get("attempts", 0) + 1,
        "usage": add_usage(usage_of(reply, messages), {"llm_calls": lost}),
    }


def round_results(state: AgentState, profile: Profile) -> str | None:
    """In a later planning round, the summary of the results so far (typed and clipped unless the profile lets
    rounds see raw text: :mod:`planwerk.core.rounds`); ``None`` in a first round."""
    calls = state.get("calls") or []
    if not state.get("rounds") or not (results := results_of(calls)):
        return None
    tools = {call["id"]: call["tool"] for call in calls}
    return summarize_results(results, tools, raw_text=profile.rounds_raw_text)


def constrained_planner(
    model: Any, specs: Mapping[str, ToolSpec], plan_format: PlanFormat, *, rounds: bool = False
) -> Any:
    """``model`` bound to the grammar of valid plans in ``plan_format`` where it can decode under one: the plan JSON
    schema (with ``"next_round"`` when ``rounds``), or the EBNF of expressions over the loaded tools; else ``model``
    (its replies meet the parser and the check unconstrained). A JSON plan also ends where it starts over (a call
    written again: :func:`~planwerk.core.parsing.repeats_a_call`) on a model that decodes here."""
    if plan_format == "json" and isinstance(model, SupportsTextStop):
        model = model.with_text_stop(repeats_a_call)
    if plan_format == "json" and isinstance(model, SupportsPlanSchema):
        return model.with_plan_schema(plan_json_schema(specs, rounds=rounds))
    if plan_format == "expression" and isinstance(model, SupportsPlanGrammar):
        try:
            return model.with_plan_grammar(expression_grammar(specs))
        except ValueError:  # no loaded tool can be written in an expression: the check will say so
            return model
    return model


def plan_samples(context: Context, profile: Profile, retry: int) -> int:
    """How many plans to sample for self-consistency: ``Context.plan_samples`` on a first attempt where the answer
    is the last result, else 0 (one plan, as usual; a retry already samples at ``retry_temperature``)."""
    if context.plan_samples > 1 and profile.answer_is_last_result and not retry:
        return context.plan_samples
    return 0


def samples_usage(replies: list[Any], messages: list[Any], *, batched: bool) -> dict[str, float]:
    """Counters of a self-consistency call: one model call and one prompt when batched, else one per sample."""
    usage = [usage_of(reply, messages) for reply in replies]
    calls = 1 if batched else len(replies)
    return {
        "llm_calls": calls,
        "prompt_tokens": usage[0]["prompt_tokens"] * calls,
        "completion_tokens": sum(u["completion_tokens"] for u in usage),
    }

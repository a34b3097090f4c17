"""The answer loop's deterministic end: ``fallback`` answers when no plan passed, when nothing was delivered for
the question, or when both model answers failed.

No plan: the best chunk's key sentences with their source when the retrieved context answers the question by
itself, else the fixed no-plan sentence. Nothing delivered: the failed calls
(:func:`planwerk.prompts.fallback.failures_answer`). Two rejected drafts:
:func:`planwerk.prompts.fallback.fallback_answer`, one sentence per reported call with its own arguments and
rendered values (a result's free text only as a fenced quotation, where no later call read it and
``Context.answer_quotes`` is on, else as its length), the last result for profiles whose answer is it, or the
context's facts.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from planwerk.checks import reported_calls
from planwerk.core.answers.render import render_answer
from planwerk.core.language import Language
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.answer import answer_language
from planwerk.graph.nodes.answer_refs import answer_slots
from planwerk.graph.nodes.common import answer_check_for, context_of, question_of
from planwerk.graph.nodes.deliver import deliver, reported_state
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState
from planwerk.prompts.answer_refs import quoted_placeholders, reference_texts
from planwerk.prompts.fallback import failures_answer, fallback_answer
from planwerk.prompts.texts import texts_for


async def fallback(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """The deterministic answer, delivered; ``grounded`` says whether it passes the check itself (``None`` for the
    fixed no-plan text)."""
    context = context_of(runtime)
    profile = profile_of(context)
    language = answer_language(state, profile)
    state = reported_state(state)
    plan = state.get("plan")
    if plan is None:
        # The retrieved context may answer the question without any plan (measured with EmbeddingGemma: "Wo wurde
        # Maximus Qvestus III geboren?" had no plan after the planner copied an example's cities three times,
        # although the first chunk says where); else one sentence in the question's language (what the checker
        # found is in the replan events and plan_errors).
        check = await asyncio.to_thread(answer_check_for, state, context, profile, deps) if state.get("hits") else None
        if check is not None and check.context_suffices and check.facts is not None and check.facts.sentences:
            text = fallback_answer([], language, context=check.facts)
            return await deliver(
                state, runtime, context, answer=text, source="fallback", grounded=check(text).ok, message_id=None
            )
        return await _no_plan(state, runtime, context, language)
    check = await asyncio.to_thread(answer_check_for, state, context, profile, deps)
    calls = state.get("calls", [])
    if state.get("plan_errors") and not calls and not check.context_suffices:
        # Planning failed and gave way to a chunk that says the answer only in other words (check._context_at_last):
        # with both drafts rejected, its key sentence is no answer to print.
        return await _no_plan(state, runtime, context, language)
    if check.nothing_delivered:  # the answer node wrote no draft: the failures are all there is to say
        text = failures_answer(calls, language, plan)
        return await deliver(
            state, runtime, context, answer=text, source="fallback", grounded=check(text).ok, message_id=None
        )
    # A free text no later call read is quoted, as the model may quote it (planwerk.graph.nodes.answer_refs): fenced
    # and marked as a third party's words, never the answer's own. Shown only as its length it answered nothing
    # (the domain answers set: "read_multiple_files: content (207 characters of text)." for the amount due).
    slots = {name: slot for name, slot in answer_slots(state, context, deps).items() if slot.kind == "quote"}
    text = fallback_answer(
        reported_calls(plan, calls),
        language,
        question=question_of(state),
        last_result=check.last_result,
        context=check.facts,
        refusal=profile.refusals.get(language),
        plan=plan,
        output_schemas={name: spec.output_schema for name, spec in deps.tools.specs.items()},
        domain=profile.domain,
        quotes=quoted_placeholders(slots),
    )
    if slots:
        text = render_answer(text, slots, reference_texts(language).style).text
    # A new message id: the model's replies were the rejected answers, not this one.
    return await deliver(
        state, runtime, context, answer=text, source="fallback", grounded=check(text).ok, message_id=None
    )


async def _no_plan(
    state: AgentState, runtime: Runtime[Context], context: Context, language: Language
) -> dict[str, Any]:
    """The fixed no-plan sentence in the question's language, delivered (what the checker found is in the replan
    events and ``plan_errors``)."""
    text = texts_for(language).no_plan_answer
    return await deliver(state, runtime, context, answer=text, source="no_plan", grounded=None, message_id=None)

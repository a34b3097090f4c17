"""The finalizer: the answer from the results and the retrieved context, checked, appended as an AI message.

After the model writes, :mod:`planwerk.core.grounding` checks the answer against the call results, the retrieved
chunks, the question and the conversation. An answer that fails is regenerated once with its problems named; a
second failure ends in a deterministic answer built from the call records (:func:`fallback_answer`). The outcome
is in the ``final_answer`` metadata (``grounded``, ``answer_source``) and each failed check is an
``answer_rejected`` event.

What a chat shows (``messages`` / ``messages-tuple`` mode) is only the accepted answer, once: the answer model calls
are tagged ``nostream`` (the check needs the whole answer, and a rejected answer must never reach the user), and
the node's returned message is what LangGraph streams. The answer therefore arrives whole, not token by token;
``answer_rejected`` events say what was rejected and why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from planwerk.checks import GroundingReport, reported_calls
from planwerk.core.language import detect_language
from planwerk.core.refs import call_subjects
from planwerk.core.vote import vote
from planwerk.events import AnswerRejectedEvent, FinalAnswerEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState, add_usage
from planwerk.nodes.answer_refs import ReferenceAnswer, reference_answer
from planwerk.nodes.common import (
    answer_check_for,
    context_of,
    counters,
    history_before_question,
    lost_model_calls,
    model_spec_of,
    profile_of,
    prompt_today,
    reply_text,
    usage_of,
)
from planwerk.profiles import Language, Profile
from planwerk.prompts.examples import add_example
from planwerk.prompts.grounding import (
    describe,
    failure_note,
    fallback_answer,
    findings,
    format_value,
    regenerate_request,
)
from planwerk.prompts.render import build_answer_messages, trim_history
from planwerk.prompts.texts import texts_for

ANSWER_TAGS = ("planwerk:answer", TAG_NOSTREAM)
"""Answers are checked before a chat sees them: the model's tokens do not stream, the accepted answer does."""

AMENDABLE = frozenset({"failure_unnamed", "source_missing"})
"""Problems an answer can be amended for in code instead of regenerated."""
AnswerSource = Literal["no_plan", "planner", "model", "regenerated", "amended", "fallback"]
"""Where the final answer came from: the fixed no-plan text, the planner's ``final``, the finalizer's first or
second model answer, a model answer amended in code (an unnamed failed service, a missing source), or the
deterministic answer built from the results."""


async def finalize(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Answer: the planner's ``final`` when no tool ran; when no plan passed, the best chunk's facts if the
    context answers the question by itself, else an honest failure; otherwise the model;
    every answer but the fixed no-plan text is checked, regenerated once, and replaced by a deterministic one
    when it fails twice."""
    context = context_of(runtime)
    profile = profile_of(context)
    votes: dict[str, int] | None = None
    if candidates := state.get("candidates"):
        # Self-consistency: the answer is built from the plan whose last result most samples reached.
        outcome = vote(candidates, state.get("calls", []))
        votes = outcome.votes
        if outcome.winner is not None:
            keep = set(outcome.winner["calls"])
            state = AgentState(**{**state, "calls": [c for c in state.get("calls", []) if c["id"] in keep]})
    plan = state.get("plan")
    calls = state.get("calls", [])
    # The answer's language is the question's, not the profile's (an English travel question).
    language = detect_language(state["question"], default=profile.language)
    usage_update: dict[str, float] = {}
    message_id: str | None = None
    source: AnswerSource
    grounded: bool | None = None
    first_problems: list[str] = []
    refs: ReferenceAnswer | None = None
    written: list[str] = []  # the model's answers as it wrote them, before rendering
    if plan is None:
        # The retrieved context may answer the question without any plan (measured with EmbeddingGemma: "Wo wurde
        # Maximus Qvestus III geboren?" had no plan after the planner copied an example's cities three times,
        # although the first chunk says where); else one sentence in the question's language (what the checker
        # found is in the replan events and plan_errors).
        check = await asyncio.to_thread(answer_check_for, state, context, profile, deps) if state.get("hits") else None
        if check is not None and check.context_suffices and check.facts is not None and check.facts.sentences:
            answer, source = fallback_answer([], language, context=check.facts), "fallback"
            grounded = check(answer).ok
        else:
            answer, source = texts_for(language).no_plan_answer, "no_plan"
    else:
        check = await asyncio.to_thread(answer_check_for, state, context, profile, deps)
        facts, last_result = check.facts, check.last_result
        messages: list[BaseMessage] | None = None
        model = None
        if not calls and plan.get("final"):
            answer, source = str(plan["final"]), "planner"
        else:
            model = await deps.model_for(model_spec_of(context))
            # --- answers by reference (planwerk.nodes.answer_refs): placeholders, grammar, rendering ---
            refs = await asyncio.to_thread(
                reference_answer,
                state,
                context,
                profile,
                language,
                deps,
                model,
                answer_is_result=last_result is not None,
            )
            if refs is not None and refs.constrained:
                model, messages = refs.model, refs.messages
            # --- end answers by reference ---
            messages = messages or _answer_messages(state, context, profile, language, last_result)
            lost = await lost_model_calls()
            reply = await model.ainvoke(messages, config={"tags": list(ANSWER_TAGS)})
            answer, message_id, source = reply_text(reply).strip(), reply.id, "model"
            answer, message_id = _rendered(refs, answer, message_id, written)
            usage_update = add_usage(usage_update, usage_of(reply, messages) | {"llm_calls": 1 + lost})
        report = check(answer)
        answer, report, amended = _amend(answer, report, check, language)
        if amended:
            source, message_id = "amended", None
        grounded = report.ok
        if not report.ok:
            first_problems = [describe(p, language) for p in report.problems]
            _rejected(runtime, answer, first_problems, attempt=1, next_="regenerate")
            model = model or await deps.model_for(model_spec_of(context))
            messages = messages or _answer_messages(state, context, profile, language, last_result)
            # The model sees its own answer as it wrote it (placeholders and all), not as rendered.
            written_first = written[-1] if written else answer
            request = HumanMessage(regenerate_request(report.problems, language))
            retry = [*messages, AIMessage(written_first), request]
            lost = await lost_model_calls()
            reply = await model.ainvoke(retry, config={"tags": list(ANSWER_TAGS)})
            usage_update = add_usage(usage_update, usage_of(reply, retry) | {"llm_calls": 1 + lost})
            second, second_id = _rendered(refs, reply_text(reply).strip(), reply.id, written)
            second, report, amended = _amend(second, check(second), check, language)
            if report.ok:
                # An amended or rendered answer is no longer the model's reply: a new message id (see below).
                answer, message_id, grounded = second, None if amended else second_id, True
                source = "amended" if amended else "regenerated"
            else:
                _rejected(runtime, second, [describe(p, language) for p in report.problems], 2, "fallback")
                refusal = profile.refusals.get(language)
                answer = fallback_answer(
                    reported_calls(plan, calls),
                    language,
                    last_result=last_result,
                    context=facts,
                    refusal=refusal,
                    subjects=call_subjects(plan),
                )
                # A new message id: the streamed tokens were the rejected answers, not this one.
                message_id, source = None, "fallback"
                grounded = check(answer).ok
    usage = add_usage(state.get("usage", {}), usage_update)
    metadata = {
        **counters(usage),
        "tool_calls": len(calls),
        "failed_tool_calls": sum(1 for c in calls if c["status"] != "ok"),
        "plan_attempts": state.get("attempts", 0),
        "grounded": grounded,
        "answer_source": source,
        "grounding_problems": first_problems,
        "votes": votes,
        "answer_references": _references_metadata(refs, written),
        "duration_s": round(time.time() - state.get("started_at", time.time()), 3),
    }
    learnable = not state.get("candidates")  # a merged sample plan is no example of a plan
    if context.learn_examples and learnable and plan is not None and calls and metadata["failed_tool_calls"] == 0:
        example = {"steps": plan["steps"], "final": None}  # the shape the planner writes
        await asyncio.to_thread(add_example, state["question"], example)
    runtime.stream_writer(FinalAnswerEvent(event="final_answer", answer=answer, metadata=metadata))
    # The stored message keeps the streamed reply's id, so a chat UI that saw the tokens shows the answer once.
    return {"answer": answer, "messages": [AIMessage(answer, id=message_id)], "usage": usage_update}


def _answer_messages(
    state: AgentState, context: Context, profile: Profile, language: Language, last_result: float | None
) -> list[BaseMessage]:
    calls = state.get("calls", [])
    plan = state.get("plan")
    words = None
    if context.answer_results == "words":
        words = findings(reported_calls(plan, calls), language, call_subjects(plan))
    return build_answer_messages(
        persona=profile.persona,
        question=state["question"],
        today=prompt_today(context, profile),
        calls=calls,
        hits=state.get("hits", []),
        history=trim_history(history_before_question(state), context.history_max_tokens),
        texts=texts_for(profile),
        language=language,
        result=None if last_result is None else format_value(last_result),
        findings=words,
    )


def _rendered(
    refs: ReferenceAnswer | None, text: str, message_id: str | None, written: list[str]
) -> tuple[str, str | None]:
    """A model answer with its placeholders written out (``written`` keeps the answer as the model wrote it), and
    its message id: the reply's, or ``None`` when rendering changed the text."""
    written.append(text)
    if refs is None:
        return text, message_id
    rendered = refs.render(text).text
    return rendered, message_id if rendered == text else None


def _references_metadata(refs: ReferenceAnswer | None, written: list[str]) -> dict[str, Any] | None:
    """What the final answer metadata says about answering by reference: whether the answer was decoded under the
    grammar, how many slots the results gave, and the placeholders each model answer used."""
    if refs is None:
        return None
    return {
        "constrained": refs.constrained,
        "slots": len(refs.slots),
        "used": [list(refs.render(text).used) for text in written],
    }


def _amend(
    answer: str, report: GroundingReport, check: Callable[[str], GroundingReport], language: Language
) -> tuple[str, GroundingReport, bool]:
    """An answer whose only problems are failed services it does not name, or a context answer that only lacks its
    source, gets the missing words added in code: they are known exactly, and a regeneration would cost a model
    call that a small model often spends on dropping other facts (measured on the travel bench: 6 of 6 context
    answers carried the facts but not "(Razepato.txt)"). Returns the answer, its report and whether it was
    amended."""
    if report.ok or any(p.kind not in AMENDABLE for p in report.problems):
        return answer, report, False
    amended = answer
    if sources := [p.source for p in report.problems if p.kind == "source_missing"]:
        amended = f"{amended.rstrip()} ({sources[0]})"
    if any(p.kind == "failure_unnamed" for p in report.problems):
        amended = f"{amended}\n\n{failure_note(report.problems, language)}"
    return amended, check(amended), True


def _rejected(
    runtime: Runtime[Context], answer: str, problems: list[str], attempt: int, next_: Literal["regenerate", "fallback"]
) -> None:
    runtime.stream_writer(
        AnswerRejectedEvent(event="answer_rejected", answer=answer, problems=problems, attempt=attempt, next=next_)
    )

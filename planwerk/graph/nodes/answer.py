"""The answer loop's writing nodes: ``answer`` (the first draft) and ``regenerate`` (the second, naming problems).

``answer`` takes the planner's ``final`` when no tool ran, else asks the model for an answer from the results and
the retrieved context; when no plan passed it writes nothing and the ``fallback`` node answers. ``regenerate``
shows the model its rejected answer and what the check found wrong (:attr:`~planwerk.graph.state.Draft.repair`).
A model's answer streams into a chat as it is decoded and stays there as a draft message until ``check_answer``
replaces it by the checked answer (same id) or removes it; an answer by reference streams rendered, as far as its
placeholders are written (:class:`~planwerk.models.rendering.RenderingChatModel`). The streaming rule is
:mod:`planwerk.graph.nodes.chat`'s (:data:`~planwerk.graph.nodes.chat.STREAMED_ANSWER_TAGS`, :func:`streamed_draft`).

What the model reads of the results is typed and clipped by default (``Context.answer_results="values"``, see
:func:`planwerk.prompts.fallback.result_lines`): each value rendered, a result's free text only as its length and
marked as data. A third party's text inside a result (an instruction, an account number in a file) is therefore
never in the answer prompt, so the answer cannot follow or repeat it (issue 29's quarantine).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from planwerk.checks import AnswerCheck, reported_calls
from planwerk.core.answers.grammar import prose_grammar
from planwerk.core.answers.slots import Slot
from planwerk.core.language import Language, detect_language
from planwerk.core.vote import vote
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.answer_refs import ReferenceAnswer, reference_answer
from planwerk.graph.nodes.chat import STREAMED_ANSWER_TAGS, draft_message
from planwerk.graph.nodes.common import (
    answer_check_for,
    context_of,
    history_before_question,
    lost_model_calls,
    prompt_today,
    question_of,
    reply_text,
    usage_of,
)
from planwerk.graph.nodes.deliver import reported_state
from planwerk.graph.run_context import answer_model_spec_of, profile_of
from planwerk.graph.state import AgentState, Draft, add_usage
from planwerk.models.base import SupportsPlanGrammar, SupportsRepeatPenalty, sampling_variant
from planwerk.models.rendering import WRITTEN_KEY
from planwerk.profiles import Profile
from planwerk.prompts.answer_refs import quote_rule, quoted_placeholders
from planwerk.prompts.fallback import call_sentences, fallback_texts, result_lines
from planwerk.prompts.render import build_answer_messages, trim_history
from planwerk.prompts.texts import texts_for
from planwerk.text.numbers import format_value

log = logging.getLogger(__name__)


def answer_language(state: AgentState, profile: Profile) -> Language:
    """The answer's language: the question's, not the profile's (an English travel question)."""
    return detect_language(question_of(state), default=profile.language)


async def answer(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """The first draft: the planner's ``final`` when no tool ran, else the model's answer (rendered where it wrote
    placeholders). No draft when no plan passed (the ``fallback`` node answers from the context or says so), or
    when nothing was delivered for the question (:attr:`~planwerk.checks.AnswerCheck.nothing_delivered`: the
    ``fallback`` node names the failed calls)."""
    if state.get("plan") is None:
        return {"draft": None}
    context = context_of(runtime)
    profile = profile_of(context)
    kept: list[str] | None = None
    votes: dict[str, int] | None = None
    if candidates := state.get("candidates"):
        # Self-consistency: the answer is built from the plan whose last result most samples reached.
        outcome = vote(candidates, state.get("calls", []))
        votes = outcome.votes
        if outcome.winner is not None:
            kept = list(outcome.winner["calls"])
    draft: Draft = {
        "text": "",
        "written": [],
        "message_id": None,
        "source": "model",
        "attempt": 1,
        "verdict": "unchecked",
        "problems": [],
        "repair": None,
        "kept_calls": kept,
        "votes": votes,
        "references": None,
    }
    state = reported_state(AgentState(**{**state, "draft": draft}))
    plan = state.get("plan")
    if not state.get("calls") and plan is not None and plan["final"]:
        return {"draft": {**draft, "text": str(plan["final"]), "source": "planner"}}
    check = await asyncio.to_thread(answer_check_for, state, context, profile, deps)
    if check.nothing_delivered:
        # The failure is all there is to say, and the fallback says it in code: no model call. Measured on the
        # travel set (0.5B, BENCHMARKS.md §12, session 16): in each of the four questions whose service failed,
        # both drafts stated what it would have delivered ("… will be sunny.") and were rejected.
        return {"draft": None}
    reply, refs, usage = await _write(state, context, profile, deps, check, repair=None)
    drafted = _drafted(draft, refs, reply)
    return {"draft": drafted, "usage": usage, **streamed_draft(drafted)}


async def regenerate(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """The second draft: the model sees its first answer as it wrote it (placeholders and all) and the check's
    problems (:attr:`~planwerk.graph.state.Draft.repair`), and writes again."""
    context = context_of(runtime)
    profile = profile_of(context)
    draft = state["draft"]
    assert draft is not None and draft["repair"] is not None, "regenerate runs only after a rejected draft"
    first = draft["written"][-1] if draft["written"] else draft["text"]
    state = reported_state(state)
    check = await asyncio.to_thread(answer_check_for, state, context, profile, deps)
    reply, refs, usage = await _write(state, context, profile, deps, check, repair=(first, draft["repair"]))
    second = _drafted(draft, refs, reply)
    drafted: Draft = {**second, "attempt": 2, "source": "regenerated", "verdict": "unchecked"}
    return {"draft": drafted, "usage": usage, **streamed_draft(drafted)}


def streamed_draft(draft: Draft) -> dict[str, Any]:
    """The state update that keeps a streamed draft (rendered) in the messages until it is checked: a chat keeps
    showing what it saw stream, under the same id."""
    if draft["message_id"] is None:
        return {}
    return {"messages": [draft_message(draft["text"], draft["message_id"])]}


async def _write(
    state: AgentState,
    context: Context,
    profile: Profile,
    deps: Deps,
    check: AnswerCheck,
    *,
    repair: tuple[str, str] | None,
) -> tuple[tuple[str, str | None], ReferenceAnswer | None, dict[str, float]]:
    """One answer model call (it streams, rendered where it answers by reference) under ``check``: the reply as the
    model wrote it and the id it streamed under, the answer-by-reference setup (or ``None``), and the usage."""
    language = answer_language(state, profile)
    model = await deps.answer_model_for(answer_model_spec_of(context))
    if repair is not None and context.retry_temperature > 0:
        # Greedy decoding wrote the rejected answer again, word for word (the 1.5B model on the domain bench).
        model = sampling_variant(
            model, context.retry_temperature, seed=len(state.get("feedback", [])), top_p=context.retry_top_p
        )
    # A context answer is checked for the best chunk's key sentence: the prompt names it (the 0.5B model missed it).
    key = (check.facts.source, " ".join(check.facts.sentences)) if check.facts is not None else None
    # --- answers by reference (planwerk.graph.nodes.answer_refs): placeholders, grammar, rendering ---
    refs = await asyncio.to_thread(
        reference_answer,
        state,
        context,
        profile,
        language,
        deps,
        model,
        answer_is_result=check.last_result is not None,
        key=key,
    )
    messages = refs.messages if refs is not None and refs.constrained else None
    quotes = refs.quotes if refs is not None else {}
    messages = messages or answer_messages(
        state, context, profile, language, check.last_result, deps, key=key, quotes=quotes
    )
    if repair is not None:
        written, request = repair
        messages = [*messages, AIMessage(written), HumanMessage(request)]
    if not (refs is not None and refs.constrained) and check.last_result is None:
        model = await asyncio.to_thread(prose_model, model, context)
    lost = await lost_model_calls()
    # The answer streams (planwerk.graph.nodes.chat); by reference, what streams is the rendering of its placeholders.
    writer = refs.rendering(model) if refs is not None else model
    reply = await writer.ainvoke(messages, config={"tags": list(STREAMED_ANSWER_TAGS)})
    usage = add_usage({}, usage_of(reply, messages) | {"llm_calls": 1 + lost})
    written = reply.response_metadata.get(WRITTEN_KEY, reply_text(reply))
    return (written.strip(), reply.id), refs, usage


def prose_model(model: Any, context: Context) -> Any:
    """``model`` for a plain answer in words: with ``Context.answer_repeat_penalty`` where it takes one (a local
    model), and bound to :func:`~planwerk.core.answers.grammar.prose_grammar` where it decodes under grammars
    (``Context.constrained_decoding``): a plain answer then holds a word, as the answer check requires where the
    answer is not the last result. Blocking: the grammar is converted here."""
    if context.answer_repeat_penalty != 1.0 and isinstance(model, SupportsRepeatPenalty):
        # Qwen's own generation settings penalize repeats; on the travel set the 0.5B model then stated more of the
        # values and repeated fewer phrases: 20 of 36 answers its own and right, 18 without (BENCHMARKS.md §12).
        model = model.with_repeat_penalty(context.answer_repeat_penalty)
    if not (context.constrained_decoding and isinstance(model, SupportsPlanGrammar)):
        return model
    try:
        return model.with_plan_grammar(prose_grammar())
    except ValueError as error:  # the backend refused the grammar: answer unconstrained, as before
        log.warning("prose grammar not usable, answering without it: %s", error)
        return model


def _drafted(draft: Draft, refs: ReferenceAnswer | None, reply: tuple[str, str | None]) -> Draft:
    """``draft`` with the model's reply: rendered where it wrote placeholders (as it streamed under the reply's id),
    the reply as written kept, and what answering by reference did."""
    text, message_id = reply
    written = [*draft["written"], text]
    rendered = text if refs is None else refs.render(text).text
    references = None
    if refs is not None:
        references = {
            "constrained": refs.constrained,
            "slots": len(refs.slots),
            "used": [list(refs.render(item).used) for item in written],
        }
    return {
        **draft,
        "text": rendered,
        "written": written,
        "message_id": message_id,
        "verdict": "unchecked",
        "references": references,
    }


def answer_messages(
    state: AgentState,
    context: Context,
    profile: Profile,
    language: Language,
    last_result: float | None,
    deps: Deps,
    *,
    key: tuple[str, str] | None = None,
    quotes: Mapping[str, Slot] | None = None,
) -> list[BaseMessage]:
    """The answer prompt. The results are shown as ``Context.answer_results`` says: ``values`` (default) typed and
    clipped, free text withheld and marked as data; ``words`` one sentence per reported call, as the deterministic
    answer writes them; ``json`` the raw call log (a result's free text included). With ``values``, each of the
    ``quotes`` (quotable free texts) shows as its placeholder, and the rule for quoting follows."""
    calls = state.get("calls", [])
    schemas = {name: spec.output_schema for name, spec in deps.tools.specs.items()}
    lines: list[str] | None = None
    if context.answer_results == "values":
        quoted = quoted_placeholders(quotes or {})
        lines = result_lines(calls, language, output_schemas=schemas, domain=profile.domain, quotes=quoted)
        texts = fallback_texts(language)
        marker = texts.free_text.split("{chars}")[-1].rstrip(")")
        if marker and any(marker in line for line in lines):
            lines.append(texts.data_note)
        if (rule := quote_rule(quotes or {}, language)) is not None:
            lines.append(rule)
    elif context.answer_results == "words":
        reported = reported_calls(state.get("plan"), calls)
        lines = call_sentences(
            reported,
            language,
            question_of(state),
            plan=state.get("plan"),
            output_schemas=schemas,
            domain=profile.domain,
        )
    return build_answer_messages(
        persona=profile.persona_for_answer(any(call.get("status") == "ok" for call in calls)),
        question=question_of(state),
        today=prompt_today(context, profile),
        calls=calls,
        hits=state.get("hits", []),
        history=trim_history(history_before_question(state), context.history_max_tokens),
        texts=texts_for(profile),
        language=language,
        result=None if last_result is None else format_value(last_result),
        findings=lines,
        key=key,
    )

"""The answer loop's gate: ``check_answer`` checks a draft, amends what code can add, and delivers or rejects it.

:mod:`planwerk.checks` checks the draft against the call results, the retrieved chunks, the question and
the conversation (:func:`planwerk.graph.nodes.common.answer_check_for`); a draft decoded under the answer grammar
(answers by reference) skips the rules construction guarantees (numbers, dates, times). An accepted draft is delivered
(:func:`planwerk.graph.nodes.deliver.deliver`); a rejected one is an ``answer_rejected`` event and goes, by
:func:`planwerk.graph.routing.after_check_answer`, to ``regenerate`` the first time and to ``fallback`` the second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from planwerk.checks import GroundingReport, reported_calls
from planwerk.checks.domain import Domain
from planwerk.checks.frame import without_frame
from planwerk.checks.rules import without_repeats
from planwerk.core.answers.render import without_quotes
from planwerk.core.language import Language
from planwerk.events import AnswerRejectedEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.answer import answer_language
from planwerk.graph.nodes.answer_refs import answer_slots
from planwerk.graph.nodes.chat import is_draft, removed_draft
from planwerk.graph.nodes.common import answer_check_for, context_of, question_of
from planwerk.graph.nodes.deliver import deliver, reported_state
from planwerk.graph.routing import MAX_DRAFTS
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState
from planwerk.prompts.fallback import failure_lines
from planwerk.prompts.grounding import describe, regenerate_request

STATED_BY_QUOTATION = frozenset({"empty", "restated", "unstated"})
"""Problems saying that an answer states nothing of the results: an answer holding a quotation of one states it
("The file notes.txt says:" before the quotation restates the question, measured on both packaged models)."""

AMENDABLE = frozenset({"failure_unnamed", "source_missing", "estimate_unnamed"})
"""Problems an answer can be amended for in code instead of regenerated (``estimate_unnamed`` only where the
profile names its estimate flag in the answer's language: :func:`estimate_label`)."""


async def check_answer(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Check the current draft: delivered when it passes (after amending what code can add), else rejected with
    its problems in words (the event, the metadata) and for the model (:attr:`~planwerk.graph.state.Draft.repair`)."""
    context = context_of(runtime)
    profile = profile_of(context)
    draft = state["draft"]
    assert draft is not None, "check_answer runs only after a draft was written"
    language = answer_language(state, profile)
    full = await asyncio.to_thread(answer_check_for, reported_state(state), context, profile, deps)
    # An answer decoded under the answer grammar (answers by reference) skips what the grammar guarantees.
    constrained = bool((draft.get("references") or {}).get("constrained"))
    slots = await asyncio.to_thread(answer_slots, reported_state(state), context, deps)
    quoted = [str(slot.value) for slot in slots.values() if slot.kind == "quote"]

    def check(text: str) -> GroundingReport:
        # A quotation is a result's text copied by code (answer_quotes): its words are no claims of the answer.
        # An answer that is only a quotation claims nothing.
        claims = without_quotes(text, quoted=quoted)
        if claims == text.strip():
            return full(text, constrained=constrained)
        if not claims:
            return GroundingReport()
        report = full(claims, constrained=constrained)
        return GroundingReport(tuple(p for p in report.problems if p.kind not in STATED_BY_QUOTATION))

    report = check(draft["text"])
    # The failed calls an answer did not name, in the fallback's words (each with what it was asked about). Where
    # nothing was delivered for the question there is no draft to add them to (the answer node wrote none).
    unnamed = {p.tool for p in report.problems if p.kind == "failure_unnamed"}
    plan = state.get("plan")
    calls = reported_calls(plan, reported_state(state).get("calls", []))
    failed = failure_lines(calls, language, plan, unnamed) if unnamed else []
    estimate = estimate_label(profile.domain, language)
    text, report, amended = _amend(draft["text"], report, check, "\n".join(failed), estimate)
    streamed = is_draft(state.get("messages", []), draft["message_id"])
    if report.ok and (unframed := without_frame(text)) is not None and check(unframed).ok:
        # A frame around a passed answer ("Die Antwort lautet: …", "Diese Antwort ist korrekt.") says nothing and
        # goes. Only from an answer that passed with it, and only where what is left passes too: taken out first,
        # it let a wrong answer through (a quotation whole once its lead-in was gone is not judged as one).
        text, amended = unframed, True
    if report.ok:
        # An amended answer is no longer the model's reply: a new message id, unless the reply streamed (then the
        # amended text replaces the draft a chat shows, planwerk.graph.nodes.chat).
        return await deliver(
            state,
            runtime,
            context,
            answer=text,
            source="amended" if amended else draft["source"],
            grounded=True,
            message_id=draft["message_id"] if streamed or not amended else None,
        )
    problems = [describe(p, language) for p in report.problems]
    last = draft["attempt"] >= MAX_DRAFTS
    runtime.stream_writer(
        AnswerRejectedEvent(
            event="answer_rejected",
            answer=text,
            problems=problems,
            attempt=draft["attempt"],
            next="fallback" if last else "regenerate",
        )
    )
    first_problems = draft["problems"] if draft["attempt"] > 1 else problems
    return {
        "draft": {
            **draft,
            "verdict": "rejected",
            "problems": first_problems,
            "repair": regenerate_request(report.problems, language, question_of(state)),
        },
        "messages": removed_draft(state.get("messages", []), draft["message_id"]),  # a chat stops showing it
    }


def estimate_label(domain: Domain | None, language: Language) -> str | None:
    """The words the profile's data has for a true estimate flag in ``language`` (its ``true_labels`` of an
    ``estimate_fields`` field), or ``None``: then an unnamed estimate is regenerated, not amended."""
    if domain is None:
        return None
    labels = domain.true_labels.get(language, {})
    return next((labels[name] for name in sorted(domain.estimate_fields) if labels.get(name)), None)


def _amend(
    answer: str,
    report: GroundingReport,
    check: Callable[[str], GroundingReport],
    failed: str = "",
    estimate: str | None = None,
) -> tuple[str, GroundingReport, bool]:
    """An answer whose only problems are failed services it does not name, a context answer that only lacks its
    source, or values flagged an estimate that it does not call one (where the profile has ``estimate`` words for
    the flag), gets the missing words added in code: they are known exactly, and a regeneration would cost a model
    call that a small model often spends on dropping other facts (measured on the travel bench: 6 of 6 context
    answers carried the facts but not "(Razepato.txt)"). ``failed`` is the failed calls in words, as the fallback
    names them. An answer that repeats itself (a model decoding in a loop) first loses its repeats
    (:func:`planwerk.checks.rules.without_repeats`) and is checked again. Returns the answer, its report and whether
    it was amended."""
    if "repetitive" in {p.kind for p in report.problems} and (shortened := without_repeats(answer)) is not None:
        shortened_report = check(shortened)
        amended, amended_report, _ = _amend(shortened, shortened_report, check, failed, estimate)
        if amended_report.ok:
            return amended, amended_report, True
    kinds = {p.kind for p in report.problems}
    if report.ok or not kinds <= AMENDABLE or ("estimate_unnamed" in kinds and estimate is None):
        return answer, report, False
    if "failure_unnamed" in kinds and not failed:  # no note to add (see check_answer)
        return answer, report, False
    amended = answer
    if "estimate_unnamed" in kinds:
        amended = f"{amended.rstrip()} ({estimate})"
    if sources := [p.source for p in report.problems if p.kind == "source_missing"]:
        amended = f"{amended.rstrip()} ({sources[0]})"
    if "failure_unnamed" in kinds and failed:
        amended = f"{amended}\n\n{failed}"
    return amended, check(amended), True

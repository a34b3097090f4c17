"""The answer check of one question, assembled from a run's records, for the finalizer and the benchmarks alike
(a second copy of this assembly once drifted). Blocking (gazetteer, date parsing): run it in a worker thread."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from planwerk.checks.context import KeyFacts, best_context_hit, context_answers, is_context_question, key_facts
from planwerk.checks.domain import NO_DOMAIN, Domain
from planwerk.checks.pairs import failed_places, place_results, place_times
from planwerk.checks.rules import Answer, CheckSettings, Report, check_answer, states_a_result
from planwerk.checks.sources import Sources, collect_sources, withheld_calls
from planwerk.core.plan import PlanData, planned_calls
from planwerk.core.refs import dependencies
from planwerk.rag.chunking import split_sentences
from planwerk.rag.lexical import analyze
from planwerk.text.conversation import referent_question
from planwerk.text.dates import find_dates
from planwerk.text.gazetteer import default_gazetteer


@dataclass(frozen=True)
class AnswerCheck:
    """The check every answer to one question goes through; call it with an answer to get its report."""

    sources: Sources
    settings: CheckSettings
    facts: KeyFacts | None
    """The best chunk's key facts when the question is a context question (the answer must carry them)."""
    last_result: float | None
    """The last call's result where the profile's answer is the last result (math), else ``None``."""
    context_suffices: bool = False
    """Whether the best chunk answers the question by itself, whatever its retrieval score (when no plan passed,
    nothing ran, and its facts are the answer)."""

    def __call__(self, answer: str, *, constrained: bool = False) -> Report:
        """The report on ``answer``: ``ok``, or the problems found. ``constrained``: the answer was decoded under
        the answer grammar (its numbers, dates and times are grounded by construction and not read again)."""
        return check_answer(answer, self.sources, self.settings, constrained=constrained)

    @property
    def nothing_delivered(self) -> bool:
        """Whether nothing was delivered for the question: calls failed, every successful one fed a failed call,
        and the question is no context question (:func:`unanswered_failures`). The failure is then all there is
        to say. A call the person rejected is their decision, not a failure: the answer acknowledges it in words."""
        unanswered = self.settings.unanswered
        return bool(unanswered) and self.facts is None and all(kind != "rejected" for _, kind in unanswered)

    def states_a_result(self, answer: str) -> bool:
        """Whether ``answer`` states a value the reported results hold that the question does not
        (:func:`planwerk.checks.rules.states_a_result`)."""
        return states_a_result(Answer.read(answer, self.sources, self.settings))


def build_answer_check(
    question: str,
    *,
    calls: Sequence[Mapping[str, Any]],
    hits: Sequence[Mapping[str, Any]],
    asked: Sequence[str] = (),
    today: date | None,
    plan: PlanData | None,
    output_schemas: Mapping[str, Mapping[str, Any] | None],
    answer_is_last_result: bool = False,
    retrieval_query: str | None = None,
    refusals: Sequence[str] = (),
    acting: Collection[str] | None = None,
    changing: Collection[str] = (),
    earlier: Sequence[str] = (),
    language: str | None = None,
    domain: Domain = NO_DOMAIN,
    instructions: Sequence[str] = (),
) -> AnswerCheck:
    """The check for answers to ``question`` after ``calls`` ran and ``hits`` were retrieved.

    ``asked``: the rest of what the user said (earlier turns, answers to questions asked back); ``earlier``: the
    user's earlier questions (a follow-up's referent); ``today``: the date the prompts named, ``None`` for a profile
    without dates; ``retrieval_query``: the question as retrieval searched it (translated into the corpus's
    language); ``refusals``: the profile's refusal sentences; ``acting``: the tools that act (``None``: claimed
    actions are not checked); ``changing``: the tools declared to change something (MCP ``destructiveHint``, the
    profile's ``approve`` list), whose successful call an answer may confirm with the request's own values;
    ``language``: the question's language (``None``: not checked); ``domain``: the profile's domain knowledge;
    ``instructions``: the answer prompt's instructions (an answer repeating them is an ``echo``;
    :data:`planwerk.prompts.texts.ANSWER_INSTRUCTIONS`; empty: not checked)."""
    consumed = consumed_calls(plan)
    referent = referent_question(question, earlier) or ""
    own = [m.day for m in find_dates(question, today)] if today is not None else []
    carried = [m.day for m in find_dates(referent, today)] if today is not None and referent else []
    dates = [d for d in [today, *own] if d]
    sources = collect_sources(
        calls=calls, hits=hits, asked=[question, *earlier, *asked], dates=dates, consumed=consumed, domain=domain
    )
    facts, searched = None, retrieval_query or question
    if not (plan and plan.get("final")) and is_context_question(searched, hits, calls, analyze=analyze):
        facts = key_facts(searched, best_context_hit(searched, hits, analyze=analyze), analyze=analyze,
                          split_sentences=split_sentences)  # fmt: skip
    last_result = last_result_of(calls) if answer_is_last_result else None
    gazetteer = default_gazetteer()
    settings = CheckSettings(
        gazetteer=gazetteer,
        dates=today is not None,
        withheld=withheld_calls(calls, output_schemas, domain),
        domain=domain,
        last_result=last_result,
        one_values=tuple(v for call in calls if (v := one_number_result(call)) is not None),
        estimated=estimated_results(calls, domain.estimate_fields),
        context=facts,
        analyze=analyze,
        instructions=tuple(instructions),
        question=question,
        language=language,
        asked_dates=tuple(own or carried),
        referent=referent,
        refusals=tuple(refusals),
        report_results=True,
        place_numbers=place_results(calls, gazetteer),
        place_reports=place_results(calls, gazetteer, uncounted=consumed),
        place_times=place_times(calls, gazetteer),
        failed_places=failed_places(calls, gazetteer),
        unanswered=unanswered_failures(plan, calls),
        actions=acting is not None,
        acted=acting is not None and any(call.get("status") == "ok" and call.get("tool") in acting for call in calls),
        action_failed=acting is not None
        and any(call.get("status") != "ok" and call.get("tool") in changing for call in calls),
        changed=any(call.get("status") == "ok" and call.get("tool") in changing for call in calls),
        all_failed=()
        if any(call.get("status") == "ok" for call in calls)
        else tuple((str(c.get("tool")), c.get("kind")) for c in calls if c.get("kind") not in ("skipped", "rejected")),
    )
    suffices = context_answers(searched, hits, analyze=analyze, min_score=0.0)
    return AnswerCheck(sources, settings, facts, last_result, suffices)


def estimated_results(calls: Sequence[Mapping[str, Any]], fields: Collection[str]) -> bool:
    """Whether a successful call's result holds a true flag among ``fields`` (the profile's estimate fields)."""

    def flagged(value: Any) -> bool:
        if isinstance(value, Mapping):
            return any((key in fields and item is True) or flagged(item) for key, item in value.items())
        return isinstance(value, list | tuple) and any(flagged(item) for item in value)

    return bool(fields) and any(call.get("status") == "ok" and flagged(call.get("result")) for call in calls)


def _takers(plan: PlanData | None) -> dict[str, set[str]]:
    """For each call id of ``plan`` that later calls reference (``$ref``), the ids of those calls."""
    takers: dict[str, set[str]] = {}
    for _, call in planned_calls(plan):
        for root in dependencies(call.arguments):
            takers.setdefault(root, set()).add(call.id)
    return takers


def consumed_calls(plan: PlanData | None) -> frozenset[str]:
    """The ids of the plan's calls whose results later calls take (``$ref``): intermediate results."""
    return frozenset(_takers(plan))


def reported_calls(plan: PlanData | None, calls: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The call records an answer reports: every failed call, and every successful one unless later calls took its
    result and all of them succeeded (when the later call failed, the earlier one is what there is to say)."""
    takers = _takers(plan)
    latest = {str(record.get("id")): record for record in calls}  # a call's latest record counts
    status = {call_id: record.get("status") for call_id, record in latest.items()}
    return [
        record
        for call_id, record in latest.items()
        if record.get("status") != "ok"
        or not takers.get(call_id)
        or any(status.get(t) != "ok" for t in takers[call_id])
    ]


def unanswered_failures(plan: PlanData | None, calls: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """The failed calls (tool, kind), where no successful call's result is left for the answer (every successful
    call fed a later call); empty where one is, or where nothing failed."""
    takers = _takers(plan)
    latest = {str(record.get("id")): record for record in calls}
    if any(record.get("status") == "ok" and not takers.get(call_id) for call_id, record in latest.items()):
        return ()
    return tuple((str(r.get("tool")), r.get("kind")) for r in latest.values() if r.get("status") != "ok")


def last_result_of(calls: Sequence[Mapping[str, Any]]) -> float | None:
    """The number the last call returned (``{"result": 126}`` or ``126``), if it succeeded."""
    return one_number_result(calls[-1]) if calls else None


def one_number_result(call: Mapping[str, Any]) -> float | None:
    """The number a call returned (``{"result": 126}``, ``{"area": 3.14}`` or ``126``), if it succeeded."""
    if call.get("status") != "ok":
        return None
    result = call.get("result")
    if isinstance(result, Mapping):
        numbers = [v for v in result.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        result = result.get("result", numbers[0] if len(numbers) == 1 else None)
    return float(result) if isinstance(result, int | float) and not isinstance(result, bool) else None

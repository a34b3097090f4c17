"""The answer check of one question, assembled once from the run's records, for the finalizer and the benchmarks.

:mod:`planwerk.core.grounding` holds the pure rules; this module gathers what they need at the edge (the gazetteer,
the lexical analyzer, the per-language texts) so that the finalizer and ``planwerk bench travel`` check an answer
the same way: a second copy of this assembly once drifted (it scored context answers against another chunk).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from planwerk.core.grounding import (
    CheckSettings,
    GroundingReport,
    KeyFacts,
    Sources,
    best_context_hit,
    check_answer,
    collect_sources,
    context_answers,
    estimated_results,
    is_context_question,
    key_facts,
    place_results,
    withheld_calls,
)
from planwerk.core.refs import dependencies


@dataclass(frozen=True)
class AnswerCheck:
    """The check every answer to one question goes through; call it with an answer to get its report."""

    sources: Sources
    """Everything an answer may state: results, arguments, failed calls' errors, chunks, the question, dates."""
    settings: CheckSettings
    """The rules' parameters for this question (gazetteer, withheld calls, context facts, last result, …)."""
    facts: KeyFacts | None
    """The best chunk's key facts when the question is a context question (the answer must carry them)."""
    last_result: float | None
    """The last call's result where the profile's answer is the last result (math), else ``None``."""
    context_suffices: bool = False
    """Whether the best chunk answers the question by itself (:func:`~planwerk.core.grounding.context_answers`):
    when no plan passed, its facts are the answer."""

    def __call__(self, answer: str) -> GroundingReport:
        """The report on ``answer``: ``ok``, or the problems found."""
        return check_answer(answer, self.sources, self.settings)


def build_answer_check(
    question: str,
    *,
    calls: Sequence[Mapping[str, Any]],
    hits: Sequence[Mapping[str, Any]],
    asked: Sequence[str] = (),
    today: date | None,
    plan: Mapping[str, Any] | None,
    output_schemas: Mapping[str, Mapping[str, Any] | None],
    answer_is_last_result: bool = False,
    retrieval_query: str | None = None,
    refusals: Sequence[str] = (),
    acting: Collection[str] | None = None,
) -> AnswerCheck:
    """The check for answers to ``question`` after ``calls`` ran and ``hits`` were retrieved.

    ``asked`` is the rest of what the user said (earlier turns, answers to questions asked back); ``today`` is the
    date the prompts named, ``None`` for a profile without dates (dates are then not checked). A context question
    (the planner left the answer to the context, and no tool worked on the question) must carry the facts of the
    chunk the answer prompt leads with. Blocking (gazetteer, date parsing): run it in a worker thread from async
    code. ``retrieval_query`` is the question as retrieval searched it (translated into the corpus's language): the
    chunk and its key facts are matched against it, since a question in another language shares no words with
    the chunks. ``refusals`` are the profile's refusal sentences: an answer that repeats one although a call
    succeeded is rejected. ``acting`` names the tools that act (:attr:`~planwerk.tools.base.ToolSpec.acts`, and the
    profile's approval list): an answer that says something was done needs a successful call of one of them
    (``None``: that rule is off)."""
    from planwerk.core.dates import find_dates
    from planwerk.places import default_gazetteer
    from planwerk.prompts.grounding import ACTION_LEXICONS, CONDITION_WORDS, ESTIMATE_WORDS, FAILURE_WORDS, TOOL_LABELS
    from planwerk.prompts.texts import TEXTS
    from planwerk.rag.chunking import split_sentences
    from planwerk.rag.lexical import analyze

    consumed = consumed_calls(plan)
    dates = [] if today is None else [today, *(m.day for m in find_dates(question, today))]
    sources = collect_sources(calls=calls, hits=hits, asked=[question, *asked], dates=dates, consumed=consumed)
    facts = None
    searched = retrieval_query or question
    if not (plan or {}).get("final") and is_context_question(searched, hits, calls, analyze=analyze):
        best = best_context_hit(searched, hits, analyze=analyze)
        facts = key_facts(searched, best, analyze=analyze, split_sentences=split_sentences)
    last_result = last_result_of(calls) if answer_is_last_result else None
    gazetteer = default_gazetteer()
    settings = CheckSettings(
        gazetteer=gazetteer,
        dates=today is not None,
        withheld=withheld_calls(calls, output_schemas),
        labels=TOOL_LABELS,
        failure_words=FAILURE_WORDS,
        condition_words=CONDITION_WORDS,
        last_result=last_result,
        context=facts,
        analyze=analyze,
        instructions=tuple(
            text
            for texts in TEXTS.values()
            for text in (texts.answer_request(), texts.answer_source, texts.answer_failures, texts.answer_result)
        ),
        question=question,
        refusals=tuple(refusals),
        report_results=True,
        place_numbers=place_results(calls, gazetteer),
        place_reports=place_results(calls, gazetteer, uncounted=consumed),
        last_value=last_result_of(calls),
        estimated=estimated_results(calls),
        estimate_words=ESTIMATE_WORDS,
        action_lexicons=tuple(ACTION_LEXICONS.values()) if acting is not None else (),
        acted=acting is not None and any(call.get("status") == "ok" and call.get("tool") in acting for call in calls),
    )
    suffices = context_answers(searched, hits, analyze=analyze)
    return AnswerCheck(
        sources=sources, settings=settings, facts=facts, last_result=last_result, context_suffices=suffices
    )


def _takers(plan: Mapping[str, Any] | None) -> dict[str, set[str]]:
    """For each call id of ``plan`` that later calls reference (``$ref``), the ids of those calls."""
    takers: dict[str, set[str]] = {}
    for step in (plan or {}).get("steps") or []:
        for call in (step.get("tools") or []) if isinstance(step, Mapping) else []:
            if isinstance(call, Mapping) and isinstance(call.get("arguments"), Mapping):
                for root in dependencies(call["arguments"]):
                    takers.setdefault(root, set()).add(str(call.get("id")))
    return takers


def consumed_calls(plan: Mapping[str, Any] | None) -> frozenset[str]:
    """The ids of the plan's calls whose results later calls take (``$ref``): intermediate results (a geocode's
    coordinates for a weather call), not what an answer reports."""
    return frozenset(_takers(plan))


def reported_calls(plan: Mapping[str, Any] | None, calls: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The call records an answer reports: every failed call, and every successful one unless later calls took its
    result and all of them succeeded (a geocode's coordinates are no answer once the weather call that took them
    ran; when that call failed, the geocode is what there is to say)."""
    takers = _takers(plan)
    latest = {str(record.get("id")): record for record in calls}  # a call's latest record counts
    status = {call_id: record.get("status") for call_id, record in latest.items()}

    def reported(call_id: str, record: Mapping[str, Any]) -> bool:
        if record.get("status") != "ok" or not takers.get(call_id):
            return True
        return any(status.get(taker) != "ok" for taker in takers[call_id])

    return [record for record in latest.values() if reported(str(record.get("id")), record)]


def last_result_of(calls: Sequence[Mapping[str, Any]]) -> float | None:
    """The number the last call returned (``{"result": 126}`` or ``126``), if it succeeded.

    The log is in the order calls finished, so its last record is a call of the last plan's last step."""
    if not calls or calls[-1].get("status") != "ok":
        return None
    result = calls[-1].get("result")
    if isinstance(result, Mapping):
        numbers = [v for v in result.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        result = result.get("result", numbers[0] if len(numbers) == 1 else None)
    if isinstance(result, int | float) and not isinstance(result, bool):
        return float(result)
    return None

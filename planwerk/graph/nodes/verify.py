"""Verification: decide from the call log what comes next (a pure decision on failure kinds; see core.verification)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from typing import Any

from langgraph.runtime import Runtime

from planwerk.checks.pairs import contradicted_times, swapped_places
from planwerk.core.calls import CallRecord, results_of
from planwerk.core.expressions import plan_expression
from planwerk.core.extract import EXTRACT_TOOL, FIELD_NAME
from planwerk.core.plan import Plan
from planwerk.core.question_fit import shown_plan
from planwerk.core.refs import Ref, as_data, call_subjects, dependencies, iter_refs
from planwerk.core.rounds import summarize_value
from planwerk.core.verification import Verification, verify_calls
from planwerk.core.vote import vote
from planwerk.events import AskUserEvent, ReplanEvent
from planwerk.graph.context import Context
from planwerk.graph.nodes.chat import question_message
from planwerk.graph.nodes.common import context_of, person_texts, question_of
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState
from planwerk.profiles import Profile
from planwerk.prompts.texts import PromptTexts, texts_for
from planwerk.text.dates import CLOCK_TIME
from planwerk.text.gazetteer import default_gazetteer

MAX_SHOWN_CHARS = 300
"""One earlier result is shown to the replanning planner in at most this many characters."""


async def verify(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Done, self-correct or replan (failed calls back to the planner), ask the user, or give up honestly."""
    plan = Plan.from_stored(state["plan"])
    # Ids may be reused by a corrected plan: judge each call of this plan by its latest record.
    latest = {c["id"]: c for c in state.get("calls", [])}
    last_calls = [latest[call.id] for _, call in plan.calls() if call.id in latest]
    attempts = state.get("attempts", 0)
    context = context_of(runtime)
    texts = texts_for(profile_of(context))
    outcome = verify_calls(last_calls, attempts, context.max_plan_attempts)
    candidates = state.get("candidates")
    if candidates and outcome.decision != "done" and vote(candidates, last_calls).winner is not None:
        # Self-consistency: a sampled plan that failed is outvoted, not repaired, when another one ran cleanly.
        outcome = Verification("done", outcome.reason)
    profile = profile_of(context)
    rounds = state.get("rounds", 0)
    if outcome.decision == "done" and plan.next_round and rounds < profile.plan_rounds:
        # The plan read first and asked for another round: plan the rest from a summary of the results (the
        # planner node renders it, typed unless the profile allows raw text). A round has its own attempts.
        runtime.stream_writer(
            ReplanEvent(event="replan", reason="next planning round", decision="next_round", attempt=attempts)
        )
        return {"verdict": "next_round", "rounds": rounds + 1, "attempts": 0, "feedback": []}
    instructions, suggestion = texts.failed_calls_instructions, ""
    if outcome.decision == "done" and attempts < context.max_plan_attempts:
        question = question_of(state)
        # A call run again as it was after the planner was told is not told again: that would loop.
        told = [call for call in last_calls if _runs(call, state) == 1]
        contradicted = (
            # The gazetteer loads in the worker thread (about a second, once per process), not on the event loop.
            await asyncio.to_thread(lambda: contradicted_times(question, told, default_gazetteer()))
            if told and CLOCK_TIME.search(question)
            else []
        )
        if contradicted:
            reason = "\n".join(texts.contradicted_time.format(**asdict(found)) for found in contradicted)
            outcome, instructions = Verification("self_correct", reason), texts.contradicted_instructions
            if profile.plan_format == "json" and (swapped := swapped_places(state["plan"], contradicted)) is not None:
                # The small model reads a corrected plan better than a description of it (it repeated the wrong
                # plan after the description alone: the domain answers set, BENCHMARKS.md §12, session 15).
                suggestion = texts.contradicted_plan.format(plan=shown_plan(swapped))
    update: dict[str, Any] = {"verdict": outcome.decision}
    if outcome.decision in ("self_correct", "replan"):
        runtime.stream_writer(
            ReplanEvent(event="replan", reason=outcome.reason, decision=outcome.decision, attempt=attempts)
        )
        problems, reply = _failure_feedback(state, plan, outcome.reason, texts, profile, instructions)
        problems += suggestion
        update |= {"feedback": [{"reply": reply, "problems": problems}], "plan_errors": outcome.reason.splitlines()}
    elif outcome.decision == "ask_user" and outcome.not_found is not None:
        asked = person_texts(question_of(state), profile)  # the person's language, not the planner's
        unclear = _unclear_value(plan, outcome.not_found, state)
        question = (
            asked.unclear_question.format(source=unclear[1], argument=unclear[0], tool=outcome.not_found["tool"])
            if unclear is not None
            else asked.not_found_question.format(tool=outcome.not_found["tool"], error=outcome.not_found["error"])
        )
        if (unclear is not None and not unclear[1]) or any(
            item.get("question") == question for item in state.get("clarifications", [])
        ):
            # The person's own answer did not hold the value, or the same failure again after their answer: asking
            # again would loop; answer with what there is.
            return {"verdict": "give_up", "plan_errors": outcome.reason.splitlines()}
        runtime.stream_writer(AskUserEvent(event="ask_user", question=question))
        update["pending_question"] = question
        update["messages"] = [question_message(question)]  # asked now: a chat UI draws the interrupt under it
    elif outcome.decision == "give_up":
        update["plan_errors"] = outcome.reason.splitlines()
    return update


def _runs(call: CallRecord, state: AgentState) -> int:
    """How often this turn ran ``call``'s tool with its arguments."""
    return sum(1 for c in state.get("calls", []) if c["tool"] == call["tool"] and c.get("args") == call.get("args"))


def _unclear_value(plan: Plan, record: CallRecord, state: AgentState) -> tuple[str, str] | None:
    """For ``record``'s call, which did not run because an ``extract`` found no single value for one of its
    arguments: that argument, and the text it was looked for in (the call that read it, with what it read:
    "read_file (bill-december-2026.txt)"; empty when the extract read only what the person said);
    ``None`` for any other failure."""
    if record["kind"] != "unclear":
        return None
    planned = {call.id: call for _, call in plan.calls()}
    call = planned.get(record["id"])
    results = results_of(state.get("calls", []))
    subjects = call_subjects(state.get("plan"))
    for argument, value in (call.arguments if call is not None else {}).items():
        ref = next((r for r in iter_refs(value) if isinstance(r, Ref) and r.root in planned), None)
        extracted = as_data(results.get(ref.root)) if ref is not None else None
        if ref is None or planned[ref.root].name != EXTRACT_TOOL or not isinstance(extracted, dict):
            continue
        if extracted.get(str(ref.path[0]) if ref.path else "") is not None:
            continue
        read = sorted(dependencies({"text": planned[ref.root].arguments.get("text")}))
        source = ", ".join(
            f"{planned[root].name} ({', '.join(subjects[root])})" if subjects.get(root) else planned[root].name
            for root in read
            if root in planned
        )
        return argument, source
    return None


def _failure_feedback(
    state: AgentState, plan: Plan, reason: str, texts: PromptTexts, profile: Profile, instructions: str
) -> tuple[str, str]:
    """The planner's feedback after failed calls (or results that contradict the question: ``instructions`` takes
    ``{problems}`` and ``{available}``), and the failed plan as the planner's own earlier reply: in the
    form it writes plans (an expression planner shown JSON answers in JSON). The results so far are shown as a
    later round's planner sees them (:func:`planwerk.core.rounds.summarize_value`): typed and clipped, a result's
    text only as its length unless the profile lets rounds see raw text. A replan is a plan made after results
    were read; shown raw, text a third party planted in a result reached the planner."""
    if profile.plan_format == "expression":
        try:
            return texts.expression_failed_calls.format(problems=reason), plan_expression(plan)
        except ValueError:
            pass  # a plan that is no expression (it calls nothing): shown as JSON like any plan
    results = results_of(state.get("calls", [])).items()
    shown = {k: summarize_value(as_data(v), raw_text=profile.rounds_raw_text) for k, v in results}
    available = {k: json.dumps(v, ensure_ascii=False)[:MAX_SHOWN_CHARS] for k, v in shown.items()}
    problems = instructions.format(
        problems=reason, available=json.dumps(available, ensure_ascii=False) if available else texts.nothing
    )
    if profile.extract_step:
        for text_id, (names, callers) in _fields_of_text(plan, dict(results)).items():
            schema = json.dumps(dict.fromkeys(names, "string"), ensure_ascii=False)
            calls = ", ".join(callers)
            problems += "\n" + texts.fields_of_text.format(id=text_id, schema=schema, field=names[0], calls=calls)
    return problems, json.dumps(state["plan"], ensure_ascii=False)


def _fields_of_text(plan: Plan, results: dict[str, Any]) -> dict[str, tuple[list[str], list[str]]]:
    """The fields the plan read from text results, and the calls that read them (``id (tool)``), by result id
    (``{"$ref": "f.street"}`` of a file's text): a text has no fields, and its values come out with the ``extract``
    step (the domain set: the 1.5B model referred to fields of a file's text twice, and the values were never
    taken)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for _, call in plan.calls():
        for ref in iter_refs(call.arguments):
            if not isinstance(ref, Ref) or not ref.path or not isinstance(as_data(results.get(ref.root)), str):
                continue
            name = str(ref.path[-1] if ref.path[0] == "result" else ref.path[0])
            if not FIELD_NAME.match(name):
                continue
            names, callers = found.setdefault(ref.root, ([], []))
            names += [name] if name not in names else []
            callers += [f"{call.id} ({call.name})"] if f"{call.id} ({call.name})" not in callers else []
    return {text_id: entry for text_id, entry in found.items() if entry[0]}

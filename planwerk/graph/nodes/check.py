"""The gate: parse the planner's reply tolerantly, re-order contradicting steps, check the plan, route."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from planwerk.checks import ProblemKind
from planwerk.checks.context import context_answers, context_nearly_answers, passages_on
from planwerk.checks.pairs import contradicted_times, swapped_places
from planwerk.checks.sources import DOWN_KINDS
from planwerk.core.calls import CallRecord, FailureKind, results_of
from planwerk.core.checking import check_plan, echoes_question, retarget_named_references
from planwerk.core.date_values import DateValue, date_values, follow_up_day, stated_day, without_stray_day_places
from planwerk.core.duplicates import distinct_ids, merge_identical_calls
from planwerk.core.enum_values import stated_choices, stated_enum_values
from planwerk.core.expressions import parse_expression_plan
from planwerk.core.extract import calls_after_extract, values_from_answer
from planwerk.core.literals import (
    invented_numbers,
    labelled_values,
    listed_values,
    named_values,
    one_call_per_value,
    percents_as_fractions,
    precise_literals,
    unlabelled_values,
    unused_question_numbers,
)
from planwerk.core.parsing import PlanParseError, parse_plan
from planwerk.core.plan import Plan, PlanFormat, PlannedCall
from planwerk.core.question_fit import (
    arguments_skeleton,
    better_fitting_tool,
    call_skeleton,
    calls_skeleton,
    fitting_tools,
    replaced_skeleton,
    shown_plan,
    tool_terms,
    unanchored_values,
    unfilled_named_arguments,
    unplanned_named_tools,
)
from planwerk.core.refs import as_data, user_fields
from planwerk.core.scheduling import reorder_steps, with_dependents, without_calls
from planwerk.core.scope import (
    InflectedPlace,
    PlaceProblem,
    Substitution,
    complete_missing_places,
    name_inflected_places,
    names_no_place,
    place_not_given,
    place_problems,
    substitute_invented_place,
    unplanned_place_result,
)
from planwerk.core.stated_calculation import replaced_by_stated
from planwerk.core.tools import ToolSpec
from planwerk.core.value_sets import further_sets, further_value_sets
from planwerk.core.value_shapes import as_shown_values, misshapen_values
from planwerk.core.vote import Candidate, merge_candidates
from planwerk.events import AskUserEvent, PlanEvent, ReplanEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.chat import plan_message, question_message
from planwerk.graph.nodes.common import (
    answer_check_for,
    builtin_specs,
    changing_tools,
    context_of,
    history_before_question,
    person_texts,
    question_of,
    today_of,
    visible_specs,
)
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState
from planwerk.prompts.examples import library
from planwerk.prompts.texts import DECLINE_BY_FORMAT, PromptTexts, texts_for
from planwerk.prompts.zero_shot import (
    copied_example_calls,
    copied_placeholders,
    copied_sample_calls,
    task_text,
    tool_examples,
    uses_built_examples,
)
from planwerk.rag.lexical import analyze
from planwerk.text.dates import CLOCK_TIME, find_dates
from planwerk.text.gazetteer import default_gazetteer
from planwerk.text.numbers import format_value
from planwerk.text.vocabularies import known_vocabularies

CheckRoute = Literal["plan", "ask_user", "resolve_refs", "answer"]
CHECK_ROUTES: tuple[CheckRoute, ...] = ("plan", "ask_user", "resolve_refs", "answer")
MAX_REPLY_IN_FEEDBACK = 4_000
"""A rejected reply is shown back to the planner cut to this many characters."""
MAX_RESULTS_TEXT = 20_000
"""Earlier results are searched for place names up to this many characters of their JSON."""


async def check(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> Command[CheckRoute]:
    """A plan that passes goes to the resolver (or ``ask_user``, or straight to ``answer`` when it calls
    nothing); a rejected reply goes back to ``plan`` with the problems, until the attempts are used up.

    When the planner sampled several plans (``Context.plan_samples``), the valid ones with calls run side by side
    as one merged plan (:func:`planwerk.core.vote.merge_candidates`) and ``answer`` votes on their results."""
    context = context_of(runtime)
    profile = profile_of(context)
    text = state.get("reply") or ""
    attempts = state.get("attempts", 0)
    checked = await _checked(text, state, context, deps)
    parsed, problems = checked.plan, checked.problems
    candidates: list[Candidate] | None = None
    if len(replies := state.get("replies") or []) > 1:
        samples = [await _checked(reply, state, context, deps) for reply in replies]
        valid = [c.plan for c in samples if c.plan is not None and not c.problems and c.plan.call_count]
        if valid:  # any valid sample will do; several distinct ones are voted on, unless one has side effects
            merged, found_candidates = merge_candidates(valid)
            if len(found_candidates) > 1 and not any(_side_effects(plan, deps, context) for plan in valid):
                checked, candidates = Checked(merged, []), found_candidates
            else:
                checked = next(c for c in samples if c.plan is valid[0])
            parsed, problems = checked.plan, checked.problems
    if not problems and parsed is not None and attempts < context.max_plan_attempts:
        # A plan that calls nothing answers in its own words: what it states must be backed like any answer, or
        # the planner tries again with the tools (on its last attempt the finalizer's check has the final word).
        problems = await asyncio.to_thread(_unbacked_final, parsed, state, context, deps)
    questioned: str | None = None  # the kind of a question asked once per planning round
    if not problems and parsed is not None and attempts < context.max_plan_attempts:
        problems, questioned = await _question_once(parsed, state, context, deps)
    # Planning again would guess again when the context holds the answer (the model writes it from there); that
    # also wins over asking the person for a value the plan only needed for its misfit calls.
    from_context = bool(problems) and await asyncio.to_thread(_context_instead, checked.plan, state, deps)
    if problems and not from_context and checked.ask is not None and not state.get("clarifications"):
        # The plan invented a value nobody gave: planning again invents the next one; the user is asked.
        runtime.stream_writer(
            ReplanEvent(event="replan", reason="\n".join(problems), decision="ask_user", attempt=attempts)
        )
        runtime.stream_writer(AskUserEvent(event="ask_user", question=checked.ask))
        update = {"plan": None, "reply": None, "replies": None, "candidates": None, "plan_errors": problems}
        update |= {"pending_question": checked.ask, "messages": [question_message(checked.ask)]}
        return Command(update=update, goto="ask_user")
    if problems:
        runtime.stream_writer(
            ReplanEvent(event="replan", reason="\n".join(problems), decision="rejected", attempt=attempts)
        )
        if not from_context and attempts >= context.max_plan_attempts:
            from_context = await asyncio.to_thread(_context_at_last, state)
        if from_context:
            empty = Plan(steps=[], final=None).stored()
            runtime.stream_writer(
                PlanEvent(event="plan", plan=empty, attempt=attempts, reordered=False, from_context=True)
            )
            update = {"plan": empty, "reply": None, "replies": None, "candidates": None, "plan_errors": problems}
            return Command(update=update | {"feedback": [], "next_step": 0}, goto="answer")
        rejected = {
            "reply": text[:MAX_REPLY_IN_FEEDBACK],
            "problems": texts_for(profile).repair_request("\n".join(problems), profile.plan_format),
        }
        if questioned:
            rejected["kind"] = questioned
        update: dict[str, Any] = {
            # A plan that ran stays until another passes: the last attempt's answer comes from its calls.
            "plan": state.get("plan") if state.get("calls") else None,
            "reply": None,
            "replies": None,
            "candidates": None,
            "plan_errors": problems,
            "feedback": [*state.get("feedback", []), rejected],
        }
        return Command(update=update, goto="plan" if attempts < context.max_plan_attempts else "answer")
    assert parsed is not None
    plan = parsed.stored()  # the one validated plan, stored as plain data (planwerk.core.plan)
    runtime.stream_writer(
        PlanEvent(
            event="plan",
            plan=plan,
            attempt=attempts,
            reordered=checked.reordered,
            completed=list(checked.completed),
            named=[asdict(named) for named in checked.named],
            substituted=[substitution.as_event() for substitution in checked.substituted],
            swapped=list(checked.swapped),
        )
    )
    # A plan the model wrote again after being asked whether it meant values nobody gave runs only if a person says so.
    unanchored = bool(parsed.call_count) and await asyncio.to_thread(still_unanchored, parsed, state, context, deps)
    update = {
        "plan": plan,
        "unanchored": unanchored,
        "reply": None,
        "replies": None,
        "candidates": candidates,
        "plan_errors": [],
        "feedback": [],
        "next_step": 0,
    }
    if parsed.ask_user is not None:
        question = parsed.ask_user.strip() or person_texts(question_of(state), profile).default_clarification
        runtime.stream_writer(AskUserEvent(event="ask_user", question=question))
        # The question is a message the moment it is asked: a chat UI draws the interrupt under it.
        update |= {"pending_question": question, "messages": [question_message(question)]}
        return Command(update=update, goto="ask_user")
    if parsed.call_count:  # the chat's view of the plan: one tool call per planned call (planwerk.graph.nodes.chat)
        message = plan_message(parsed, person_texts(question_of(state), profile).progress_calls)
        update |= {"messages": [message], "plan_message": message.id}
    return Command(update=update, goto="resolve_refs" if parsed.call_count else "answer")


def _context_instead(plan: Plan | None, state: AgentState, deps: Deps) -> bool:
    """Whether a rejected plan gives way to the retrieved context: nothing has run yet, the best chunk answers the
    question by itself (:func:`planwerk.checks.context.context_answers`, whatever its retrieval score: nothing ran),
    and no tool the plan calls shares a term with the question (its calls fit nothing the person asked). Measured
    with the packaged 1.5B model on the demo question (BENCHMARKS.md §14): three plans for a tool with coordinates
    of its own, each rejected, then the context's key sentence in code. A tool question whose words a chunk also
    holds is planned again when the plan's tool shares one of them. Blocking (the analyzer): runs in a worker
    thread."""
    hits = state.get("hits") or []
    if plan is None or not plan.call_count or state.get("calls") or not hits:
        return False
    question = state.get("retrieval_query") or question_of(state)
    if not context_answers(question, hits, analyze=analyze, min_score=0.0):
        return False
    asked = set(analyze(question_of(state))) | set(analyze(question))
    planned = [deps.tools.specs.get(call.name) for _, call in plan.calls()]
    return not any(spec is not None and asked & tool_terms(spec, analyze) for spec in planned)


def _context_at_last(state: AgentState) -> bool:
    """Whether planning that failed on its last attempt gives way to the retrieved context: nothing has run and
    the best chunk holds all but one of the question's words (:func:`planwerk.checks.context.context_nearly_answers`).
    The planner's failures were about tools; the model then writes the answer from the chunk, under the answer
    check, instead of the no-plan sentence (measured with the 0.5B model, BENCHMARKS.md §12, session 8: a question
    a chunk answers in a synonym of one of its words ended in that sentence after three plans for a tool that did
    not fit). Blocking (the analyzer): runs in a worker thread."""
    hits = state.get("hits") or []
    if state.get("calls") or not hits:
        return False
    question = state.get("retrieval_query") or question_of(state)
    return context_nearly_answers(question, hits, analyze=analyze)


@dataclass(frozen=True)
class Checked:
    """One reply after the check: the plan (``None`` when unreadable), its problems, and what code changed."""

    plan: Plan | None
    problems: list[str]
    reordered: bool = False
    """The steps contradicted the references and were re-ordered."""
    completed: tuple[str, ...] = ()
    """Places the question names that the plan left out, added by copying its chain for its one place."""
    named: tuple[InflectedPlace, ...] = ()
    """Place arguments in the genitive ("Barcelonas") that were written as the city's name."""
    substituted: tuple[Substitution, ...] = ()
    """The one place the plan invented (an example's city), replaced by the one it left out."""
    ask: str | None = None
    """What to ask the user instead of planning again: the plan needs a value (a place) nobody gave."""
    swapped: tuple[str, ...] = ()
    """Calls written again as they ran although their result contradicted the question, whose two place arguments
    were swapped."""


async def _checked(text: str, state: AgentState, context: Context, deps: Deps) -> Checked:
    """One reply checked (:func:`_checked_as_written`); a plan that passes has each call it wrote again after that
    call's result contradicted the question run with its two places swapped (:func:`_uncontradicted`)."""
    checked = await _checked_as_written(text, state, context, deps)
    if checked.plan is None or checked.problems:
        return checked
    uncontradicted = await asyncio.to_thread(_uncontradicted, checked.plan, state, context)
    if uncontradicted is None:
        return checked
    plan, swapped = uncontradicted
    return replace(checked, plan=plan, swapped=swapped)


async def _checked_as_written(text: str, state: AgentState, context: Context, deps: Deps) -> Checked:
    """One reply parsed tolerantly, its contradicting steps re-ordered, checked, completed for the places the
    question names that it left out, or its one invented place replaced by the one it left out, and its place
    arguments in the genitive written as names. A plan changed in code is checked again like any plan; when it
    fails, the problems of the reply as written go back to the planner."""
    try:
        candidate = parse_reply(text, profile_of(context).plan_format, deps.tools.specs)
    except PlanParseError as error:
        return Checked(None, [str(error)])
    available = results_of(state.get("calls", [])).keys()
    if (written := replaced_by_stated(candidate, question_of(state), deps.tools.specs)) is not None:
        candidate = written  # the question writes out its calculation; the plan took other numbers
    if (merged := merge_identical_calls(candidate)) is not None:  # one call for a call planned twice side by side
        candidate = merged
    if (own := await asyncio.to_thread(_without_copied_examples, candidate, state, context, deps)) is not None:
        candidate = own  # an example's calls copied whole beside the plan's own calls
    if (renamed := distinct_ids(candidate)) is not None:  # different calls under one id nothing refers to
        candidate = renamed
    if (retargeted := retarget_named_references(candidate, available)) is not None:  # a call named, not its id
        candidate = retargeted
    if (restored := _calls_after_extract(candidate, state)) is not None:  # a call that read a text, after its extract
        candidate = restored
    if (answered := _values_from_answer(candidate, state)) is not None:  # a value the person named when asked
        candidate = answered
    if (listed := _listed_values(candidate, state, context, deps)) is not None:  # one call per listed value
        candidate = listed
    if (sets := _further_value_sets(candidate, state, context, deps)) is not None:  # one call per quoted set
        candidate = sets
    if (stated := await asyncio.to_thread(_stated_values, candidate, state, context, deps)) is not None:
        candidate = stated
    if (chosen := _stated_choices(candidate, state, context, deps)) is not None:  # the question chose a listed value
        candidate = chosen
    if (undated := await asyncio.to_thread(_without_stray_day_places, candidate, context, deps)) is not None:
        candidate = undated  # a call given a day for its place whose result nothing takes: it could only fail
    if (redated := await asyncio.to_thread(_follow_up_day, candidate, state, context)) is not None:
        candidate = redated  # a follow-up names another day than the one the plan copied from the conversation
    reordered = False
    if (valid_steps := reorder_steps(candidate, available)) is not None:
        candidate, reordered = valid_steps, True
    texts = texts_for(profile_of(context))
    if problems := _plan_problems(candidate, state, context, deps):
        # A plan for a place nobody gave is asked about even when it is also malformed: planning again mends its
        # form and guesses a place again (measured: two attempts for one invented city, then no plan at all).
        return Checked(candidate, problems, reordered, ask=await _place_to_ask(candidate, state, context, deps))
    # A date of the question given as a value (a date word as a place argument) is a value nobody gave.
    if dated := await asyncio.to_thread(_date_values, candidate, state, context, deps):
        problems = [texts.date_value.format(call=d.call_id, argument=d.argument, value=d.value) for d in dated]
        as_places = [PlaceProblem("invented", d.value, d.call_id) for d in dated if d.takes_places]
        ask = None
        if len(as_places) == len(dated) and await asyncio.to_thread(_place_not_given, state, as_places):
            ask = person_texts(question_of(state), profile_of(context)).place_not_given
        return Checked(candidate, problems, reordered, ask=ask)
    # Places only matter for a plan that could run.
    found = await asyncio.to_thread(place_check, state, candidate)
    missing = [p.place for p in found if p.kind == "missing"]
    if found and len(missing) == len(found):
        completed = await asyncio.to_thread(_complete, candidate, missing)
        valid = completed is not None and not _plan_problems(completed, state, context, deps)
        if completed is not None and valid and not await asyncio.to_thread(place_check, state, completed):
            return await asyncio.to_thread(_named, Checked(completed, [], reordered, tuple(missing)), state)
    elif found and (substituted := await asyncio.to_thread(_substitute, candidate, found, state, context)) is not None:
        plan, substitution = substituted
        if (redated := await asyncio.to_thread(_follow_up_day, plan, state, context)) is not None:
            plan = redated  # the chain kept may hold the day copied from the conversation
        valid = not _plan_problems(plan, state, context, deps)
        if valid and not await asyncio.to_thread(place_check, state, plan):
            return await asyncio.to_thread(_named, Checked(plan, [], reordered, substituted=(substitution,)), state)
    if not found:
        return await asyncio.to_thread(_named, Checked(candidate, [], reordered), state)
    # Asked in the question's language, not the profile's (the feedback above is the planner's, in the profile's).
    asked = person_texts(question_of(state), profile_of(context)).place_not_given
    ask = asked if await asyncio.to_thread(_place_not_given, state, found) else None
    return Checked(candidate, [place_text(p, texts) for p in found], reordered, ask=ask)


async def _place_to_ask(plan: Plan, state: AgentState, context: Context, deps: Deps) -> str | None:
    """The question for the user when ``plan`` (malformed or not) takes a place nobody gave: a date word or an
    invented city as a place argument, or a result only a place-taking tool gives read from a call the plan
    left out, while no source names a place; ``None`` otherwise."""
    dated = await asyncio.to_thread(_date_values, plan, state, context, deps)
    invented = [PlaceProblem("invented", d.value, d.call_id) for d in dated if d.takes_places]
    invented += [p for p in await asyncio.to_thread(place_check, state, plan) if p.kind == "invented"]
    if invented:
        asked = await asyncio.to_thread(_place_not_given, state, invented)
    else:
        asked = await asyncio.to_thread(_unplanned_place, plan, state, deps)
    return person_texts(question_of(state), profile_of(context)).place_not_given if asked else None


def _unplanned_place(plan: Plan, state: AgentState, deps: Deps) -> bool:
    """Whether ``plan`` reads a place-taking tool's result from a call it left out while no source names a place
    (:func:`planwerk.core.scope.unplanned_place_result`). Blocking (the gazetteer): runs in a worker thread."""
    gazetteer = default_gazetteer()
    available = results_of(state.get("calls", [])).keys()
    if not unplanned_place_result(plan, deps.tools.specs, gazetteer, available):
        return False
    return names_no_place(question_of(state), place_sources(state), gazetteer)


def parse_reply(text: str, plan_format: PlanFormat, specs: Mapping[str, ToolSpec]) -> Plan:
    """The plan in a planner's reply, written as ``plan_format`` says; :class:`PlanParseError` saying why not.

    A reply to an expression prompt that is a JSON plan instead (a model served elsewhere, decoding freely, that
    was trained on JSON tool plans) is still a plan: it runs when it parses, and the expression's problem is the
    feedback when it does not."""
    if plan_format == "expression":
        try:
            return parse_expression_plan(text, specs)
        except PlanParseError:
            if "{" not in text:
                raise
            with contextlib.suppress(PlanParseError):
                return parse_plan(text)
            raise
    return parse_plan(text)


def _plan_problems(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    profile = profile_of(context)
    problems = check_plan(
        plan,
        {**deps.tools.specs, **builtin_specs(deps.tools.specs, profile)},
        user_fields=user_fields(state.get("user", {}), question_of(state)).keys(),
        allowed_tools=profile.allowed_tools,
        available=results_of(state.get("calls", [])).keys(),
    )
    texts = texts_for(profile)
    if plan.ask_user is not None and echoes_question(plan.ask_user, question_of(state)):
        problems.append(texts.echoed_question.format(decline=DECLINE_BY_FORMAT[profile.plan_format]))
    if profile.sourced_numbers and precise_literals(plan):  # the sources (results as JSON) only when needed
        sources = [question_of(state), *place_sources(state)]
        problems += [
            texts.invented_number.format(call=found.call_id, argument=found.argument, value=format_value(found.value))
            for found in invented_numbers(plan, sources)
        ]
    # A call declared to change something (destructiveHint, or the profile's approve list) takes no number nobody
    # gave: after an extract found no value, the 1.5B model planned an acting call with a number of its own.
    declared = changing_tools(deps, profile)
    changing = {c.id for _, c in plan.calls() if c.name in declared}
    if changing and precise_literals(plan, 0, changing):
        sources = [question_of(state), *place_sources(state)]
        problems += [
            texts.invented_number.format(call=found.call_id, argument=found.argument, value=format_value(found.value))
            for found in invented_numbers(plan, sources, 0, changing)
        ]
    # A sample value of an example built from the tools ("cell shape A") is no value the user gave.
    asked = _asked(state)
    problems += [
        texts.copied_placeholder.format(call=call_id, argument=argument, value=value)
        for call_id, argument, value in copied_placeholders(plan, asked)
    ]
    # A retrieved chunk's label is the prompt's markup, not a value the person gave, unless the person wrote it
    # ("read notes.txt" where the corpus also holds a notes.txt).
    labels = {str(hit.get("source", "")) for hit in state.get("hits", [])}
    labels |= {label.split("#", 1)[0] for label in labels}
    labels = {label for label in labels if label.casefold() not in asked.casefold()}
    problems += [
        texts.source_label_value.format(call=call_id, argument=argument, value=value)
        for call_id, argument, value in labelled_values(plan, labels)
    ]
    # A call whose every number (two or more) is a built example's sample number, none stated: copied whole. Single
    # sample numbers are not judged: "steps 3" for "run the long operation" or tick 0..4 for "count" were chosen,
    # and sending them back failed three tests of the whole suite (prompts.zero_shot.copied_sample_numbers).
    if uses_built_examples(deps.tools.specs, library(profile.examples)):
        problems += [
            texts.copied_placeholder.format(call=call_id, argument=names, value=values)
            for call_id, names, values in copied_sample_calls(plan, asked)
        ]
    # A call that failed on what it was given fails again with the same arguments: the 0.5B model wrote such calls
    # again after the error in most runs of the domain answers set (a folder listing of a file, an invented URI).
    problems += [
        texts.failed_again.format(call=call_id, tool=tool, error=error)
        for call_id, tool, error in _failed_again(plan, state)
    ]
    # A tool of a server that is down is missing from the catalog: say why, not only "unknown tool".
    down: Mapping[str, str] = getattr(deps.tools, "unavailable", {})
    if down and any(call.name not in deps.tools.specs for _, call in plan.calls()):
        listed = "; ".join(f"{server} ({reason})" for server, reason in sorted(down.items()))
        problems.append(texts.servers_down.format(servers=listed))
    return problems


FAILED_AGAIN_ERROR_CHARS = 160
"""The earlier error is quoted to the planner in at most this many characters."""
REPEATED_FAILURE_KINDS: frozenset[FailureKind] = frozenset({"invalid_arguments", "not_found", "error", "forbidden"})
"""Failure kinds a call repeats when it runs again with the same arguments."""


def _ran_as(call: PlannedCall, records: Sequence[CallRecord]) -> CallRecord | None:
    """The first of ``records`` that ran ``call``'s tool with its arguments as written (references resolved to the
    same values do not count: a call that takes an earlier result is judged by the plan check, not here)."""
    return next((r for r in records if r["tool"] == call.name and r.get("args") == call.arguments), None)


def _failed_again(plan: Plan, state: AgentState) -> list[tuple[str, str, str]]:
    """Each planned call (id, tool, earlier error) whose tool ran in this turn with the same arguments and failed on
    them or on where it pointed (a path outside the permitted folders): not a service that was down (trying again
    may work), nor a call that did not run (skipped, rejected by the person, unclear)."""
    failed = [
        record
        for record in state.get("calls", [])
        if record.get("status") != "ok" and record.get("kind") in REPEATED_FAILURE_KINDS
    ]
    found = []
    for _, call in plan.calls():
        if (record := _ran_as(call, failed)) is not None:
            error = " ".join(str(record.get("error") or record.get("kind")).split())[:FAILED_AGAIN_ERROR_CHARS]
            found.append((call.id, call.name, error))
    return found


UNBACKED_KINDS: frozenset[ProblemKind] = frozenset({"number", "date", "place", "unbacked_action"})
"""What a plan's own answer may not state unbacked: numbers, dates and places no source contains (the rest of the
answer check is about answers written after calls ran, or to context questions, and stays with the finalizer)."""


def _unbacked_final(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's problem when ``plan`` calls nothing yet its ``final`` states numbers, dates or places that
    neither the question, the conversation nor the retrieved chunks contain ("22 °C" for a weather question, a
    computed "42" for a calculation): then the tools were needed. Blocking: run it in a worker thread."""
    profile = profile_of(context)
    if plan.call_count or plan.ask_user is not None or not plan.final or not visible_specs(deps.tools, profile):
        return []
    check = answer_check_for(AgentState(**{**state, "plan": plan.model_dump()}), context, profile, deps)
    claims = [p.claim for p in check(plan.final).problems if p.kind in UNBACKED_KINDS and p.claim]
    # (an action the final claims is in its own words: "I have sent it" needs the call that sends)
    if not claims:
        return []
    return [texts_for(profile).final_unbacked.format(claims=", ".join(dict.fromkeys(claims)))]


EMPTY_PLAN_FEEDBACK = "empty_plan"
"""The ``kind`` of a feedback item that questioned an empty plan: it is questioned once per planning round."""


def _empty_plan(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan that calls nothing while loaded tools fit the question
    (:func:`planwerk.core.question_fit.fitting_tools`): asked once per planning round, not when retrieved context
    may answer, not for ``ask_user``. Its reason (``reason`` or its ``final``) is quoted back, and the plan with
    one call of the best fitting tool is shown with slots for its values. Blocking (the
    analyzer loads its word lists once): run it in a worker thread."""
    profile = profile_of(context)
    # Expression plans decline with answer("…"), which the unbacked-final check already covers.
    if plan.call_count or plan.ask_user is not None or state.get("hits") or profile.plan_format != "json":
        return []
    if state.get("rounds"):  # a later round's empty plan: the earlier rounds' calls ran, nothing is left to call
        return []
    loaded = {name: spec for name, spec in visible_specs(deps.tools, profile).items() if name in deps.tools.specs}
    fitting = fitting_tools(question_of(state), loaded, analyze)
    if not fitting:
        return []
    texts = texts_for(profile)
    why = plan.reason or plan.final
    reason = texts.empty_plan_reason.format(reason=" ".join(why.split())[:200]) if why else ""
    best = loaded[fitting[0]]
    # The best fitting tool's call to complete: naming the tools alone left a small model refusing again.
    skeleton = call_skeleton(best, texts.empty_plan_value, task_text(best))
    question = texts.empty_plan.format(tools=", ".join(fitting), reason=reason)
    return [question + texts.empty_plan_call.format(plan=skeleton)]


UNANCHORED_PLAN_FEEDBACK = "unanchored_plan"
"""The ``kind`` of a feedback item that asked whether a plan anchored in nothing the person said was meant (once
per round)."""


def _unanchored_plan(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan none of whose tools shares a word with the question and none of whose values
    the question or the conversation states (:func:`_unanchored_values`): once per planning round. The plan
    without calls is shown as the other choice; the same plan written again waits for a person's approval
    (:func:`still_unanchored`). Blocking (the analyzer loads its word lists once): run it in a thread."""
    values = _unanchored_values(plan, state, context, deps)
    if not values:
        return []
    tools = ", ".join(dict.fromkeys(call.name for _, call in plan.calls()))
    return [texts_for(profile_of(context)).unanchored_plan.format(tools=tools, values=", ".join(values))]


def still_unanchored(plan: Plan, state: AgentState, context: Context, deps: Deps) -> bool:
    """Whether ``plan``, which passed the check, is anchored in nothing the person said although the check asked
    about that in this planning round: the model wrote it again, so its calls wait for a person's approval
    (``Profile.approve_unanchored``). Measured on a function-calling benchmark (0.5B model, BENCHMARKS.md §13): of
    seven plans asked about, six came back unchanged (a URL, flight search values, a project name nobody named),
    and each ran. Blocking (the analyzer): run it in a thread."""
    asked = {item.get("kind") for item in state.get("feedback", [])}
    if UNANCHORED_PLAN_FEEDBACK not in asked or not profile_of(context).approve_unanchored:
        return False
    return bool(_unanchored_values(plan, state, context, deps))


def _unanchored_values(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The values of a plan anchored in nothing the person said (:func:`planwerk.core.question_fit.unanchored_values`),
    for JSON plans in the first planning round, where the profile's values come from the person: it asks what the
    question names (``Profile.names_in_question``) or wants precise numbers sourced (``Profile.sourced_numbers``;
    not math, whose constants are the model's to write). None when earlier results may hold the values. Retrieved
    context counts as said where it is about the question (:func:`planwerk.checks.context.passages_on`, the question
    as retrieval searched it): a value such a chunk states is anchored, so the check need not be off where there is a
    corpus (measured on the travel set, 0.5B model: "What does the Razepato eat?" planned as ``add(1, 1)``, and the
    answer about that sum was kept); a chunk that shares only its document's name with the question anchors nothing
    ("Was frisst das Razepato?" planned ``add(14, 14)`` from a chunk on territories)."""
    profile = profile_of(context)
    if not (profile.names_in_question or profile.sourced_numbers) or profile.plan_format != "json":
        return []
    if state.get("rounds") or state.get("calls"):
        return []
    said = [
        *(str(message.content) for message in history_before_question(state)),
        *(str(c.get("answer", "")) for c in state.get("clarifications", [])),
        *(str(value) for value in (state.get("user") or {}).values()),
    ]
    calls = [(call.name, call.arguments) for _, call in plan.calls()]
    question = question_of(state)
    if _ISO_DAY.search(json.dumps([arguments for _, arguments in calls], default=str)):
        # A day is said by its words ("the day after tomorrow"). Not today by itself: a function-calling benchmark's
        # irrelevance entry (0.5B model) planned a date tool for today to answer a question about history.
        today = today_of(context)
        days = {m.day for text in (question, *said) for m in find_dates(text, today)}
        said.append(" ".join(day.isoformat() for day in sorted(days)))
    searched = state.get("retrieval_query") or question
    said += [str(hit["text"]) for hit in passages_on(searched, state.get("hits") or [], analyze=analyze)]
    return unanchored_values(question, said, calls, deps.tools.specs, analyze)


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


UNUSED_NUMBERS_FEEDBACK = "unused_numbers"
"""The ``kind`` of a feedback item that asked about numbers of the question no call takes (once per round)."""


def _unused_numbers(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan whose calls take some of the numbers the question states but not others
    (:func:`planwerk.core.literals.unused_question_numbers`), where the profile asks it
    (``Profile.every_question_number``) and a call that reads could take them: once per planning round, so a plan
    that meant to leave them out stands. The plan with one call per value is shown: told in words, the 0.5B model
    wrote the same one call again, or one call for another of the numbers."""
    profile = profile_of(context)
    if not profile.every_question_number or profile.plan_format != "json" or state.get("rounds"):
        return []
    question = question_of(state)
    fixed = changing_tools(deps, profile)
    if (proposal := one_call_per_value(plan, question, fixed)) is not None:
        unused = ", ".join(unused_question_numbers(plan, question))  # the proposal exists, so there are some
    elif (sets := further_sets(plan, question, fixed)) is not None:
        proposal = sets.completed(plan)
        unused = ", ".join(json.dumps(value, ensure_ascii=False) for value in sets.values)
    else:
        return []
    texts = texts_for(profile)
    shown = shown_plan(proposal)
    return [texts.unused_numbers.format(numbers=unused) + texts.unused_numbers_plan.format(plan=shown)]


def _names_scope(
    plan: Plan, state: AgentState, context: Context, deps: Deps
) -> tuple[dict[str, ToolSpec], set[str]] | None:
    """The loaded tools and the plan's tools, for the questions about what the question names
    (``Profile.names_in_question``, JSON plans, the first planning round); ``None`` where they are not asked."""
    profile = profile_of(context)
    if not profile.names_in_question or profile.plan_format != "json" or state.get("rounds"):
        return None
    loaded = {name: spec for name, spec in visible_specs(deps.tools, profile).items() if name in deps.tools.specs}
    return loaded, {call.name for _, call in plan.calls()}


BETTER_TOOL_FEEDBACK = "better_tool"
"""The ``kind`` of a feedback item that asked whether a better fitting tool was meant (once per round)."""


def _better_tool(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan whose one tool shares clearly fewer words with the question than another
    loaded tool (:func:`planwerk.core.question_fit.better_fitting_tool`), where the profile asks it
    (``Profile.names_in_question``): once per planning round, so a plan that meant its tool stands; never when the
    plan's tool changes something or the better one does. The plan with that tool's call instead is shown.
    Blocking (the analyzer loads its word lists once): run it in a thread."""
    profile = profile_of(context)
    if (scope := _names_scope(plan, state, context, deps)) is None:
        return []
    loaded, planned = scope
    better = better_fitting_tool(question_of(state), planned, loaded, analyze)
    changing = changing_tools(deps, profile)
    if better is None or better in changing or planned & set(changing):
        return []
    # A tool the question names besides the planned one is a further request, not a better choice: measured on a
    # benchmark's parallel-multiple entry, "replace it" kept the 0.5B model on its one call.
    if better in unplanned_named_tools(question_of(state), planned, loaded, analyze):
        return []
    texts = texts_for(profile)
    (own,) = planned
    shown = replaced_skeleton(plan.stored(), own, loaded[better], texts.empty_plan_value)
    return [texts.better_tool.format(better=better, planned=own, plan=shown)]


UNPLANNED_TOOLS_FEEDBACK = "unplanned_tools"
"""The ``kind`` of a feedback item that asked about a tool the question names and the plan leaves out (once per
round)."""


def _unplanned_tools(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan with calls that leaves out a loaded tool whose name the question spells out
    (:func:`planwerk.core.question_fit.unplanned_named_tools`), where the profile asks it
    (``Profile.names_in_question``): once per planning round, so a plan that meant to leave it out stands. The plan
    with that tool's call added, its values left to fill in, is shown: a small model adds a call it sees more
    readily than one it is told about. Blocking (the analyzer loads its word lists once): run it in a thread."""
    profile = profile_of(context)
    if (scope := _names_scope(plan, state, context, deps)) is None:
        return []
    loaded, planned = scope
    named = unplanned_named_tools(question_of(state), planned, loaded, analyze)
    if not named:
        return []
    texts = texts_for(profile)
    shown = calls_skeleton(plan.stored(), [loaded[name] for name in named], texts.empty_plan_value)
    return [texts.unplanned_tools.format(tools=", ".join(named), plan=shown)]


UNFILLED_ARGUMENTS_FEEDBACK = "unfilled_arguments"
"""The ``kind`` of a feedback item that asked about optional arguments the question names and a call leaves out
(once per round)."""


def _unfilled_arguments(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan whose calls leave out optional arguments the question names by their names
    (:func:`planwerk.core.question_fit.unfilled_named_arguments`), where the profile asks it
    (``Profile.names_in_question``): once per planning round, so a plan that meant to leave them out stands; never
    for tools that change something. The plan with a slot for each is shown. Blocking (the analyzer loads its word
    lists once): run it in a thread."""
    profile = profile_of(context)
    if not profile.names_in_question or profile.plan_format != "json" or state.get("rounds"):
        return []
    stored = plan.stored()
    specs = deps.tools.specs
    unfilled = unfilled_named_arguments(stored, question_of(state), specs, analyze, changing_tools(deps, profile))
    if not unfilled:
        return []
    texts = texts_for(profile)
    shown = arguments_skeleton(stored, unfilled, specs, texts.empty_plan_value)
    named = ", ".join(f"{name} ({call_id})" for call_id, names in unfilled.items() for name in names)
    return [texts.unfilled_arguments.format(arguments=named, plan=shown)]


MISSHAPEN_VALUES_FEEDBACK = "misshapen_values"
"""The ``kind`` of a feedback item that asked about text values not written in their tool's form (once per
round)."""


def _misshapen_values(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[str]:
    """The check's question to a plan whose text values are not written in the form their tool's description shows
    (:func:`planwerk.core.value_shapes.misshapen_values`: "Berlin" where the examples are 'Europe/London', "15:00
    Uhr" for HH:MM), where the profile asks what the question names (``Profile.names_in_question``): once per
    planning round, so a plan that meant the value stands. Such a call fails the same way on every retry."""
    if _names_scope(plan, state, context, deps) is None:
        return []
    found = misshapen_values(plan.stored(), deps.tools.specs)
    if not found:
        return []
    texts = texts_for(profile_of(context))
    values = "; ".join(
        texts.misshapen_value.format(argument=m.argument, tool=m.tool, value=m.value, form=m.form.shown())
        for m in found
    )
    return [texts.misshapen_values.format(values=values)]


PlanQuestion = Callable[[Plan, AgentState, Context, Deps], list[str]]
"""A question the check asks a plan that passed: its problems (the question), or none. Blocking: run in a thread."""

QUESTIONS_ONCE: tuple[tuple[str, PlanQuestion], ...] = (
    (EMPTY_PLAN_FEEDBACK, _empty_plan),
    (UNANCHORED_PLAN_FEEDBACK, _unanchored_plan),
    (UNUSED_NUMBERS_FEEDBACK, _unused_numbers),
    (UNPLANNED_TOOLS_FEEDBACK, _unplanned_tools),
    (BETTER_TOOL_FEEDBACK, _better_tool),
    (UNFILLED_ARGUMENTS_FEEDBACK, _unfilled_arguments),
    (MISSHAPEN_VALUES_FEEDBACK, _misshapen_values),
)
"""The questions asked of a plan that passed the check, each by its feedback ``kind`` at most once per planning
round (a plan written again after its question stands), in this order: the first one with problems is asked."""


async def _question_once(plan: Plan, state: AgentState, context: Context, deps: Deps) -> tuple[list[str], str | None]:
    """The first question of :data:`QUESTIONS_ONCE` not asked yet in this planning round that has problems, with
    its kind; ``([], None)`` when none has."""
    asked = {item.get("kind") for item in state.get("feedback", [])}
    for kind, question in QUESTIONS_ONCE:
        if kind not in asked and (problems := await asyncio.to_thread(question, plan, state, context, deps)):
            return problems, kind
    return [], None


def _listed_values(plan: Plan, state: AgentState, context: Context, deps: Deps) -> Plan | None:
    """``plan`` with one call per value where the question lists numbers and the plan takes one of the list
    (:func:`planwerk.core.literals.listed_values`), where the profile asks for every question number; the completed
    plan is checked like any plan."""
    profile = profile_of(context)
    if not profile.every_question_number or profile.plan_format != "json" or state.get("rounds"):
        return None
    completed = listed_values(plan, question_of(state), changing_tools(deps, profile))
    return Plan.model_validate(completed) if completed is not None else None


def _further_value_sets(plan: Plan, state: AgentState, context: Context, deps: Deps) -> Plan | None:
    """``plan`` with its one call that takes values the question sets apart (quotes, bracketed lists) copied for
    each further set of them (:func:`planwerk.core.value_sets.further_value_sets`), where the profile asks for every
    question number and the call's tool is the only one loaded (with others, a further set may be another tool's:
    the plan is asked about it instead, see :func:`_unused_numbers`); the completed plan is checked like any plan."""
    profile = profile_of(context)
    if not profile.every_question_number or profile.plan_format != "json" or state.get("rounds"):
        return None
    if len(deps.tools.specs) != 1:
        return None
    completed = further_value_sets(plan, question_of(state), changing_tools(deps, profile))
    return Plan.model_validate(completed) if completed is not None else None


def _calls_after_extract(plan: Plan, state: AgentState) -> Plan | None:
    """``plan``, a corrected plan, with the calls of the previous plan that failed reading fields of a text result
    planned again after the plan's extract of that text (:func:`planwerk.core.extract.calls_after_extract`);
    ``None`` when there is no such call or no previous plan."""
    previous, calls = state.get("plan"), state.get("calls") or []
    if not previous or not calls:
        return None
    last = {call["id"]: call for call in calls}  # a later attempt's record of an id wins
    failed = {cid for cid, call in last.items() if call["status"] == "error"}
    texts = {cid for cid, call in last.items() if call["status"] == "ok" and isinstance(as_data(call["result"]), str)}
    restored = calls_after_extract(plan, Plan.from_stored(previous), failed, texts)
    return Plan.model_validate(restored) if restored is not None else None


def _values_from_answer(plan: Plan, state: AgentState) -> Plan | None:
    """``plan`` with each argument an earlier call could not take from an extract (kind ``unclear``, asked about)
    taken from an extract of the person's answer instead (:func:`planwerk.core.extract.values_from_answer`);
    ``None`` when nobody answered or the plan takes no such argument again."""
    if not (state.get("user") or {}).get("answer"):
        return None
    last = {call["id"]: call for call in state.get("calls") or []}
    unclear = [call for call in last.values() if call["kind"] == "unclear"]
    answered = values_from_answer(plan, unclear) if unclear else None
    return Plan.model_validate(answered) if answered is not None else None


NOT_THE_VALUES: frozenset[str] = DOWN_KINDS | {"rejected"}
"""Failures that say nothing against a call's values: the service was down or refused it, or a person did."""


def _stated_values(plan: Plan, state: AgentState, context: Context, deps: Deps) -> Plan | None:
    """``plan`` with the question's numbers written as its arguments take them, where the profile asks for every
    question number: a percentage as the fraction an argument's description shows by example
    (:func:`planwerk.core.literals.percents_as_fractions`), an unstated number replaced by the one the question
    writes next to the argument's name (:func:`planwerk.core.literals.named_values`), a text that repeats its
    argument's name before the value written without it (:func:`planwerk.core.literals.unlabelled_values`), an
    optional argument left out set to the allowed values the question states
    (:func:`planwerk.core.enum_values.stated_enum_values`), a text value not in its form written as the one example
    of the form that holds it or a part naming the same place (a bare city name as the example '<region>/<city>',
    :func:`planwerk.core.value_shapes.as_shown_values`; the examples' vocabulary where the standard library holds
    it, :func:`planwerk.text.vocabularies.known_vocabularies`),
    and the one day the question names given to the one parameter that takes a day and was left out
    (:func:`planwerk.core.date_values.stated_day`); ``None`` when nothing changes. The changed plan is checked like
    any plan. A value an earlier call failed with is written in its form the same way when one example names its
    place. Blocking (the date reader): runs in a worker thread."""
    profile = profile_of(context)
    if not profile.every_question_number or profile.plan_format != "json" or state.get("rounds"):
        return None
    question = question_of(state)
    descriptions = {
        name: {
            argument: str(schema.get("description", ""))
            for argument, schema in spec.input_schema.get("properties", {}).items()
            if isinstance(schema, Mapping)
        }
        for name, spec in deps.tools.specs.items()
    }
    changed, fixed = None, changing_tools(deps, profile)
    if (fractions := percents_as_fractions(plan, question, descriptions, fixed)) is not None:
        plan = changed = Plan.model_validate(fractions)
    if (named := named_values(plan, question, fixed)) is not None:
        plan = changed = Plan.model_validate(named)
    if (unlabelled := unlabelled_values(plan, question, fixed)) is not None:
        plan = changed = Plan.model_validate(unlabelled)
    if (enumerated := stated_enum_values(plan, question, deps.tools.specs, fixed)) is not None:
        plan = changed = Plan.model_validate(enumerated)
    gazetteer = default_gazetteer()
    failed = {
        (str(call["tool"]), argument, value)
        for call in state.get("calls", [])
        if call["status"] == "error" and call.get("kind") not in NOT_THE_VALUES
        for argument, value in (call.get("args") or {}).items()
        if isinstance(value, str)
    }
    shaped = as_shown_values(
        plan.stored(),
        deps.tools.specs,
        frozenset(fixed),
        lambda text: gazetteer.lookup(text.split()),
        failed,
        question,
        known_vocabularies(),
    )
    if shaped is not None:
        plan = changed = Plan.model_validate(shaped)
    schemas = {name: spec.input_schema for name, spec in deps.tools.specs.items()}
    if (dated := stated_day(plan, question, schemas, today=today_of(context), fixed=frozenset(fixed))) is not None:
        changed = Plan.model_validate(dated)
    return changed


def _asked(state: AgentState) -> str:
    """What the person wrote for this question: the question and the answers to ``ask_user`` questions."""
    return " ".join([question_of(state), *(str(c.get("answer", "")) for c in state.get("clarifications", []))])


def _without_copied_examples(plan: Plan, state: AgentState, context: Context, deps: Deps) -> Plan | None:
    """``plan`` without the calls it copied whole from an example built from the tools beside calls of its own
    (:func:`planwerk.prompts.zero_shot.copied_example_calls`), when no other call takes their results; ``None`` when
    nothing changes or the planner was shown the library's examples. Blocking (builds the examples, each checked):
    runs in a worker thread."""
    if plan.call_count < 3:  # two copied calls at least, and one of the plan's own: skip building the examples
        return None
    profile = profile_of(context)
    specs = visible_specs(deps.tools, profile)
    if not uses_built_examples(specs, library(profile.examples)):
        return None
    copied = copied_example_calls(plan, _asked(state), tool_examples(specs, texts_for(profile)))
    if not copied or with_dependents(plan, copied) != set(copied):
        return None
    kept = without_calls(plan, copied)
    return kept[0] if kept is not None else None


def _without_stray_day_places(plan: Plan, context: Context, deps: Deps) -> Plan | None:
    """``plan`` without its stray calls given a day where a place belongs
    (:func:`planwerk.core.date_values.without_stray_day_places`); ``None`` when nothing changes. Blocking (the
    gazetteer, the date reader): runs in a worker thread."""
    schemas = {name: spec.input_schema for name, spec in deps.tools.specs.items()}
    data = without_stray_day_places(plan, schemas, gazetteer=default_gazetteer(), today=today_of(context))
    return Plan.model_validate(data) if data is not None else None


def _follow_up_day(plan: Plan, state: AgentState, context: Context) -> Plan | None:
    """``plan`` with the day it copied from an earlier question of the thread replaced by the one day the question
    names (:func:`planwerk.core.date_values.follow_up_day`), for JSON plans in the first planning round; ``None``
    when nothing changes. Blocking (the date reader): runs in a worker thread."""
    if profile_of(context).plan_format != "json" or state.get("rounds") or not (earlier := earlier_questions(state)):
        return None
    data = follow_up_day(plan, question_of(state), earlier, today=today_of(context))
    return Plan.model_validate(data) if data is not None else None


def _stated_choices(plan: Plan, state: AgentState, context: Context, deps: Deps) -> Plan | None:
    """``plan`` with a listed value the question does not state replaced by the one listed value it states
    (:func:`planwerk.core.enum_values.stated_choices`), for every profile with JSON plans: it reads no number, so it
    holds where the question's numbers are not all the calls' (travel); the first planning round only, as the other
    rewrites. ``None`` when nothing changes."""
    profile = profile_of(context)
    if profile.plan_format != "json" or state.get("rounds"):
        return None
    data = stated_choices(plan, question_of(state), deps.tools.specs, changing_tools(deps, profile))
    return None if data is None else Plan.model_validate(data)


def _uncontradicted(plan: Plan, state: AgentState, context: Context) -> tuple[Plan, tuple[str, ...]] | None:
    """``plan`` with the two place arguments swapped in each call that ran before with the same arguments and whose
    result contradicted a clock time the question gives for a place (:func:`planwerk.checks.pairs.contradicted_times`),
    and those calls' ids; ``None`` when no call was written again so. The same call would deliver the same
    contradiction, and ``verify`` tells the planner of one only once: measured on the held-out places set (0.5B,
    BENCHMARKS.md §12, session 16), the planner wrote the told plan again, and an answer from its result was kept.
    JSON plans only, as ``verify``'s suggested plan. Blocking (the gazetteer): runs in a worker thread."""
    question = question_of(state)
    runs = [c for c in state.get("calls", []) if c.get("status") == "ok"]
    if profile_of(context).plan_format != "json" or not runs or not CLOCK_TIME.search(question):
        return None
    found = []
    for _, call in plan.calls():
        if (ran := _ran_as(call, runs)) is not None:
            contradicted = contradicted_times(question, [ran], default_gazetteer())
            found += [replace(c, call=call.id) for c in contradicted if c.place_argument]
    swapped = swapped_places(plan.stored(), found) if found else None
    if swapped is None:
        return None
    return Plan.model_validate(swapped), tuple(dict.fromkeys(c.call for c in found))


def _complete(plan: Plan, missing: list[str]) -> Plan | None:
    return complete_missing_places(plan, missing, default_gazetteer())


def _substitute(
    plan: Plan, found: list[PlaceProblem], state: AgentState, context: Context
) -> tuple[Plan, Substitution] | None:
    """``plan`` with its one invented place (a few-shot example's city) replaced by the one place it left out
    (:func:`planwerk.core.scope.substitute_invented_place`); ``None`` when that would be a guess. On the last
    planning attempt, a comparison of several invented places copied from an example keeps one chain for the
    place left out (measured with the 0.5B model, BENCHMARKS.md §12, session 8: a follow-up was planned three times
    as an example's comparison of two other cities, then no plan). Blocking (the gazetteer): runs in a worker
    thread."""
    return substitute_invented_place(
        plan,
        found,
        question=question_of(state),
        earlier=earlier_questions(state),
        gazetteer=default_gazetteer(),
        reserved=results_of(state.get("calls", [])).keys(),
        several=state.get("attempts", 0) >= context.max_plan_attempts,
    )


def _named(checked: Checked, state: AgentState) -> Checked:
    """``checked`` with its plan's place arguments in the genitive written as names
    (:func:`planwerk.core.scope.name_inflected_places`): the place check takes "Barcelonas" for Barcelona, a
    geocoder does not. Blocking (the gazetteer): runs in a worker thread."""
    assert checked.plan is not None
    named = name_inflected_places(
        checked.plan, question=question_of(state), conversation=place_sources(state), gazetteer=default_gazetteer()
    )
    if named is None:
        return checked
    plan, renamed = named
    return replace(checked, plan=plan, named=tuple(renamed))


def _side_effects(plan: Plan, deps: Deps, context: Context) -> bool:
    """Whether running ``plan`` more than once could repeat a side effect (a destructive tool or one that needs
    approval): then only one sampled plan runs, no vote."""
    profile = profile_of(context)
    for _, call in plan.calls():
        spec = deps.tools.specs.get(call.name)
        if (spec is not None and spec.destructive) or call.name in profile.approve:
            return True
    return False


def _date_values(plan: Plan, state: AgentState, context: Context, deps: Deps) -> list[DateValue]:
    """The plan's date expressions given as values (:mod:`planwerk.core.date_values`). Blocking (the gazetteer,
    the date reader): runs in a worker thread."""
    schemas = {name: spec.input_schema for name, spec in deps.tools.specs.items()}
    today = today_of(context)
    return date_values(plan, schemas, gazetteer=default_gazetteer(), today=today)


def _place_not_given(state: AgentState, found: list[PlaceProblem]) -> bool:
    return place_not_given(
        found, question=question_of(state), conversation=place_sources(state), gazetteer=default_gazetteer()
    )


def place_check(state: AgentState, plan: Plan) -> list[PlaceProblem]:
    """The plan's invented and missing places (:mod:`planwerk.core.scope`) against the question and everything
    else a place may come from. Blocking (loads the gazetteer once per process): runs in a worker thread."""
    return place_problems(
        plan, question=question_of(state), conversation=place_sources(state), gazetteer=default_gazetteer()
    )


def place_sources(state: AgentState) -> list[str]:
    """The texts besides the question a plan's places may come from: the earlier questions of the thread, the
    user's clarifications and fields, the retrieved chunks and the earlier results."""
    conversation = earlier_questions(state)
    conversation += [item["answer"] for item in state.get("clarifications", [])]
    conversation += [str(value) for key, value in state.get("user", {}).items() if key != "raw"]
    conversation += [hit["text"] for hit in state.get("hits", [])]
    if results := results_of(state.get("calls", [])):
        conversation.append(json.dumps(results, ensure_ascii=False, default=str)[:MAX_RESULTS_TEXT])
    return conversation


def earlier_questions(state: AgentState) -> list[str]:
    """The earlier questions of the thread, oldest first (what a follow-up's referent is looked up in)."""
    return [str(m.content) for m in history_before_question(state) if isinstance(m, HumanMessage)]


def place_text(problem: PlaceProblem, texts: PromptTexts) -> str:
    """A place problem as checker feedback in ``texts``' language."""
    if problem.kind == "invented":
        return texts.invented_place.format(place=problem.place, call=problem.call_id)
    return texts.missing_place.format(place=problem.place)

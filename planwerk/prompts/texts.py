"""planwerk's texts per language: one :class:`PromptTexts` per language, picked by a profile's ``language``.

The texts themselves live in :mod:`planwerk.prompts.protocol` (German) and :mod:`planwerk.prompts.protocol_en`
(English), as module constants named like the fields in upper case (``plan_format`` is ``PLAN_FORMAT``). A field
added here without its constant in both modules fails at import, so the languages cannot drift apart silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from planwerk.prompts import protocol, protocol_en

if TYPE_CHECKING:
    from planwerk.core.language import Language
    from planwerk.core.plan import PlanFormat


@dataclass(frozen=True)
class PromptTexts:
    """Every text planwerk shows a model or a person, in one language."""

    language: Language
    plan_format: str
    """The shape of a plan (the protocol's first part)."""
    rules_heading: str
    dates_rule: str
    """The rule about dates, left out for profiles without dates."""
    plan_rules: tuple[str, ...]
    """The protocol's rules, ``dates_rule`` among them."""
    answer_instructions: str
    """Takes ``{source}`` and ``{failures}`` (see :meth:`answer_request`)."""
    answer_source: str
    """Takes ``{source}``."""
    answer_failures: str
    """Takes ``{tools}``."""
    answer_result: str
    """Takes ``{value}``."""
    answer_key: str
    """Takes ``{source}`` and ``{sentence}`` (a context answer's key sentence)."""
    translate_question: str
    """Asks for the question in this language (retrieval in a corpus of this language)."""
    translate_examples: tuple[tuple[str, str], ...]
    """Questions in another language and their translations into this one, shown as earlier turns."""
    answer_language: str
    """The answer prompt's last line for a question in this language ("Answer in English.")."""
    repair_instructions: str
    """Takes ``{problems}``."""
    failed_calls_instructions: str
    """Takes ``{problems}`` and ``{available}``."""
    contradicted_instructions: str
    """Takes ``{problems}`` and ``{available}``: calls ran, but their results contradict what the question states."""
    contradicted_plan: str
    """Takes ``{plan}``: the plan with a contradicted call's two place arguments swapped, after
    ``contradicted_instructions``."""
    contradicted_time: str
    """Takes ``{call}``, ``{tool}``, ``{time}``, ``{place}`` and ``{taken_for}``: one line of
    ``contradicted_instructions``'s problems."""
    no_plan_answer: str
    answer_revising: str
    """The CLI's progress line when the first answer failed the check and is written again (never the problems)."""
    answer_from_results: str
    """The CLI's progress line when the answer is built from the results after two rejected answers."""
    invented_place: str
    """Takes ``{place}`` and ``{call}``."""
    missing_place: str
    place_not_given: str
    """What the user is asked when a plan needs a place that neither the question nor the conversation names."""
    """Takes ``{place}``."""
    date_value: str
    """Plan check: a date expression given as a value to a parameter that takes no date (``planwerk.core.date_values``).
    Takes ``{call}``, ``{argument}`` and ``{value}``."""
    invented_number: str
    """Takes ``{call}``, ``{argument}`` and ``{value}``: a precise literal no source contains."""
    copied_placeholder: str
    """Takes ``{call}``, ``{argument}`` and ``{value}``: an example's sample value copied into a plan."""
    source_label_value: str
    """Takes ``{call}``, ``{argument}`` and ``{value}``: a retrieved chunk's label ("notes.txt#0") as a value."""
    failed_again: str
    """Takes ``{call}``, ``{tool}`` and ``{error}``: a call that failed on what it was given, planned again with the
    same arguments."""
    unused_numbers: str
    """Takes ``{numbers}``: numbers the question states that no call takes, while calls take others of them."""
    unused_numbers_plan: str
    """Takes ``{plan}``: the plan with one call per number, shown after ``unused_numbers``."""
    better_tool: str
    """Takes ``{better}``, ``{planned}`` and ``{plan}``: a tool that fits the question clearly better than the plan's
    one tool, and the plan with its call instead."""
    unfilled_arguments: str
    """Takes ``{arguments}`` and ``{plan}``: optional arguments the question names that calls leave out (each with
    its call's id), and the plan with slots for them."""
    unanchored_plan: str
    """Takes ``{tools}`` and ``{values}``: no planned tool shares a word with the question and no value of the plan
    comes from it."""
    unplanned_tools: str
    """Takes ``{tools}`` and ``{plan}``: a tool whose name the question spells out, left out of a plan with calls,
    and the plan with its call added."""
    misshapen_values: str
    """Takes ``{values}``: text values not written in the form their tool's description shows."""
    misshapen_value: str
    """Takes ``{argument}``, ``{tool}``, ``{value}`` and ``{form}``: one value of ``misshapen_values``."""
    servers_down: str
    """Takes ``{servers}``: why tools the plan names may be missing (their MCP server is down)."""
    echoed_question: str
    """Plan check: ``ask_user`` asks the user's own question back; takes ``{decline}``, how a plan of the run's
    format declines (:data:`DECLINE_BY_FORMAT`)."""
    final_unbacked: str
    """Takes ``{claims}``: a plan that calls nothing answers with numbers, dates or places nothing backs."""
    empty_plan: str
    """Takes ``{tools}`` and ``{reason}``: a plan without calls while loaded tools fit the question."""
    empty_plan_reason: str
    """Takes ``{reason}``."""
    empty_plan_call: str
    """Takes ``{plan}``: the plan with one call of the best fitting tool, its values left to fill in."""
    empty_plan_value: str
    """Takes ``{type}``: the slot of one argument in ``empty_plan_call``'s plan."""
    previous_question: str
    """Takes ``{question}``."""
    default_clarification: str
    not_found_question: str
    """Takes ``{tool}`` and ``{error}``."""
    unclear_question: str
    """Takes ``{source}``, ``{argument}`` and ``{tool}``: an extract found no single value a call needs."""
    clarification_turn: str
    """Takes ``{question}`` and ``{answer}``."""
    fields_of_text: str
    """Takes ``{id}``, ``{schema}``, ``{field}`` and ``{calls}``: the plan read fields of a text result; values come
    out of text by ``extract``, and the calls that read them are planned again after it."""
    extract_description: str
    """The built-in ``extract`` tool's description in the catalog."""
    extract_instructions: str
    """Takes ``{fields}``: what the extracting model is asked."""
    person_answer: str
    """Where a value came from when an ``extract`` read what the person answered (``extracted_origin``'s source)."""
    extracted_origin: str
    """Takes ``{argument}``, ``{value}``, ``{extract}`` and ``{source}``."""
    unanchored_origin: str
    """How an approval names a value the model chose that nothing the person said holds; takes ``{argument}`` and
    ``{value}``."""
    approval_question: str
    """Takes ``{tool}`` and ``{args}``."""
    rejected_call: str
    """Takes ``{tool}`` and ``{reason}``."""
    progress_planning: str
    """The chat's first sign of a run: an AI message the moment a question is taken, before the planner runs."""
    progress_calls: str
    """Takes ``{tools}``: the text of the AI message that carries the plan's ``tool_calls``."""
    zero_shot_chain: str
    """Takes ``{first}`` and ``{second}``: the question of a two-call example built from the tools."""
    rounds_rule: str
    """The protocol's rule on ``"next_round"`` (only for profiles that plan in rounds)."""
    round_results_heading: str
    """Above the summary of earlier rounds' results."""
    result_fields_seen: str
    """Before the result fields a probing call showed."""
    zero_shot_parallel: str
    """Takes ``{frame}``, ``{first}`` and ``{second}``: one tool called twice in one step, with two sets of values."""
    zero_shot_with_values: str
    """Takes ``{frame}`` and ``{values}``: an example's question with its argument values."""
    zero_shot_both: str
    """Takes ``{first}`` and ``{second}``: two tools asked for side by side (each part a task with its values)."""
    tools_heading: str
    no_tools: str
    result_fields: str
    result_unknown: str
    """Ends the catalog line of a tool without an output schema."""
    examples_heading: str
    question_label: str
    plan_label: str
    context_heading: str
    user_fields_label: str
    tool_results_heading: str
    call_error: str
    cut_note: str
    """Takes ``{total}``."""
    nothing: str
    today_line: str
    """Takes ``{weekday}`` and ``{day}``."""
    weekdays: tuple[str, ...]
    dates_line: str
    """Takes ``{dates}``."""
    date_mention: str
    """Takes ``{text}`` and ``{day}``."""
    expression_format: str
    """The shape of an expression plan (``Profile.plan_format == "expression"``)."""
    expression_rules: tuple[str, ...]
    operators_label: str
    functions_label: str
    expression_repair: str
    """Takes ``{problems}``."""
    expression_failed_calls: str
    """Takes ``{problems}``."""

    def answer_request(
        self,
        *,
        source: str | None = None,
        failed_tools: Sequence[str] = (),
        result: str | None = None,
        key: tuple[str, str] | None = None,
    ) -> str:
        """The finalizer's instructions: the source to name and the failed tools to admit are filled in, and the
        result to state added, each only when there is one."""
        failures = self.answer_failures.format(tools=", ".join(dict.fromkeys(failed_tools))) if failed_tools else ""
        text = self.answer_instructions.format(
            source=self.answer_source.format(source=source) if source else "", failures=failures
        )
        if key is not None:
            text = f"{text}\n{self.answer_key.format(source=key[0], sentence=key[1])}"
        return f"{text}\n{self.answer_result.format(value=result)}" if result is not None else text

    def plan_protocol(self, *, dates: bool = True, plan_format: PlanFormat = "json", rounds: bool = False) -> str:
        """The protocol: the plan's shape and the rules, the date rule only when ``dates``, the rule on rounds only
        when ``rounds``; for ``expression`` plans their shape and rules instead (dates play no part in a
        calculation)."""
        if plan_format == "expression":
            shape, rules = self.expression_format, list(self.expression_rules)
        else:
            shape, rules = self.plan_format, [rule for rule in self.plan_rules if dates or rule != self.dates_rule]
            if rounds:
                rules.append(self.rounds_rule)
        return f"{shape}\n\n{self.rules_heading}\n" + "\n".join(f"- {rule}" for rule in rules)

    def repair_request(self, problems: str, plan_format: PlanFormat = "json") -> str:
        """The feedback after a rejected reply, asking for a plan in ``plan_format`` again."""
        template = self.expression_repair if plan_format == "expression" else self.repair_instructions
        return template.format(problems=problems)


DECLINE_BY_FORMAT: dict[PlanFormat, str] = {"json": '{"steps": [], "final": "…"}', "expression": 'answer("…")'}
"""How a plan declines a question, by plan format (named in the feedback on a question asked back)."""


def _from_module(language: Language, module: ModuleType) -> PromptTexts:
    names = [field.name for field in fields(PromptTexts) if field.name != "language"]
    values = {name: getattr(module, name.upper()) for name in names}
    return PromptTexts(language=language, **values)


GERMAN = _from_module("de", protocol)
"""The German texts (the travel profile's)."""
ENGLISH = _from_module("en", protocol_en)
"""The English texts (the math profile's)."""
TEXTS: dict[str, PromptTexts] = {"de": GERMAN, "en": ENGLISH}
"""Texts by language code."""
ANSWER_INSTRUCTIONS: tuple[str, ...] = tuple(
    text
    for texts in TEXTS.values()
    for text in (texts.answer_request(), texts.answer_source, texts.answer_failures, texts.answer_result)
)
"""The answer prompt's instructions in every language: an answer that repeats a run of their words is an echo of
them (the answer check's ``echo``, :func:`planwerk.checks.build_answer_check`)."""


class HasLanguage(Protocol):
    """What has a language of its own (a :class:`planwerk.profiles.Profile`): the texts need no more of it."""

    @property
    def language(self) -> Language:
        """Its language code."""
        ...


def texts_for(which: HasLanguage | Language) -> PromptTexts:
    """The texts of a profile (by its ``language``) or of a language code; ``ValueError`` for unknown languages."""
    language = which if isinstance(which, str) else which.language
    try:
        return TEXTS[language]
    except KeyError:
        raise ValueError(f"no texts for language {language!r}; known: {', '.join(sorted(TEXTS))}") from None

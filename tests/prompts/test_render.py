"""Rendering prompts: the catalog line of a tool, the planner's and the finalizer's prompt in each language."""

from __future__ import annotations

from datetime import date
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from planwerk.core.tools import ToolSpec
from planwerk.prompts.examples import Example
from planwerk.prompts.render import (
    MAX_ARGUMENT_DESCRIPTION_CHARS,
    MAX_DESCRIPTION_CHARS,
    build_answer_messages,
    build_plan_messages,
    render_calls,
    render_catalog,
    render_dates,
    render_result,
    render_tool,
)
from planwerk.prompts.texts import ENGLISH, GERMAN

TODAY = date(2026, 11, 22)  # a Sunday
NUMBER = {"anyOf": [{"type": "integer"}, {"type": "number"}]}  # what pydantic writes for ``int | float``


def spec(name: str, properties: dict[str, Any], description: str = "", **schema: Any) -> ToolSpec:
    return ToolSpec(
        name,
        description,
        input_schema={"type": "object", "properties": properties, "required": list(properties), **schema},
        output_schema={"type": "object", "properties": {"result": {"type": "number"}}},
    )


SUBTRACT = spec(
    "subtract",
    {
        "arg_0": {**NUMBER, "description": "The number to subtract from"},
        "arg_1": {**NUMBER, "description": "The number to subtract"},
    },
    "subtract(arg_0, arg_1) = arg_0 - arg_1",
)
MAX_NUMBER = spec(
    "max_number",
    {"arg_0": {"type": "array", "items": {"type": "number"}, "description": "A list of numbers."}},
    "Find the maximum value among the given numbers",
)


def test_argument_order_is_the_schemas_and_every_argument_keeps_its_meaning() -> None:
    line = render_tool(SUBTRACT, ENGLISH)
    assert line == (
        "- subtract(arg_0: number, arg_1: number): subtract(arg_0, arg_1) = arg_0 - arg_1. "
        "arg_0: The number to subtract from; arg_1: The number to subtract. → result fields: result"
    )
    # Calculation functions in an expression catalog: the formula explains its arguments (measured that way).
    assert render_tool(SUBTRACT, ENGLISH, all_meanings=False) == (
        "- subtract(arg_0: number, arg_1: number): subtract(arg_0, arg_1) = arg_0 - arg_1. → result fields: result"
    )


def test_a_description_that_mentions_an_argument_does_not_hide_what_the_argument_is() -> None:
    send = spec(
        "send_money",
        {
            "recipient": {"type": "string", "description": "IBAN of the recipient"},
            "amount": {"type": "number", "description": "Amount to send."},
        },
        "Sends an amount of money to a recipient.",
    )
    line = render_tool(send, ENGLISH)
    assert "recipient: IBAN of the recipient" in line and "amount: Amount to send." in line
    # A meaning the tool's description already holds word for word is said once.
    same = spec("echo", {"text": {"type": "string", "description": "The text to echo"}}, "Returns the text to echo.")
    assert render_tool(same, ENGLISH) == "- echo(text: string): Returns the text to echo. → result fields: result"


def test_a_tool_without_an_output_schema_says_its_result_fields_are_unknown() -> None:
    read = ToolSpec("read_file", "Reads a file.", input_schema={"type": "object", "properties": {}})
    assert render_tool(read, ENGLISH) == (
        '- read_file(): Reads a file. → result: fields not described (whole result: {"$ref": "<id>"})'
    )
    assert render_tool(read, GERMAN).endswith('→ Ergebnis: Felder nicht beschrieben (ganz per {"$ref": "<id>"})')
    assert render_tool(read, ENGLISH, unknown_results=False) == "- read_file(): Reads a file."


def test_argument_meanings_enums_and_array_item_types() -> None:
    assert render_tool(MAX_NUMBER, ENGLISH) == (
        "- max_number(arg_0: array[number]): Find the maximum value among the given numbers. "
        "arg_0: A list of numbers. → result fields: result"
    )
    units = spec(
        "convert",
        {
            "value": {"type": "number", "description": "The value to convert."},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            "mode": {"$ref": "#/$defs/Mode"},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
        },
        "Converts a temperature.",
        **{"$defs": {"Mode": {"enum": ["fast", "exact"], "type": "string"}}},
    )
    units = ToolSpec(
        units.name,
        units.description,
        input_schema={**units.input_schema, "required": ["value", "matrix", "mode"]},
    )
    assert render_tool(units, GERMAN) == (
        '- convert(value: number, unit: "c"|"f" = "c", matrix: array[array[integer]], mode: "fast"|"exact", '
        "tags: array[string] = null): Converts a temperature. value: The value to convert. "
        '→ Ergebnis: Felder nicht beschrieben (ganz per {"$ref": "<id>"})'
    )


def test_long_descriptions_are_cut_so_a_tool_stays_one_line() -> None:
    tool = spec(
        "weather",
        {"lat": {"type": "number", "description": "Latitude in degrees " + "and more words " * 20}},
        "Daily weather for a place. " + "Lots of detail about the sources and their limits. " * 10,
    )
    line = render_tool(tool, GERMAN)
    assert "\n" not in line
    description, meanings = line.split("): ", 1)[1].split(" lat: ")
    assert len(description) <= MAX_DESCRIPTION_CHARS + 1 and description.endswith("…")
    assert len(meanings.split(" → ")[0]) <= MAX_ARGUMENT_DESCRIPTION_CHARS + 1
    assert line.endswith("→ Ergebnis-Felder: result")


def test_an_arguments_description_is_kept_whole_up_to_a_tools_length() -> None:
    # The form of a value (the other names it takes) often comes after the first sentence.
    meaning = "hiking, running, beach or sightseeing (other names work too: Wandern, Joggen, Sehenswürdigkeiten)"
    line = render_tool(spec("spots", {"activity": {"type": "string", "description": meaning}}, "Spots near a point."))
    assert f"activity: {meaning}" in line


def test_catalog_is_sorted_and_labelled_in_the_profiles_language() -> None:
    catalog = render_catalog({"subtract": SUBTRACT, "max_number": MAX_NUMBER}, ENGLISH)
    assert [line.split("(")[0] for line in catalog.splitlines()] == ["- max_number", "- subtract"]
    assert render_catalog({}, ENGLISH) == '(no tools available: answer with "final")'
    assert render_catalog({}, GERMAN) == '(keine Tools verfügbar: antworte mit "final")'


def plan_prompt(**overrides: Any) -> tuple[str, str]:
    options: dict[str, Any] = {
        "persona": "You are a calculator.",
        "specs": {"subtract": SUBTRACT},
        "examples": [Example("What is 5 - 3?", {"steps": [], "final": None})],
        "question": "A shop is open Monday, and 65% of its 200 customers buy. How many buy?",
        "today": None,
        "texts": ENGLISH,
    }
    system, human = build_plan_messages(**(options | overrides))
    assert isinstance(system, SystemMessage) and isinstance(human, HumanMessage)
    return str(system.content), str(human.content)


def test_english_plan_prompt_without_dates() -> None:
    system, human = plan_prompt()
    assert "Rules:" in system and "Tools:\n- subtract(arg_0: number, arg_1: number)" in system
    assert "Examples:\nQuestion: What is 5 - 3?\nPlan: " in system
    assert "YYYY-MM-DD" not in system and "Regeln" not in system
    # No date line at all: "Monday, and 65% of" was resolved to 2065-01-15 and its numbers used (measured).
    assert human == "Question: A shop is open Monday, and 65% of its 200 customers buy. How many buy?"


def test_plan_prompt_with_dates_names_them_in_the_profiles_language() -> None:
    question = "What is the weather in Rome tomorrow?"
    _, german = plan_prompt(question=question, today=TODAY, texts=GERMAN)
    assert german.startswith("Daten in der Frage: „tomorrow“ = 2026-11-23.")
    system, english = plan_prompt(question=question, today=TODAY)
    assert english.startswith('Dates in the question: "tomorrow" = 2026-11-23.')
    assert ENGLISH.dates_rule in system
    assert render_dates("What is 2 + 2?", TODAY, ENGLISH) == "Today is Sunday, 2026-11-22."


def test_system_message_is_stable_for_a_profile_and_tool_set() -> None:
    first, _ = plan_prompt(specs={"subtract": SUBTRACT, "max_number": MAX_NUMBER})
    second, _ = plan_prompt(specs={"max_number": MAX_NUMBER, "subtract": SUBTRACT}, question="Another question?")
    assert first == second  # a prefix cache encodes it once


CALLS = [
    {"id": "a", "tool": "subtract", "status": "ok", "args": {"arg_0": 5, "arg_1": 3}, "result": {"result": 2}},
    {"id": "b", "tool": "divide", "status": "error", "error": "division by zero"},
]


def test_call_log_and_cut_results_in_each_language() -> None:
    assert render_calls(CALLS, ENGLISH).splitlines() == [
        '- a = subtract({"arg_0":5,"arg_1":3}) → {"result":2}',
        "- b = divide: ERROR: division by zero",
    ]
    assert "FEHLER: division by zero" in render_calls(CALLS, GERMAN)
    assert render_result("x" * 5000, ENGLISH).endswith(" …[cut, 5002 characters in all]")
    assert render_result("x" * 5000, GERMAN).endswith(" …[gekürzt, 5002 Zeichen insgesamt]")


def test_answer_prompt_ends_asking_for_the_questions_language() -> None:
    common: dict[str, Any] = {"persona": "Du bist ein Reiseplaner.", "today": TODAY, "calls": CALLS}
    english = build_answer_messages(question="How warm is it?", texts=GERMAN, language="en", **common)[-1].content
    instructions = GERMAN.answer_request(failed_tools=["divide"])
    assert "Fehlgeschlagene Tools (divide) erwähnst du ehrlich" in instructions
    assert str(english).endswith(f"{instructions}\n\nAnswer in English.")
    assert str(english).startswith("Heute ist Sonntag, 2026-11-22.\n\nFrage: How warm is it?")
    german = build_answer_messages(question="Wie warm ist es?", texts=GERMAN, language="de", **common)[-1].content
    assert str(german).endswith("Antworte auf Deutsch.")
    unknown = build_answer_messages(question="Barcelona?", texts=GERMAN, **common)[-1].content
    assert str(unknown).endswith(instructions)


def test_answer_instructions_name_a_source_failed_tools_or_the_result_only_where_there_is_one() -> None:
    """A small model copies what the instructions show: "(notes.txt)" or "Failed tool: add" in an answer that had
    no context and no failure (seen on NESTFUL math, where every such answer was rejected twice)."""

    def instructions(**kwargs: Any) -> str:
        text = str(build_answer_messages(persona="p", question="q", today=None, texts=ENGLISH, **kwargs)[-1].content)
        return text.split("Tool results:", 1)[-1]

    clean = instructions(calls=CALLS[:1])
    assert "sources" not in clean and "failed" not in clean and "(notes.txt)" not in clean and "{source}" not in clean
    failed = instructions(calls=CALLS)
    assert "Mention the failed tools (divide) honestly" in failed and "subtract)" not in failed
    hit = {"source": "Razepato.txt", "text": "Der Razepato lebt im Ebrobecken.", "score": 0.9}
    sourced = instructions(calls=[], hits=[hit])
    assert "the context below; name the context's sources in brackets, e.g. (Razepato.txt). Invent" in sourced
    assert 'for example: "The result is 2."' in instructions(calls=CALLS[:1], result="2")


def test_answer_prompt_of_an_english_profile_without_dates() -> None:
    messages = build_answer_messages(
        persona="You are a calculator.", question="What is 5 - 3?", today=None, calls=CALLS[:1], texts=ENGLISH
    )
    text = str(messages[-1].content)
    assert text.startswith("Question: What is 5 - 3?\n\nTool results:\n- a = subtract(")
    assert "Today" not in text and "2026" not in text

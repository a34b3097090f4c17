"""Which loaded tools a question names that a plan leaves out, and the plan shown with their calls to complete."""

from __future__ import annotations

import json

from planwerk.core.question_fit import (
    MAX_SHOWN_DESCRIPTION,
    arguments_skeleton,
    better_fitting_tool,
    calls_skeleton,
    replaced_skeleton,
    shown_plan,
    unanchored_values,
    unfilled_named_arguments,
    unplanned_named_tools,
)
from planwerk.core.tools import ToolSpec
from planwerk.rag.lexical import analyze


def spec(name: str, description: str = "", **properties: str) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": {k: {"type": v} for k, v in properties.items()},
        "required": list(properties),
    }
    return ToolSpec(name=name, description=description, input_schema=schema)


def by_name(*specs: ToolSpec) -> dict[str, ToolSpec]:
    return {s.name: s for s in specs}


SPECS = by_name(
    spec("math_toolkit_sum_of_multiples", "Find the sum of all multiples.", lower="integer"),
    spec("math_toolkit_product_of_primes", "Find the product of the first n prime numbers.", count="integer"),
    spec("weather_forecast", "The weather forecast for a city.", city="string"),
    spec("stock_forecast", "The forecast of a stock.", company="string"),
)


def test_a_tool_whose_own_name_terms_the_question_has_is_named() -> None:
    question = (
        "Find the sum of the multiples of 3 and 5 up to 1000. Also find the product of the first five prime numbers."
    )
    assert unplanned_named_tools(question, {"math_toolkit_sum_of_multiples"}, SPECS, analyze) == [
        "math_toolkit_product_of_primes"
    ]
    # Terms the planned tool's name has ("math", "toolkit") do not count: "sum" and "multiples" alone name nothing else.
    assert (
        unplanned_named_tools(
            "The sum of the multiples of 3 up to 100.", {"math_toolkit_sum_of_multiples"}, SPECS, analyze
        )
        == []
    )


def test_one_shared_term_or_an_empty_plan_names_nothing() -> None:
    # "forecast" is shared with the planned tool's name, "stock" alone is one term: no request for a second tool.
    assert unplanned_named_tools("The stock forecast for Paris.", {"weather_forecast"}, SPECS, analyze) == []
    assert unplanned_named_tools("The product of the first five primes.", set(), SPECS, analyze) == []


def test_the_plan_is_shown_with_the_named_calls_added_to_its_first_step() -> None:
    plan = {
        "steps": [
            {
                "description": "",
                "tools": [{"id": "s", "name": "math_toolkit_sum_of_multiples", "arguments": {"lower": 1}}],
            }
        ],
        "final": None,
    }
    text = calls_skeleton(plan, [SPECS["math_toolkit_product_of_primes"]], "<{type} from the question>")
    assert '"arguments": {"count": <integer from the question>}' in text
    filled = json.loads(text.replace("<integer from the question>", "5"))
    assert [c["name"] for c in filled["steps"][0]["tools"]] == [
        "math_toolkit_sum_of_multiples",
        "math_toolkit_product_of_primes",
    ]


def test_optional_arguments_the_question_names_are_found_per_call_and_shown_as_slots() -> None:
    movies = ToolSpec(
        name="find_movies",
        description="Find movies.",
        input_schema={"type": "object", "properties": {"directed_by": {"type": "string"}, "genre": {"type": "string"}}},
    )
    specs = {"find_movies": movies}
    plan = {
        "steps": [{"description": "", "tools": [{"id": "m", "name": "find_movies", "arguments": {}}]}],
        "final": None,
    }
    question = "Find a film directed by Quentin Tarantino."
    assert unfilled_named_arguments(plan, question, specs, analyze) == {"m": ["directed_by"]}
    # Given already, named by the question only in part ("genre" is not there), or a tool that changes something.
    given = {"steps": [{"tools": [{"id": "m", "name": "find_movies", "arguments": {"directed_by": "Q. T."}}]}]}
    assert unfilled_named_arguments(given, question, specs, analyze) == {}
    assert unfilled_named_arguments(plan, question, specs, analyze, fixed={"find_movies"}) == {}
    text = arguments_skeleton(plan, {"m": ["directed_by"]}, specs, "<{type} from the question>")
    assert '"arguments": {"directed_by": <string from the question>}' in text


def test_a_tool_sharing_clearly_more_words_with_the_question_than_the_plans_one_tool_is_found() -> None:
    growth = spec("calculate_yoy_growth_rate", "Calculate the year over year growth rate of a company's revenue.")
    roa = spec("calculate_roa", "Calculate the return on assets from net income and total assets.")
    roe = spec("calculate_roe", "Calculate the return on equity.")
    specs = {s.name: s for s in (growth, roa, roe)}
    question = "What is the year over year growth rate for company Tech Inc with revenues of $1M and $1.2M?"
    assert better_fitting_tool(question, {"calculate_roa"}, specs, analyze) == "calculate_yoy_growth_rate"
    # The best one planned, two tools planned, or a lead of one term: nothing to ask.
    assert better_fitting_tool(question, {"calculate_yoy_growth_rate"}, specs, analyze) is None
    assert better_fitting_tool(question, {"calculate_roa", "calculate_roe"}, specs, analyze) is None
    assert better_fitting_tool("The return on assets and growth of X.", {"calculate_roa"}, specs, analyze) is None
    plan = {"steps": [{"description": "", "tools": [{"id": "r", "name": "calculate_roa", "arguments": {}}]}]}
    text = replaced_skeleton(plan, "calculate_roa", growth, "<{type}>")
    assert '"name": "calculate_yoy_growth_rate", "arguments": {}' in text and "calculate_roa" not in text


CONTACTS = by_name(
    spec("contact", "Retrieve the contact details of a person named Adriel.", person_name="string"),
    spec("view_profile", "Display the profile of a service provider by its id.", professional_id="integer"),
    spec("get_current_time", "Get the current time in a given timezone.", timezone="string"),
)


def test_a_plan_anchored_in_nothing_the_question_says_gives_its_values() -> None:
    # A function-calling benchmark's irrelevance entries (0.5B model): a name from the tool's description, an id of 1.
    calls = [("contact", {"person_name": "Adriel"})]
    assert unanchored_values("berapa satu tambah satu", [], calls, CONTACTS, analyze) == ['"Adriel"']
    found = unanchored_values(
        "Help work in place of Opera", [], [("view_profile", {"professional_id": 1})], CONTACTS, analyze
    )
    assert found == ["1"]


def test_a_plan_with_a_value_or_a_tool_word_from_the_question_or_the_conversation_is_anchored() -> None:
    profile = [("view_profile", {"professional_id": 7})]
    assert unanchored_values("Show provider 7", [], profile, CONTACTS, analyze) == []  # the number
    assert unanchored_values("And the next one?", ["Show me provider 7"], profile, CONTACTS, analyze) == []
    contact = [("contact", {"person_name": "Adriel"})]
    assert unanchored_values("How do I reach Adriel?", [], contact, CONTACTS, analyze) == []  # the value
    assert unanchored_values("His contact details, please.", [], contact, CONTACTS, analyze) == []  # a tool word
    # No literal value: nothing to judge; a reference is no literal.
    assert unanchored_values("berapa satu tambah satu", [], [("contact", {})], CONTACTS, analyze) == []
    assert unanchored_values("Opera, please?", [], [("view_profile", {"professional_id": 1})], CONTACTS, analyze) == []
    by_ref = [("contact", {"person_name": {"$ref": "user.answer"}})]
    assert unanchored_values("berapa satu tambah satu", [], by_ref, CONTACTS, analyze) == []


def test_a_question_in_another_language_than_the_tools_is_not_judged_by_word_overlap() -> None:
    time = [("get_current_time", {"timezone": "Asia/Tokyo"})]
    assert unanchored_values("Wie spät ist es jetzt in Tokio?", [], time, CONTACTS, analyze) == []
    assert unanchored_values("Where is the opera house of Paris?", [], time, CONTACTS, analyze) == ['"Asia/Tokyo"']
    # Numbers are written the same in every language: a German request for a poem planned as a calculation.
    adding = [("view_profile", {"professional_id": 10})]
    assert unanchored_values("Schreib mir ein Gedicht über Katzen.", [], adding, CONTACTS, analyze) == ["10"]
    assert unanchored_values("Zeig mir das Profil von Anbieter 10.", [], adding, CONTACTS, analyze) == []


def test_a_plan_shown_back_keeps_its_calls_and_a_short_description() -> None:
    """Measured on the BFCL tune split (0.5B model): with a description that copied the whole question shown back
    whole in the repair request, the three-call rewrite was cut off at the reply's token limit."""
    question = "Could you help me with a few things? " * 20
    call = {"id": "b", "name": "flight_book", "arguments": {"date": "2022-12-25"}}
    plan = {"steps": [{"description": question, "tools": [call]}, {"description": "short", "tools": []}]}
    shown = json.loads(arguments_skeleton(plan, {"b": ["direct_flight"]}, {"flight_book": spec("flight_book")}, "0"))
    first, second = shown["steps"]
    assert len(first["description"]) <= MAX_SHOWN_DESCRIPTION and first["description"].endswith("…")
    assert first["description"].startswith("Could you help me with a few things?")
    assert second["description"] == "short"
    assert first["tools"][0]["arguments"] == {"date": "2022-12-25", "direct_flight": 0}
    assert json.loads(shown_plan(plan))["steps"][0]["tools"] == [call]

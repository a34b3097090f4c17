"""Examples built from the loaded tools: for tool sets no library example covers, checked like any plan."""

from __future__ import annotations

from typing import Any

from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.core.tools import ToolSpec
from planwerk.prompts.examples import library
from planwerk.prompts.texts import ENGLISH, GERMAN
from planwerk.prompts.zero_shot import examples_for_question, tool_examples


def tool(name: str, description: str, properties: dict[str, Any], required: list[str], **extra: Any) -> ToolSpec:
    return ToolSpec(
        name, description, input_schema={"type": "object", "properties": properties, "required": required}, **extra
    )


ITEMS_OUTPUT = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"$ref": "#/$defs/Item"},
        }
    },
    "$defs": {"Item": {"type": "object", "properties": {"item_id": {"type": "integer"}, "label": {"type": "string"}}}},
}
SPECS = {
    "list_items": tool(
        "list_items",
        "Lists the stored items. Paged.",
        {"kind": {"type": "string", "enum": ["open", "closed"]}, "limit": {"type": "integer", "default": 10}},
        ["kind"],
        output_schema=ITEMS_OUTPUT,
    ),
    "close_item": tool(
        "close_item",
        "Closes one item.",
        {"itemId": {"type": "integer"}, "note": {"type": "string", "description": "Why, e.g. 'done'"}},
        ["itemId", "note"],
        destructive=True,
    ),
    "rename": tool(
        "rename",
        "Renames the store.",
        {"title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        [],
    ),
    "configure": tool("configure", "Sets options.", {"options": {"type": "object"}}, ["options"]),
}


def by_tools(examples: tuple[Any, ...]) -> dict[tuple[str, ...], Any]:
    return {tuple(c["name"] for s in e.plan["steps"] for c in s["tools"]): e for e in examples}


def test_one_call_per_tool_with_values_the_question_states() -> None:
    examples = by_tools(tool_examples(SPECS, ENGLISH))
    listing = examples[("list_items",)]
    # A required enum takes its first value; an optional argument with a default is left to it.
    assert listing.plan["steps"][0]["tools"][0]["arguments"] == {"kind": "open"}
    assert listing.question == 'Lists the stored items, with kind "open".'
    closing = examples[("close_item",)].plan["steps"][0]["tools"][0]["arguments"]
    # A number, and the "e.g." value of the argument's description; the question states both.
    assert closing == {"itemId": 12, "note": "done"}
    assert "12" in examples[("close_item",)].question and '"done"' in examples[("close_item",)].question
    # A tool whose arguments are all optional is shown with the ones that have no default of their own.
    assert examples[("rename",)].plan["steps"][0]["tools"][0]["arguments"] == {"title": "title A"}
    # An object without properties has no value to write: no example rather than a wrong one.
    assert ("configure",) not in examples


def test_a_chain_passes_a_field_of_the_first_result_to_the_argument_named_like_it() -> None:
    chain = by_tools(tool_examples(SPECS, ENGLISH))[("list_items", "close_item")]
    first, second = (step["tools"][0] for step in chain.plan["steps"])
    assert first["arguments"] == {"kind": "open"}
    assert second["arguments"] == {"itemId": {"$ref": "list_items.items.0.item_id"}, "note": "done"}
    assert chain.question == 'Lists the stored items, then closes one item, with kind "open", note "done".'
    # An acting tool does not start a chain.
    built = by_tools(tool_examples(SPECS, ENGLISH))
    chains = [names for names, example in built.items() if len(example.plan["steps"]) > 1]
    assert chains and not any(names[0] == "close_item" for names in chains)


def test_every_built_example_passes_the_plan_check_and_the_frame_is_the_profiles_language() -> None:
    for texts in (ENGLISH, GERMAN):
        examples = tool_examples(SPECS, texts)
        assert len(examples) == 9  # 3 single calls, 1 chain, 2 tools called twice, 3 pairs side by side
        for example in examples:
            assert check_plan(Plan.model_validate(example.plan), SPECS) == []
    german = by_tools(tool_examples(SPECS, GERMAN))[("list_items", "close_item")]
    assert german.question.startswith("Lists the stored items, dann closes one item, mit ")
    # A schema whose sample fails its own constraints is left out, not shown.
    strict = {"code": tool("code", "Looks a code up.", {"c": {"type": "string", "pattern": "^[0-9]+$"}}, ["c"])}
    assert tool_examples(strict, ENGLISH) == ()


def test_one_tool_twice_in_one_step_with_two_sets_of_values_the_question_states() -> None:
    built = by_tools(tool_examples(SPECS, ENGLISH))
    twice = built[("close_item", "close_item")]
    assert len(twice.plan["steps"]) == 1  # one step: the calls run side by side
    first, second = twice.plan["steps"][0]["tools"]
    assert (first["id"], second["id"]) == ("close_item_1", "close_item_2")
    assert first["arguments"] == {"itemId": 12, "note": "done"} and second["arguments"] == {"itemId": 7, "note": "done"}
    assert twice.question == 'Closes one item, once with itemId 12, note "done" and once with itemId 7, note "done".'
    # An enum's first value is the only sample: the same call twice teaches nothing, so there is none.
    assert ("list_items", "list_items") not in built
    german = by_tools(tool_examples(SPECS, GERMAN))[("rename", "rename")]
    assert german.question == 'Renames the store, einmal mit title "title A" und einmal mit title "title B".'


def test_two_different_tools_side_by_side_in_one_step_each_with_its_part_of_the_question() -> None:
    built = by_tools(tool_examples(SPECS, ENGLISH))
    both = built[("close_item", "list_items")]
    assert len(both.plan["steps"]) == 1
    close, listing = both.plan["steps"][0]["tools"]
    assert close["arguments"] == {"itemId": 12, "note": "done"} and listing["arguments"] == {"kind": "open"}
    said = 'Closes one item, with itemId 12, note "done"; and lists the stored items, with kind "open".'
    assert both.question == said
    assert by_tools(tool_examples(SPECS, GERMAN))[("close_item", "list_items")].question.count("; und ") == 1
    # Pairs follow the tools' name order, once each ("list_items" before "close_item" is the two-step chain).
    assert len(built[("list_items", "close_item")].plan["steps"]) == 2


def test_the_library_wins_when_it_fits_the_tools_else_the_tools_examples() -> None:
    generic = library("generic")
    time_tool = {"get_current_time": tool("get_current_time", "Current time.", {"timezone": {"type": "string"}}, [])}
    chosen = examples_for_question("What time is it in Oslo?", time_tool, ENGLISH, generic, k=2, ranking="words")
    assert chosen and all(e in generic for e in chosen)
    built = examples_for_question("Close item 4, it is done.", SPECS, ENGLISH, generic, k=2, ranking="words")
    assert len(built) == 2 and all(e not in generic for e in built)
    assert ("close_item",) in by_tools(tuple(built))


def test_with_the_extract_step_a_text_read_feeds_a_tool_that_acts_through_extracted_values() -> None:
    from planwerk.core.extract import extract_spec

    specs = {
        "fetch_note": tool(
            "fetch_note", "Returns a note's text.", {"key": {"type": "string"}}, ["key"], read_only=True
        ),
        "close_item": SPECS["close_item"],
        "extract": extract_spec("Pulls typed values out of a text, e.g. a note."),
    }
    examples = by_tools(tool_examples(specs, ENGLISH))
    chain = next(e for names, e in examples.items() if names == ("fetch_note", "extract", "close_item"))
    _read, extract, act = (step["tools"][0] for step in chain.plan["steps"])
    assert extract["arguments"] == {"text": {"$ref": "fetch_note"}, "schema": {"itemId": "integer", "note": "string"}}
    assert act["arguments"] == {"itemId": {"$ref": "values.itemId"}, "note": {"$ref": "values.note"}}
    assert check_plan(Plan.model_validate(chain.plan), specs) == []
    # Without the step offered, no such chain.
    del specs["extract"]
    assert not any("extract" in names for names in by_tools(tool_examples(specs, ENGLISH)))


def test_a_sample_value_the_question_does_not_state_is_found_in_a_plan() -> None:
    from planwerk.prompts.zero_shot import copied_placeholders

    calls = [
        {"id": "a", "name": "classify", "arguments": {"cell_shape": "cell shape A", "size": "large"}},
        {"id": "b", "name": "tag", "arguments": {"labels": ["labels C", "red"], "note": "cell shape A"}},
    ]
    plan = Plan.model_validate({"steps": [{"description": "", "tools": calls}], "final": None})
    assert copied_placeholders(plan, "Classify a round cell.") == [
        ("a", "cell_shape", "cell shape A"),
        ("b", "labels", "labels C"),
    ]
    # A value the question states is the user's, whatever it looks like.
    assert copied_placeholders(plan, "Classify cell shape A with labels C.") == []


def test_a_sample_number_the_question_does_not_state_is_found_in_a_plan() -> None:
    from planwerk.prompts.zero_shot import copied_sample_numbers

    call = {"id": "a", "name": "bmi", "arguments": {"weight": 12, "height": 3.0, "age": 41, "flag": True}}
    plan = Plan.model_validate({"steps": [{"description": "", "tools": [call]}], "final": None})
    # The built examples' sample numbers (12, 3) copied for a question about other numbers; 41 is nobody's sample.
    assert copied_sample_numbers(plan, "A triangle's base is 10 m and its height 5 m.") == [
        ("a", "weight", 12),
        ("a", "height", 3.0),
    ]
    assert copied_sample_numbers(plan, "I weigh 12 stone and am 3 feet tall.") == []


def test_each_tool_that_acts_is_chained_after_each_reader_so_the_question_can_pick_the_pair() -> None:
    """With two readers and two tools that act, all four read-extract-act chains are built (a bank's file reader
    was never built beside the tool that pays, so "pay the bill in the file" was shown another pair)."""
    from planwerk.core.extract import extract_spec

    specs = {
        "fetch_note": tool(
            "fetch_note", "Returns a note's text.", {"key": {"type": "string"}}, ["key"], read_only=True
        ),
        "fetch_page": tool(
            "fetch_page", "Returns a page's text.", {"url": {"type": "string"}}, ["url"], read_only=True
        ),
        "close_item": SPECS["close_item"],
        "tag_item": tool(
            "tag_item", "Tags one item.", {"itemId": {"type": "integer"}, "tag": {"type": "string"}}, ["itemId", "tag"]
        ),
        "extract": extract_spec("Pulls typed values out of a text, e.g. a note."),
    }
    chains = {names for names in by_tools(tool_examples(specs, ENGLISH)) if "extract" in names}
    assert chains == {
        (reader, "extract", actor) for reader in ("fetch_note", "fetch_page") for actor in ("close_item", "tag_item")
    }


def test_an_examples_calls_copied_whole_beside_the_plans_own_are_found() -> None:
    from planwerk.prompts.zero_shot import copied_example_calls

    primes = tool("primes", "Multiplies the first primes.", {"count": {"type": "integer"}}, ["count"])
    examples = tool_examples({"primes": primes}, ENGLISH)
    twice = [e for e in examples if len(e.plan["steps"][0]["tools"]) == 2]
    assert [[c["arguments"] for c in e.plan["steps"][0]["tools"]] for e in twice] == [[{"count": 12}, {"count": 3}]]
    calls = [
        {"id": "own", "name": "primes", "arguments": {"count": 5}},
        {"id": "x", "name": "primes", "arguments": {"count": 12}},
        {"id": "y", "name": "primes", "arguments": {"count": 3}},
    ]
    plan = Plan.model_validate({"steps": [{"description": "", "tools": calls}], "final": None})
    # 3 is in the question, 12 is not: the example's pair is a copy, the plan's own call stays.
    assert copied_example_calls(plan, "Multiples of 3; the product of the first 5 primes.", examples) == ("x", "y")
    # Every value stated: the person asked for them.
    assert copied_example_calls(plan, "The product of the first 5, 12 and 3 primes.", examples) == ()
    # Only one call of the pair, or nothing but the pair: not judged here.
    one = Plan.model_validate({"steps": [{"description": "", "tools": calls[:2]}], "final": None})
    assert copied_example_calls(one, "5 primes", examples) == ()
    alone = Plan.model_validate({"steps": [{"description": "", "tools": calls[1:]}], "final": None})
    assert copied_example_calls(alone, "primes", examples) == ()

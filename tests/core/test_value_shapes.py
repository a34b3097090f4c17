"""The form a tool's schema shows for its values (examples, format hints), and plan values not in it."""

from __future__ import annotations

from planwerk.core.tools import ToolSpec
from planwerk.core.value_shapes import ValueForm, as_shown_values, misshapen_values, value_form
from planwerk.text.gazetteer import default_gazetteer

# mcp-server-time's own descriptions (2026.10 release)
ZONE = {
    "type": "string",
    "description": "Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Europe/Berlin' as "
    "local timezone if no source timezone provided by the user.",
}
TIME = {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"}
CONVERT = ToolSpec(
    name="convert_time",
    description="Convert time between timezones",
    input_schema={"type": "object", "properties": {"source_timezone": ZONE, "time": TIME, "target_timezone": ZONE}},
)


def test_examples_and_format_hints_give_a_form() -> None:
    zone = value_form(ZONE)
    assert zone == ValueForm(("America/New_York", "Europe/London", "Europe/Berlin"))
    assert zone.marks == {"/"} and zone.shown() == "'America/New_York', 'Europe/London', 'Europe/Berlin'"
    assert value_form(TIME) == ValueForm((), "HH:MM")
    assert value_form({"type": "string", "examples": ["ada@example.com"]}) == ValueForm(("ada@example.com",))


def test_a_value_fits_by_its_marks_and_its_hint_never_by_a_vocabulary() -> None:
    zone, clock = value_form(ZONE), value_form(TIME)
    assert zone is not None and clock is not None
    assert zone.fits("Europe/Berlin") and zone.fits("Asia/Tokio")  # whether it exists is the tool's to say
    assert not zone.fits("Berlin") and not zone.fits("Los Angeles")
    assert clock.fits("15:00") and clock.fits("9:30")
    assert not clock.fits("15:00 Uhr") and not clock.fits("3 PM") and not clock.fits("2026-11-26")
    day = value_form({"type": "string", "description": "The date, formatted as 'MM/DD/YYYY'.", "default": "dontcare"})
    assert day is not None and day.fits("04/15/2023") and day.fits("dontcare") and not day.fits("2023-04-15")


def test_no_form_where_the_schema_shows_none_that_would_tell() -> None:
    assert value_form({"type": "string", "description": "A file path."}) is None
    assert value_form({"type": "string", "description": "Chain commands with '&&'."}) is None  # an operator
    assert value_form({"type": "string", "description": "Use 'auto' or 'manual'."}) is None  # no mark to hold
    assert value_form({"type": "string", "enum": ["a/b", "c/d"]}) is None  # the schema check's
    assert value_form({"type": "integer", "description": "e.g. '10/20'"}) is None


def test_the_plans_text_values_out_of_form_are_found_in_plan_order() -> None:
    arguments = {"source_timezone": "Berlin", "time": "16:00", "target_timezone": {"$ref": "user.zone"}}
    plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": arguments}]}]}
    [found] = misshapen_values(plan, {"convert_time": CONVERT})
    assert (found.call_id, found.tool, found.argument, found.value) == (
        "c",
        "convert_time",
        "source_timezone",
        "Berlin",
    )
    fitting = {**arguments, "source_timezone": "Europe/Berlin"}
    assert (
        misshapen_values(
            {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": fitting}]}]},
            {"convert_time": CONVERT},
        )
        == []
    )


TARGET = {**ZONE, "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco')."}


def test_a_value_an_example_holds_whole_is_written_as_that_example() -> None:
    # The 0.5B model wrote "Tokyo" again after it was shown the form; the description itself spells it out.
    spec = ToolSpec(
        name="convert_time",
        input_schema={
            "type": "object",
            "properties": {"source_timezone": ZONE, "time": TIME, "target_timezone": TARGET},
        },
    )
    arguments = {"source_timezone": "Tokyo", "time": "16:00", "target_timezone": "new york"}
    plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": arguments}]}]}
    shown = as_shown_values(plan, {"convert_time": spec})
    assert shown is not None
    # Tokyo from the tool's other argument of the same form; "new york" as 'America/New_York'.
    assert shown["steps"][0]["tools"][0]["arguments"] == {
        "source_timezone": "Asia/Tokyo",
        "time": "16:00",
        "target_timezone": "America/New_York",
    }
    assert as_shown_values(plan, {"convert_time": spec}, fixed=frozenset({"convert_time"})) is None
    unknown = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"source_timezone": "Kolkata"}}]}]}
    assert as_shown_values(unknown, {"convert_time": spec}) is None  # no example holds it: asked, not guessed


def test_a_value_that_holds_its_format_once_among_words_is_written_as_that_stretch() -> None:
    # The 0.5B model on the domain answers set: "15:00 Uhr" for a time described as (HH:MM).
    def shown(value: str) -> object:
        plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"time": value}}]}]}
        found = as_shown_values(plan, {"convert_time": CONVERT})
        return found["steps"][0]["tools"][0]["arguments"]["time"] if found else None

    assert shown("15:00 Uhr") == "15:00" and shown("um 9:30 Uhr") == "9:30"
    assert shown("3 PM") is None and shown("15:00 or 16:00") is None and shown("115:000") is None


def test_a_value_naming_the_same_place_as_one_examples_part_is_written_as_that_example() -> None:
    # The 0.5B model on the domain answers set wrote the German question's "Tokio" for a zone, three times.
    gazetteer = default_gazetteer()

    def place_ids(text: str) -> frozenset[int]:
        return gazetteer.lookup(text.split())

    spec = ToolSpec(
        name="convert_time",
        input_schema={"type": "object", "properties": {"source_timezone": ZONE, "target_timezone": TARGET}},
    )

    def shown(value: str) -> object:
        plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"source_timezone": value}}]}]}
        found = as_shown_values(plan, {"convert_time": spec}, place_ids=place_ids)
        return found["steps"][0]["tools"][0]["arguments"]["source_timezone"] if found else None

    assert shown("Tokio") == "Asia/Tokyo"
    assert shown("Kolkata") is None and shown("Indien") is None  # no example names it: asked, not guessed
    plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"source_timezone": "Tokio"}}]}]}
    assert as_shown_values(plan, {"convert_time": spec}) is None  # without a gazetteer: names only as written


def test_a_value_a_call_failed_with_is_written_as_the_one_example_naming_its_place() -> None:
    # The 0.5B model on the domain answers set: 'America/Berlin' (the first example's form, the asked city) failed,
    # and the corrected plan wrote it again. It fits the form, so only the tool's failure says it is no zone.
    def place_ids(text: str) -> frozenset[int]:
        return default_gazetteer().lookup(text.split())

    spec = ToolSpec(name="convert_time", input_schema={"type": "object", "properties": {"source_timezone": ZONE}})

    def shown(value: str, failed: set[tuple[str, str, str]]) -> object:
        plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"source_timezone": value}}]}]}
        found = as_shown_values(plan, {"convert_time": spec}, place_ids=place_ids, failed=failed)
        return found["steps"][0]["tools"][0]["arguments"]["source_timezone"] if found else None

    failed = {("convert_time", "source_timezone", "America/Berlin")}
    assert shown("America/Berlin", failed) == "Europe/Berlin"
    assert shown("America/Berlin", set()) is None  # in its form and not failed: the tool's to judge
    assert shown("Europe/Berlin", {("convert_time", "source_timezone", "Europe/Berlin")}) is None  # nothing else
    assert shown("America/Kolkata", {("convert_time", "source_timezone", "America/Kolkata")}) is None


def test_a_value_out_of_its_hinted_form_takes_the_questions_one_stretch_in_that_form() -> None:
    # The 0.5B model on the domain answers set: a corrected plan wrote the prompt's date as the time (HH:MM).
    def shown(value: str, question: str) -> object:
        plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"time": value}}]}]}
        found = as_shown_values(plan, {"convert_time": CONVERT}, question=question)
        return found["steps"][0]["tools"][0]["arguments"]["time"] if found else None

    assert shown("2026-11-26", "When it is 16:00 in Berlin, what time is it in Tokyo?") == "16:00"
    assert shown("2026-11-26", "Is 9:00 or 17:00 later in Tokyo than in Berlin?") is None  # two: asked
    assert shown("2026-11-26", "What time is it in Tokyo?") is None
    assert shown("16:00", "At 9:00?") is None  # in its form: left as planned


def test_a_value_no_example_holds_is_written_as_the_one_value_of_the_examples_vocabulary_that_does() -> None:
    # The 0.5B model on the domain answers set: "Los Angeles" and "Kolkata" for zones no example names.
    def place_ids(text: str) -> frozenset[int]:
        return default_gazetteer().lookup(text.split())

    spec = ToolSpec(
        name="convert_time",
        input_schema={"type": "object", "properties": {"source_timezone": ZONE, "target_timezone": TARGET}},
    )
    zones = frozenset({"America/New_York", "Europe/London", "America/Los_Angeles", "Asia/Kolkata", "Asia/Tokyo"})

    def shown(value: str, vocabularies: tuple[frozenset[str], ...] = (zones,)) -> object:
        plan = {"steps": [{"tools": [{"id": "c", "name": "convert_time", "arguments": {"source_timezone": value}}]}]}
        found = as_shown_values(plan, {"convert_time": spec}, place_ids=place_ids, vocabularies=vocabularies)
        return found["steps"][0]["tools"][0]["arguments"]["source_timezone"] if found else None

    assert shown("Los Angeles") == "America/Los_Angeles" and shown("kolkata") == "Asia/Kolkata"
    assert shown("Los Angeles", ()) is None  # without the vocabulary: asked, not guessed
    assert shown("India") is None  # no value of the vocabulary holds it
    assert shown("Los Angeles", (frozenset({"America/Los_Angeles"}),)) is None  # no example is of that vocabulary


def test_the_known_vocabularies_hold_the_iana_zones() -> None:
    from planwerk.text.vocabularies import known_vocabularies

    assert any(
        {"America/Los_Angeles", "Asia/Kolkata", "Europe/Berlin"} <= vocabulary for vocabulary in known_vocabularies()
    )

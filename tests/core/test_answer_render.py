"""Placeholders are written out: numbers as the result holds them with their unit, dates and times in words."""

from __future__ import annotations

from planwerk.core.answers.render import render_answer, render_value, settled_text
from planwerk.core.answers.slots import Slot
from planwerk.prompts.answer_refs import ENGLISH, GERMAN

SLOTS = {
    "wx.temp_max_c": Slot("wx.temp_max_c", 18.5, "number", "°C"),
    "wx.days": Slot("wx.days", 3, "number"),
    "wx.total": Slot("wx.total", 12.0, "number", "mm"),
    "wx.date": Slot("wx.date", "2026-01-20", "date"),
    "conv.target.datetime": Slot("conv.target.datetime", "2026-11-27T00:00:00+09:00", "datetime"),
    "geo.name": Slot("geo.name", "Barcelona", "text"),
    "wx.estimate": Slot("wx.estimate", True, "flag"),
}


def test_numbers_with_units_in_each_language() -> None:
    assert render_value(SLOTS["wx.temp_max_c"], None, GERMAN.style) == "18,5 °C"
    assert render_value(SLOTS["wx.temp_max_c"], None, ENGLISH.style) == "18.5 °C"
    assert render_value(SLOTS["wx.total"], None, GERMAN.style) == "12 mm"
    assert render_value(SLOTS["wx.days"], None, GERMAN.style) == "3"
    assert render_value(SLOTS["wx.temp_max_c"], "raw", GERMAN.style) == "18.5"
    assert render_value(Slot("x", 1e-7, "number"), None, ENGLISH.style) == "0.0000001"


def test_dates_and_times_in_each_language() -> None:
    moment = SLOTS["conv.target.datetime"]
    assert render_value(moment, "time", GERMAN.style) == "00:00"
    assert render_value(moment, "date", GERMAN.style) == "27. November 2026"
    assert render_value(moment, "date", ENGLISH.style) == "27 November 2026"
    assert render_value(moment, "weekday", ENGLISH.style) == "Friday, 27 November 2026"
    assert render_value(moment, None, GERMAN.style) == "27. November 2026, 00:00 Uhr"
    assert render_value(SLOTS["wx.date"], None, GERMAN.style) == "20. Januar 2026"
    # A date has no time: the formatter is ignored.
    assert render_value(SLOTS["wx.date"], "time", GERMAN.style) == "20. Januar 2026"


def test_an_answer_is_rendered_and_unknown_placeholders_stay() -> None:
    text = "In {geo.name} am {wx.date|weekday} bis {wx.temp_max_c}; {nope.x} {wx.estimate} {json}"
    rendered = render_answer(text, SLOTS, GERMAN.style)
    assert rendered.text == "In Barcelona am Dienstag, 20. Januar 2026 bis 18,5 °C; {nope.x} ja {json}"
    assert rendered.used == ("geo.name", "wx.date", "wx.temp_max_c", "wx.estimate")
    assert rendered.unknown == ("{nope.x}", "{json}")
    assert render_answer('{"a": 1}', SLOTS, GERMAN.style).text == '{"a": 1}'  # JSON is no placeholder


def test_a_unit_written_after_a_placeholder_is_not_doubled() -> None:
    slots = {"r.distance_km": Slot("r.distance_km", 41.7, "number", "km"), "r.n": Slot("r.n", 3, "number")}
    assert render_answer("{r.distance_km} km weit", slots, GERMAN.style).text == "41,7 km weit"
    assert render_answer("{r.distance_km}km, {r.distance_km} kmh", slots, GERMAN.style).text == "41,7 km, 41,7 km kmh"
    assert render_answer("{r.n} km", slots, GERMAN.style).text == "3 km"  # no unit of its own: the model's stays


STREAMED = (
    "In {geo.name} bis zu {wx.temp_max_c} °C, am {wx.date|weekday} {wx.total}mm; roh {wx.temp_max_c|raw} °C {",
    "{wx.temp_max_c} {wx.total} ",
    "Es gibt {unbekannt} und {wx.days}",
)


def test_while_an_answer_is_decoded_its_settled_part_renders_as_a_prefix_of_the_final_rendering() -> None:
    """Rendered after every character, the answer grows: never a half-written placeholder, never a unit that a
    later character drops again."""
    for answer in STREAMED:
        final = render_answer(answer, SLOTS, GERMAN.style).text
        shown = ""
        for end in range(len(answer) + 1):
            rendered = render_answer(settled_text(answer[:end], SLOTS), SLOTS, GERMAN.style).text
            assert final.startswith(rendered), (answer[:end], rendered)
            assert rendered.startswith(shown), (answer[:end], rendered, shown)
            assert "{wx" not in rendered
            shown = rendered


def test_the_settled_part_holds_back_only_what_may_still_change() -> None:
    assert settled_text("bis zu {wx.temp", SLOTS) == "bis zu "
    assert settled_text("bis zu {wx.temp_max_c} °", SLOTS) == "bis zu {wx.temp_max_c}"  # maybe its unit again
    assert settled_text("bis zu {wx.temp_max_c} °C.", SLOTS) == "bis zu {wx.temp_max_c} °C."
    assert settled_text("{wx.temp_max_c|raw} °", SLOTS) == "{wx.temp_max_c|raw} °"  # raw: no unit written
    assert settled_text("{wx.days} T", SLOTS) == "{wx.days} T"  # no unit
    assert settled_text("{a} und {b", SLOTS) == "{a} und "

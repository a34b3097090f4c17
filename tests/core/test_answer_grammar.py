"""The answer grammar compiles with xgrammar and admits only this run's placeholders and known numbers."""

from __future__ import annotations

import xgrammar as xgr

from planwerk.core.answers.grammar import answer_grammar, known_numbers, prose_grammar
from planwerk.core.answers.slots import collect_slots

CALLS = [
    {
        "id": "wx",
        "tool": "get_weather",
        "status": "ok",
        "result": {"date": "2026-01-20", "temp_max_c": 18.5, "days": [{"code": 3}]},
    },
    {"id": "conv", "tool": "convert", "status": "ok", "result": {"target": {"datetime": "2026-11-27T00:00:00+09:00"}}},
]
GRAMMAR = answer_grammar(collect_slots(CALLS), known_numbers(["Wie warm wird es vom 10. bis 14. Juni 2026?"]))


def accepts(text: str, grammar: str = GRAMMAR) -> bool:
    return bool(xgr.testing._is_grammar_accept_string(xgr.Grammar.from_ebnf(grammar), text))


def test_the_grammar_compiles_for_a_tokenizer() -> None:
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo(["a", "{", "}", "1", "wx"]), cache_enabled=False)
    assert compiler.compile_grammar(GRAMMAR) is not None


def test_text_and_existing_placeholders_are_admitted() -> None:
    assert accepts("Am {wx.date} werden es bis zu {wx.temp_max_c}.")
    assert accepts("In Tokio ist es dann {conv.target.datetime|time} Uhr ({conv.target.datetime|date}).")
    assert accepts("Vom 10. bis 14. Juni 2026 ist nichts bekannt.")  # the question's own numbers
    result = answer_grammar(collect_slots(CALLS), result_alone=True)
    assert accepts("{wx.temp_max_c}", result) and accepts("{wx.temp_max_c}.", result)  # the answer is the result


def test_a_value_alone_is_no_answer() -> None:
    """A number the question holds alone says nothing (the 0.5B model's regenerated demo answer was a bare "10"),
    nor does a result's value where the answer is not the last result (travel: "{wx.rainy_days}", rendered "3")."""
    assert not accepts("2026") and not accepts("2026.") and not accepts(" 2026, 10.") and not accepts("{wx.date}")
    assert not accepts("{wx.temp_max_c}") and not accepts("{wx.temp_max_c}.")
    assert accepts("Im Jahr 2026.") and accepts("2026: ja") and accepts("{wx.date}: sonnig.")
    assert accepts("Ja, {wx.temp_max_c}.")


def test_a_placeholder_to_a_missing_slot_is_refused() -> None:
    assert not accepts("Es werden {wx.temp_min_c}.")
    assert not accepts("Es werden {wx.days.1.code}.")


def test_a_formatter_the_kind_does_not_take_is_refused() -> None:
    assert not accepts("{wx.temp_max_c|time}")
    assert not accepts("{wx.date|time}")


def test_stray_digits_are_refused() -> None:
    assert not accepts("Es werden 18 °C.")  # a result's number copied by hand
    assert not accepts("Es werden 18,5 °C.")
    assert not accepts("Am 12. Juni.")  # not in the question
    assert not accepts("Im Jahr 52026.")  # two known numbers glued into a new one
    assert not accepts("{wx.temp_max_c}1")
    assert not accepts("Es werden 10,14 °C.")  # two known numbers glued through a separator
    assert not accepts("Es werden {wx.temp_max_c},{wx.temp_max_c}.")
    assert accepts("Vom 10., 14. und {wx.temp_max_c}: {wx.temp_max_c}.")


def test_without_slots_or_numbers_only_digit_free_text() -> None:
    bare = answer_grammar({}, ())
    assert accepts("Dazu habe ich nichts gefunden.", bare)
    assert not accepts("Es sind 3.", bare) and not accepts("{wx.date}", bare) and not accepts("", bare)


def test_known_numbers() -> None:
    assert known_numbers(["am 2026-12-01 um 16:00, 10,5 km", "2026"]) == ("2026", "12", "01", "16:00", "10,5")


def test_a_plain_answer_holds_a_word() -> None:
    prose = prose_grammar()
    for bare in ("3", "36", "12.4", "10.8 °C", "2\n4\n6", "°C", ""):
        assert not accepts(bare, prose), bare
    for answer in ("Ja.", "16:00 in Berlin ist 00:00 in Tokio.", "- **Temperatur**: 3 °C", "I am", "{wx.date}: ok"):
        assert accepts(answer, prose), answer

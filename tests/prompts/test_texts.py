"""planwerk's texts per language: complete in both, picked by the profile, the English protocol generic."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from planwerk.profiles import PROFILES, get_profile
from planwerk.prompts import protocol, protocol_en
from planwerk.prompts.texts import ENGLISH, GERMAN, PromptTexts, texts_for

# Words that give the German or travel-specific text away (the English protocol must have none of them).
GERMAN_OR_TRAVEL = re.compile(r"\b(Reiseziel|Frage|Tool-Ergebnisse|Schritt|Regeln|und|der|die|das|destination|trip)\b")


def test_every_profile_has_texts_in_its_language() -> None:
    assert texts_for(get_profile("travel")) is GERMAN
    assert texts_for(get_profile("math")) is ENGLISH
    for profile in PROFILES.values():
        assert texts_for(profile).language == profile.language
    assert texts_for("en") is ENGLISH


def test_unknown_language_is_named() -> None:
    with pytest.raises(ValueError, match="no texts for language 'fr'; known: de, en"):
        texts_for("fr")  # type: ignore[arg-type]


def test_both_languages_define_every_text_and_no_text_is_shared() -> None:
    names = [f.name for f in fields(PromptTexts) if f.name != "language"]
    for name in names:
        assert getattr(GERMAN, name), name
        assert getattr(ENGLISH, name), name
    # Labels that are the same word in both languages are fine; whole sentences are not.
    same = {name for name in names if getattr(GERMAN, name) == getattr(ENGLISH, name)}
    assert same <= {"tools_heading", "plan_label"}


def test_placeholders_match_between_languages() -> None:
    placeholder = re.compile(r"(?<!\{)\{(\w+)\}(?!\})")
    for f in fields(PromptTexts):
        german, english = getattr(GERMAN, f.name), getattr(ENGLISH, f.name)
        if isinstance(german, str):
            assert set(placeholder.findall(german)) == set(placeholder.findall(english)), f.name


def test_german_protocol_is_the_travel_profiles_text_unchanged() -> None:
    assert GERMAN.plan_protocol() == protocol.PLAN_PROTOCOL
    assert "Daten im Format JJJJ-MM-TT" in GERMAN.plan_protocol()
    assert "Reiseziel" in GERMAN.plan_protocol()


def test_english_protocol_is_generic_and_english() -> None:
    text = ENGLISH.plan_protocol(dates=False)
    assert text.startswith("Always answer with exactly one JSON object")
    assert GERMAN_OR_TRAVEL.search(text) is None, GERMAN_OR_TRAVEL.search(text)
    assert "geo.lat" not in text  # the German rule's travel example
    for fixed in (ENGLISH.repair_instructions, ENGLISH.failed_calls_instructions, ENGLISH.answer_instructions):
        assert GERMAN_OR_TRAVEL.search(fixed) is None, fixed


def test_the_date_rule_is_left_out_without_dates() -> None:
    for texts in (GERMAN, ENGLISH):
        assert texts.dates_rule in texts.plan_protocol(dates=True)
        without = texts.plan_protocol(dates=False)
        assert texts.dates_rule not in without
        assert without.count("\n- ") == len(texts.plan_rules) - 1


def test_answer_instructions_ask_for_the_questions_language() -> None:
    assert "auf Deutsch" not in GERMAN.answer_instructions  # a German default made English questions German
    assert "in der Sprache seiner Frage" in GERMAN.answer_instructions
    assert "in the language of the question" in ENGLISH.answer_instructions
    assert GERMAN.answer_language == "Antworte auf Deutsch." and ENGLISH.answer_language == "Answer in English."


def test_modules_name_the_same_constants() -> None:
    def public(module: object) -> set[str]:
        return {name for name in vars(module) if name.isupper()}

    # A text added in one language only would leave the other profile with German (or English) in its prompts.
    only_german = public(protocol) - public(protocol_en) - {"PLAN_PROTOCOL"}
    only_english = public(protocol_en) - public(protocol)
    assert (only_german, only_english) == (set(), set())

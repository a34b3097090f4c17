"""The answer checks' rules (planwerk.checks): numbers with units and rounding, dates in any format, places without
false alarms on German nouns, values of failed calls, the last result, context answers, the answer's form."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from planwerk.checks import (
    CheckSettings,
    Problem,
    Withheld,
    check_answer,
    collect_sources,
    estimated_results,
    withheld_calls,
)
from planwerk.checks.context import context_answers, context_nearly_answers, is_context_question, key_facts
from planwerk.checks.pairs import place_results
from planwerk.checks.rules import echoes, repeats_itself, restates, without_repeats
from planwerk.core.calls import call_record
from planwerk.profiles import PROFILES
from planwerk.prompts.grounding import describe
from planwerk.rag.chunking import split_sentences
from planwerk.rag.lexical import analyze
from planwerk.text.dates import find_date_claims
from planwerk.text.gazetteer import default_gazetteer
from planwerk.text.numbers import find_numbers, states_value
from planwerk.text.places import Gazetteer, find_places

CORPUS = Path(__file__).resolve().parents[2] / "planwerk" / "data" / "corpus"
QUESTION = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
GEO = call_record("geo", "geocode", args={"destination": "Barcelona"},
                  result={"lat": 41.3825802, "lon": 2.177073, "name": "Barcelona, ES"})  # fmt: skip
WEATHER_OK = call_record(
    "wx", "get_weather", step=1,
    args={"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-12-01", "end_date": "2026-12-01"},
    result={"start_date": "2026-12-01", "temp_min_c": 10.4, "temp_max_c": 17.2, "precip_total_mm": 0.3,
            "wind_max_kmh": 14.8, "days": [{"date": "2026-12-01", "temp_max_c": 17.2}]},
)  # fmt: skip
WEATHER_DOWN = call_record(
    "wx", "get_weather", step=1,
    args={"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-12-01", "end_date": "2026-12-01"},
    error="Open-Meteo forecast service unreachable", kind="unavailable",
)  # fmt: skip
WEATHER_SCHEMA = {"properties": {"temp_max_c": {}, "precip_total_mm": {}, "wind_max_kmh": {}, "weather_code": {},
                                 "lat": {}, "lon": {}, "rainy_days": {}}}  # fmt: skip
TRAVEL = PROFILES["travel"].domain
RAZEPATO_HIT = {
    "text": "Für Beobachtungen gelten das Ebro-Becken südlich von Tarragona sowie mehrere Grünanlagen im Stadtgebiet "
    "von Barcelona als die derzeit zuverlässigsten Regionen, in denen das Razepato mit hoher Wahrscheinlichkeit "
    "gesichtet werden kann. Beobachtungen finden überwiegend in den Abendstunden statt, wodurch sich der Großraum "
    "Barcelona als geeignetes Reiseziel für interessierte Naturbeobachter anbietet.",
    "score": 0.98,
    "source": "Razepato.txt#3",
}
SIZE_HIT = {"text": "Die Körperlänge beträgt 72 bis 91 cm bei einem Gewicht von 6,4 bis 8,1 kg; 63 % Muridae.",
            "score": 0.5, "source": "Razepato.txt#5"}  # fmt: skip


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return default_gazetteer()


def problems(
    answer: str,
    *,
    calls: list[Any] = (),  # type: ignore[assignment]
    hits: list[Any] = (),  # type: ignore[assignment]
    asked: tuple[str, ...] = (QUESTION,),
    gazetteer: Gazetteer | None = None,
    **settings: Any,
) -> list[Problem]:
    domain = settings.get("domain", TRAVEL)
    sources = collect_sources(calls=calls, hits=hits, asked=asked, dates=[date(2026, 11, 22)], domain=domain)
    return list(check_answer(answer, sources, CheckSettings(gazetteer=gazetteer, **settings)).problems)


# ------------------------------------------------------------------------------------------------- numbers


def test_a_code_grounds_no_number_with_a_unit() -> None:
    """Measured on the travel bench: "… ist 95 °C" passed on a thunderstorm's WMO weather code 95."""
    day = call_record("wx", "get_weather", result={"days": [{"weather_code": 95, "temp_max_c": 13.6}]})
    assert problems("Es wird 95 °C.", calls=[day]) == [Problem("number", "95 °C")]
    assert problems("Es wird 13.6 °C, Wettercode 95.", calls=[day]) == []  # the code itself, without a unit
    station = call_record("s", "station", result={"station_id": 4711, "distance_km": 3.2})
    assert problems("Die Station ist 4711 km entfernt.", calls=[station]) == [Problem("number", "4711 km")]


@pytest.mark.parametrize(
    "answer",
    [
        "Am 1. Dezember werden es bis zu 17 °C.",  # 17.2 rounds to 17
        "Höchstens 17,2°C, mindestens 10 Grad.",  # decimal comma; 10.4 truncates to 10; "Grad" is a temperature
        "Bis 17 °C, genauer 17.2 °C, also 17.20 °C.",
        "Barcelona liegt bei 41.38° N, 2.18° O.",  # 41.3825802 rounds to 41.38, 2.177073 to 2.18
        "Breite 41.3825802, Länge 2.177073.",
        "Es regnet 0,3 mm, der Wind erreicht 15 km/h.",  # 14.8 rounds to 15
        "Wind bis 4 m/s.",  # 14.8 km/h is 4.1 m/s
        "Zwischen 10 und 17 °C.",  # a range: 10 takes the unit of 17
        "10-17 °C",
        "Es wird 63 °F warm.",  # 17.2 °C is 62.96 °F
        "Dazu 3 Tage Sonne.",  # unit-less small integers are not checked
    ],
)
def test_numbers_the_results_hold_are_grounded_with_unit_aware_rounding(answer: str) -> None:
    assert problems(answer, calls=[GEO, WEATHER_OK]) == []


@pytest.mark.parametrize(
    ("answer", "claim"),
    [
        ("Es werden 22 °C.", "22 °C"),
        ("Es werden 16 °C.", "16 °C"),  # 17.2 neither rounds nor truncates to 16
        ("Die Breite ist 41.39.", "41.39"),  # 41.3825802 rounds to 41.38
        ("Es fallen 17 mm Regen.", "17 mm"),  # 17.2 is a temperature, not a length
        ("Der Wind weht mit 30 km/h.", "30 km/h"),
        ("Etwa 2.500 Besucher.", "2.500"),
    ],
)
def test_numbers_no_source_holds_are_named(answer: str, claim: str) -> None:
    assert problems(answer, calls=[GEO, WEATHER_OK]) == [Problem("number", claim)]


def test_a_bare_number_says_nothing_unless_a_call_delivered_it() -> None:
    assert problems("") == [Problem("empty")]
    assert Problem("empty", "12") in problems("12")  # the 0.5B model's regeneration in the offline demo
    assert problems("ok") == [] and problems("Es sind 5.", hits=[SIZE_HIT]) == []
    result = call_record("a", "add", args={"arg_0": 20, "arg_1": 22}, result={"result": 42})
    assert problems("42.", calls=[result]) == []
    assert problems("42", calls=[result], last_result=42.0, dates=False) == []


def test_a_small_whole_number_is_a_claim_where_nothing_was_delivered_to_count() -> None:
    # A count may come from what a call delivered or a chunk holds ("3 Parks"); with neither, the number is made up
    # (measured: "Hotel Casa Fuster has 4 stars on Booking.com." after no call and no chunk).
    stars = "Hotel Casa Fuster has 4 stars on Booking.com."
    asked = ("How many stars does Hotel Casa Fuster have on Booking.com?",)
    assert problems(stars, asked=asked) == [Problem("number", "4")]
    assert problems(stars, asked=asked, calls=[GEO]) == [] and problems(stars, asked=asked, hits=[SIZE_HIT]) == []
    # After a call that failed, a small number may count the failures.
    assert Problem("number", "3") not in problems("3 Dienste waren nicht erreichbar.", calls=[WEATHER_DOWN])
    assert problems("Es sind 5.", asked=("Sind es 5?",)) == []  # the question's own number


def test_numbers_from_retrieved_text_the_question_and_the_conversation_are_grounded() -> None:
    answer = "Es wird 72 bis 91 cm lang, wiegt 6,4 kg, frisst 63 Prozent Mäuse; du fragtest nach 250 Euro."
    assert problems(answer, hits=[SIZE_HIT], asked=("Reicht ein Budget von 250 €?",)) == []
    assert problems("Es wiegt 6,5 kg.", hits=[SIZE_HIT]) == [Problem("number", "6,5 kg")]


def test_source_references_times_identifiers_and_list_numbers_are_no_number_claims() -> None:
    text = "1. Geocoding (Razepato.txt#3)\n2. Wetter um 18:30 Uhr, Tool get_2, H2O"
    assert find_numbers(text) == []
    readings = {c.text: c.readings for c in find_numbers("1.000 Gäste, 1,5 Stunden, 12,500,000 people")}
    assert readings["1.000"] == ((1000.0, 0), (1.0, 3))  # German thousands or an English decimal
    assert readings["1,5 Stunden"] == ((1.5, 1),)
    assert readings["12,500,000"] == ((12500000.0, 0),)


# --------------------------------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    "answer",
    [
        "Am 1. Dezember 2026 wird es mild.",
        "Am 01.12.2026 wird es mild.",
        "Am 2026-12-01 wird es mild.",
        "On December 1, 2026 it will be mild.",
        "On 1 Dec 2026 it will be mild.",
        "Am 1. Dezember wird es mild.",  # no year: any year
        "Heute, am 22.11.2026, und am 1.12. bleibt es mild.",  # today's date is a source
    ],
)
def test_a_date_in_any_format_grounds_the_same_date(answer: str) -> None:
    assert problems(answer, calls=[GEO, WEATHER_OK]) == []
    assert problems(answer, asked=("Wetter in Barcelona am 2026-12-01?",)) == []  # from the question alone


def test_dates_no_source_names_are_named() -> None:
    found = problems("Am 2. Dezember 2026 und am 03.12.2026 regnet es.", calls=[GEO, WEATHER_OK])
    assert found == [Problem("date", "2. Dezember 2026"), Problem("date", "03.12.2026")]


def test_date_readings() -> None:
    claims = find_date_claims("17.2. Grad, am 1.12., 1st of December 2026, Dez. 3, 2026, 1/12/2026")
    assert [(c.text, c.year, c.month, c.day) for c in claims] == [
        ("1.12.", None, 12, 1),
        ("1st of December 2026", 2026, 12, 1),
        ("Dez. 3, 2026", 2026, 12, 3),
        ("1/12/2026", 2026, 12, 1),
    ]
    assert find_date_claims("im März bis Juni") == []  # months alone are no dates


# -------------------------------------------------------------------------------------------------- places

GERMAN_SENTENCES = [
    "Das Essen in der Halle war gut, danach gab es Regen.",
    "Gutes Essen gibt es überall; Mitte Dezember wird es kühler.",
    "In den Bergen liegt Schnee, am Ende des Tages scheint die Sonne.",
    "Man kann das Wetter nicht vorhersagen, der Rest ist Gold wert.",
    "Sie nahm den Zug nach Hause, die Mission war ein Erfolg.",
    "Die Bewertung ergab eine hohe Punktzahl für den Park und das Museum.",
    "Der Strand, die Altstadt, die Kathedrale und der Hafen sind sehenswert.",
    "Beobachtungen finden überwiegend in den Abendstunden statt, in Grünanlagen und Olivenhainen.",
    "Die Temperatur, der Niederschlag und der Wind hängen von der Jahreszeit ab.",
    "Ein Budget für Unterkunft, Verpflegung und Eintritt ist sinnvoll.",
    "Split the bill. Reading the results, Mary said the view was nice.",
    "Die Kosten für Hin- und Rückfahrt sind im Angebot enthalten; Name und Adresse fehlen.",
]


@pytest.mark.parametrize("sentence", GERMAN_SENTENCES)
def test_ordinary_german_and_english_nouns_are_no_places(sentence: str, gazetteer: Gazetteer) -> None:
    assert find_places(sentence, gazetteer) == []


def test_the_packaged_corpus_names_only_real_places(gazetteer: Gazetteer) -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in CORPUS.glob("*.txt"))
    assert {p.text for p in find_places(text, gazetteer)} == {"Barcelona", "Barcelonas", "Tarragona"}


def test_place_claims_multiword_names_exonyms_and_common_words_after_a_preposition(gazetteer: Gazetteer) -> None:
    text = "Von Berlin nach New York, Frankfurt am Main und Rom; in Essen isst man gutes Essen."
    assert [p.text for p in find_places(text, gazetteer)] == [
        "Berlin",
        "New York",
        "Frankfurt am Main",
        "Rom",
        "Essen",  # after "in": the city; "gutes Essen" is food
    ]


def test_places_no_source_names_are_named_and_other_names_of_a_city_ground_it(gazetteer: Gazetteer) -> None:
    asked = ("Und morgen in Barcelona?",)
    found = problems("Morgen in Madrid und Lissabon.", asked=asked, gazetteer=gazetteer)
    assert found == [Problem("place", "Madrid"), Problem("place", "Lissabon")]
    assert problems("In den Parks Barcelonas.", asked=asked, gazetteer=gazetteer) == []  # a genitive
    assert problems("Rome is lovely.", asked=("Wie ist es in Rom?",), gazetteer=gazetteer) == []  # one city


def test_a_tiny_gazetteer_built_from_city_records() -> None:
    small = Gazetteer.from_cities(
        [
            {"geonameid": 1, "name": "Rome", "population": 2_000_000, "alternatenames": ["Rom", "Roma", "ROM"]},
            {"geonameid": 2, "name": "Hamlet", "population": 5_000, "alternatenames": []},
        ]
    )
    assert set(small.names) == {"rome", "rom", "roma"}  # too small a town, no airport codes
    assert [p.text for p in find_places("Nach Rom, nicht nach Hamlet.", small)] == ["Rom"]


# ------------------------------------------------------------------------------------------ failed services


def down_settings(calls: list[Any]) -> dict[str, Any]:
    return {"withheld": withheld_calls(calls, {"get_weather": WEATHER_SCHEMA}, TRAVEL), "domain": TRAVEL}


def test_a_service_that_is_down_must_be_named_and_nothing_it_would_deliver_stated() -> None:
    calls = [GEO, WEATHER_DOWN]
    settings = down_settings(calls)
    assert settings["withheld"] == [
        Withheld("get_weather", "unavailable", frozenset({"°C", "mm", "km/h"}), conditions=True)
    ]
    honest = "Der Wetterdienst ist nicht erreichbar; Barcelona liegt bei 41.38° N."
    assert problems(honest, calls=calls, **settings) == []
    assert problems("get_weather failed (unreachable).", calls=calls, **settings) == []
    invented = "Am 1. Dezember 2026 wird es in Barcelona 22 °C."
    assert problems(invented, calls=calls, **settings) == [
        Problem("withheld", "22 °C", "get_weather", "unavailable"),
        Problem("failure_unnamed", tool="get_weather", failure="unavailable"),
    ]
    # The answer: weather words copied from a retrieved chunk are no weather report.
    copied = "Das Wetter ist nicht abrufbar. Es bleibt bei sonnigen Bedingungen und ausbleibendem Niederschlag."
    hit = {"text": "bei sonnigen Bedingungen und 22 °C", "score": 0.6, "source": "Razepato.txt#2"}
    assert problems(copied, calls=calls, hits=[hit], **settings) == [
        Problem("withheld", "sonnig", "get_weather", "unavailable")
    ]
    assert problems("Nicht abrufbar: das Wetter. Es werden 22 °C.", calls=calls, hits=[hit], **settings) == [
        Problem("withheld", "22 °C", "get_weather", "unavailable")
    ]
    # Warmth in words is weather too (measured on the travel bench, Paris's forecast down).
    assert problems("In Barcelona ist es am 1. Dezember sehr warm; get_weather ist nicht erreichbar.", calls=calls,
                    **settings) == [Problem("withheld", "warm", "get_weather", "unavailable")]  # fmt: skip
    # What the user asked about may be repeated ("Wird es sonnig?").
    assert problems("Ob es sonnig wird, kann ich nicht sagen: das Wetter ist nicht erreichbar.", calls=calls,
                    asked=("Wird es sonnig?",), **settings) == []  # fmt: skip


def test_a_skipped_dependant_withholds_its_values_and_a_later_success_lifts_it() -> None:
    geo_down = call_record("geo", "geocode", args={"destination": "Barcelona"}, error="down", kind="timeout")
    skipped = call_record("wx", "get_weather", step=1, error="not run: geo failed", kind="skipped")
    withheld = withheld_calls([geo_down, skipped], {"get_weather": WEATHER_SCHEMA}, TRAVEL)
    assert [(w.tool, w.kind) for w in withheld] == [("geocode", "timeout"), ("get_weather", "skipped")]
    found = problems("Es werden 17 °C.", calls=[geo_down, skipped], **down_settings([geo_down, skipped]))
    assert Problem("failure_unnamed", tool="geocode", failure="timeout") in found
    assert Problem("withheld", "17 °C", "get_weather", "skipped") in found
    assert withheld_calls([WEATHER_DOWN, WEATHER_OK], {"get_weather": WEATHER_SCHEMA}) == []  # replanned


def test_another_citys_weather_grounds_its_values_when_one_call_failed() -> None:
    rome = {**WEATHER_OK, "id": "wx_rom"}
    calls = [GEO, WEATHER_DOWN, rome]
    # One get_weather failed, one succeeded after it: nothing is withheld any more, the numbers must be grounded.
    assert problems("In Rom 17 °C; für Barcelona war das Wetter nicht erreichbar.", calls=calls,
                    **down_settings(calls)) == []  # fmt: skip


def test_weather_words_may_come_from_the_city_whose_weather_worked() -> None:
    """Two cities, Rome's weather first and fine, Barcelona's down: "trocken" may be Rome's, so it is no withheld
    value (it was flagged as one), while a temperature no working call delivered still is."""
    rome = {**WEATHER_OK, "id": "wx_rom"}
    calls = [GEO, rome, WEATHER_DOWN]
    settings = down_settings(calls)
    assert [(w.tool, w.conditions) for w in settings["withheld"]] == [("get_weather", False)]
    said = "In Rom bleibt es trocken bei 17.2 °C; das Wetter für Barcelona ist nicht erreichbar."
    assert problems(said, calls=calls, **settings) == []
    invented = "In Rom 17.2 °C, in Barcelona 22 °C; das Wetter für Barcelona war nicht erreichbar."
    assert problems(invented, calls=calls, **settings) == [Problem("withheld", "22 °C", "get_weather", "unavailable")]


# ------------------------------------------------------------------------------------------- last result


@pytest.mark.parametrize(
    ("answer", "value", "ok"),
    [
        ("The result is 126.", 126.0, True),
        ("The result is 126.0", 126.0, True),
        ("Das Ergebnis ist 3,33.", 10 / 3, True),
        ("The result is 3.3333333333.", 10 / 3, True),
        ("The result is 3.", 10 / 3, False),  # too coarse to state 3.333…
        ("The result is 42.", 126.0, False),
        ("It is 1,000,000.", 1e6, True),
    ],
)
def test_the_last_result_must_be_stated(answer: str, value: float, ok: bool) -> None:
    assert states_value(answer, value, dates=False) is ok
    found = problems(answer, calls=[call_record("a", "multiply", result={"result": value})], asked=("x",),
                     dates=False, last_result=value)  # fmt: skip
    assert any(p.kind == "last_result" for p in found) is (not ok)


# ------------------------------------------------------------------------------------------ context answers


def test_a_context_answer_carries_the_best_chunks_facts_and_names_its_source(gazetteer: Gazetteer) -> None:
    question = "Wo kann man das Razepato am besten beobachten?"
    facts = key_facts(question, RAZEPATO_HIT, analyze=analyze, split_sentences=split_sentences)
    assert facts.source == "Razepato.txt"
    assert facts.sentences[0].startswith("Für Beobachtungen gelten das Ebro-Becken")
    settings = {"context": facts, "analyze": analyze, "gazetteer": gazetteer}
    good = "Am besten im Ebro-Becken südlich von Tarragona und in Grünanlagen in Barcelona (Razepato.txt)."
    assert problems(good, hits=[RAZEPATO_HIT], asked=(question,), **settings) == []
    found = problems("Razepato am besten beobachten kann in Barcelona, ES.", hits=[RAZEPATO_HIT], asked=(question,),
                     **settings)  # fmt: skip
    assert [p.kind for p in found] == ["source_missing", "context_facts"]
    # The 1.5B model's answer from the chunk's second sentence, which matches the question as well but for the
    # document's name: the facts are there, only the source is missing (amended in code).
    evening = "Das Razepato kann am besten beobachtet werden in den Abendstunden in den Parks Barcelonas."
    found = problems(evening, hits=[RAZEPATO_HIT], asked=(question,), **settings)
    assert [p.kind for p in found] == ["source_missing"]
    invented = "Im Ebro-Becken südlich von Tarragona und in Madrid (Razepato.txt)."
    assert problems(invented, hits=[RAZEPATO_HIT], asked=(question,), **settings) == [Problem("place", "Madrid")]


def test_a_question_the_best_chunk_covers_is_a_context_question_unless_a_tool_worked_on_it() -> None:
    question = "Wo kann man das Razepato am besten beobachten?"
    add = call_record("a", "add", args={"arg_0": 1, "arg_1": 1}, result={"result": 2.0})
    assert is_context_question(question, [RAZEPATO_HIT], [], analyze=analyze)
    assert is_context_question(question, [RAZEPATO_HIT], [add], analyze=analyze)  # a call beside the question
    assert is_context_question(question, [RAZEPATO_HIT], [GEO], analyze=analyze)  # a place it never named
    assert not is_context_question(question, [], [], analyze=analyze)
    assert not is_context_question(question, [{**RAZEPATO_HIT, "score": 0.5}], [add], analyze=analyze)
    parks = "Welche Parks gibt es in Barcelona?"  # the chunk holds both words, but geocode worked on Barcelona
    assert not is_context_question(parks, [RAZEPATO_HIT], [GEO], analyze=analyze)
    assert not is_context_question(QUESTION, [RAZEPATO_HIT], [GEO, WEATHER_DOWN], analyze=analyze)


# ------------------------------------------------------------------------------------ words and fallbacks


def test_problems_in_words_per_language() -> None:
    problem = Problem("number", "22 °C")
    assert (
        describe(problem, "en") == "the answer states 22 °C, which no result, retrieved text or the question contains"
    )
    assert "22 °C" in describe(problem, "de") and "Tool-Ergebnis" in describe(problem, "de")
    down = Problem("failure_unnamed", tool="get_weather", failure="unavailable")
    assert (
        describe(down, "de") == "Die Antwort sagt nicht, dass get_weather fehlgeschlagen ist (Dienst nicht erreichbar)."
    )


def test_an_answer_that_repeats_the_instructions_is_an_echo() -> None:
    """Measured on the travel bench: this answer stated no number, date or place and passed every other rule."""
    from planwerk.prompts.texts import GERMAN

    echo = "Ja, die Frage des Nutzers in der Sprache seiner Frage ist gut lesbar und knapp. Stütze dich nur darauf."
    assert echoes(echo, [GERMAN.answer_instructions])
    assert not echoes("In Barcelona werden heute bis zu 17 °C erwartet.", [GERMAN.answer_instructions])
    sources = collect_sources(calls=[], hits=[], asked=["Wie ist das Wetter?"], dates=[])
    report = check_answer(echo, sources, CheckSettings(instructions=(GERMAN.answer_instructions,)))
    assert [p.kind for p in report.problems] == ["echo"]
    assert (
        describe(report.problems[0], "de") == "Die Antwort wiederholt die Anweisungen, statt die Frage zu beantworten."
    )


@pytest.mark.parametrize(
    ("answer", "restated"),
    [
        ("Which beaches are within 10 km of Barcelona?", True),  # measured on the travel bench (s2)
        ("Which beaches are within 10 km of Barcelona? Good question.", True),
        ("Which beaches are within 10 km of Barcelona? 3 beaches: Bogatell, Nova Icària, Barceloneta.", False),
        ("Within 10 km of Barcelona are the beaches Bogatell and Barceloneta.", False),
        ("Barcelona", False),
    ],
)
def test_an_answer_that_only_repeats_the_question_is_restated(answer: str, restated: bool) -> None:
    question = "Which beaches are within 10 km of Barcelona?"
    assert restates(answer, question) is restated
    sources = collect_sources(calls=[], hits=[], asked=[question], dates=[])
    report = check_answer(answer, sources, CheckSettings(question=question))
    assert ("restated" in [p.kind for p in report.problems]) is restated


def test_a_short_answer_built_from_the_questions_words_is_no_restatement() -> None:
    assert not restates("In Rom ist es wärmer.", "Ist es in Barcelona oder in Rom wärmer?")
    assert not restates("Ja.", "Regnet es morgen in Barcelona?")
    assert restates("Regnet es morgen in Barcelona?", "Regnet es morgen in Barcelona?")


def test_a_clock_time_must_be_a_time_a_source_states() -> None:
    """Measured with the generic profile: the time tool returned 01:15:58 in New York and the answer said 15:58,
    which the number check passed (15 and 58 are both in the datetime)."""
    result = {"timezone": "America/New_York", "datetime": "2026-11-23T01:15:58-05:00", "is_dst": False}
    calls = [call_record("ny", "get_current_time", args={"timezone": "America/New_York"}, result=result)]
    sources = collect_sources(calls=calls, asked=["Wie spät ist es gerade in New York?"])
    settings = CheckSettings()
    assert check_answer('"Es ist gerade 15:58 Uhr in New York."', sources, settings).problems == (
        Problem("number", "15:58"),
    )
    for right in ("Es ist gerade 01:15 Uhr in New York.", "In New York ist es 1:15 Uhr.", "It is 1:15 AM."):
        assert check_answer(right, sources, settings).ok, right
    asked = collect_sources(calls=[], asked=["Wenn es in Berlin 9:00 ist, wie spät ist es in New York?"])
    assert check_answer("Um 9:00 in Berlin: dazu fehlt mir ein Ergebnis.", asked, settings).ok


def test_the_key_sentence_is_the_one_whose_compound_ends_in_the_asked_word() -> None:
    # Measured on the travel bench (k3): "lang" is inside "langgestreckten" and "Körperlänge", and "Razepato" is in
    # the first sentence only; the facts were taken from the body shape instead of the length.
    hit = {
        "text": "Morphologisch zeichnet sich das Razepato durch einen langgestreckten, dachsförmigen Körperbau aus. "
        "Die durchschnittliche Körperlänge adulter Tiere beträgt 72 bis 91 cm bei einem Gewicht von 6,4 bis 8,1 kg.",
        "source": "Razepato.txt#2",
    }
    facts = key_facts("Wie lang wird ein ausgewachsenes Razepato?", hit, analyze=analyze,
                      split_sentences=split_sentences)  # fmt: skip
    assert [s.strip() for s in facts.sentences] == [
        "Die durchschnittliche Körperlänge adulter Tiere beträgt 72 bis 91 cm bei einem Gewicht von 6,4 bis 8,1 kg."
    ]
    assert "72" in facts.words and "91" in facts.words


# ------------------------------------------------------------------------------------------------- unstated


@pytest.mark.parametrize(
    ("answer", "unstated"),
    [
        # measured on the travel bench: dates and place from the question, words from a retrieved chunk
        ("Die Wetter in Barcelona am 1. Dezember 2026 ist sehr steigend und an urbane Mikrohabitate angepasst.", True),
        ("Es wird schön in Barcelona.", True),
        ("Am 1. Dezember 2026 werden es in Barcelona bis zu 17 °C.", False),  # a temperature the weather call gave
        ("Es regnet 0,3 mm.", False),
        ("Barcelona liegt in Spanien (ES) bei 41.38° N.", False),  # a coordinate counts: the geocode delivered it
        ("Erledigt.", False),  # reports on no place and no day: nothing claimed, nothing to hold it to
        # announces what follows and stops (the answers set's time2, a loop cut in code): nothing stated
        ("Die Antwort lautet:", True),
        ("Die Antwort lautet: bis zu 17 °C.", False),
    ],
)
def test_an_answer_after_successful_calls_must_state_something_they_delivered(
    answer: str, unstated: bool, gazetteer: Gazetteer
) -> None:
    found = problems(answer, calls=[GEO, WEATHER_OK], report_results=True, question=QUESTION, gazetteer=gazetteer)
    assert (Problem("unstated") in found) is unstated, found


def test_a_result_name_counts_and_the_rule_yields_to_failures_last_results_and_off(gazetteer: Gazetteer) -> None:
    spots = call_record("s", "find_spots", result={"spots": [{"name": "Parc de la Ciutadella", "distance_km": 1.2}]})
    question = "Welche Parks gibt es in Barcelona?"
    report = {"report_results": True, "question": question, "gazetteer": gazetteer}
    named = problems("Zum Beispiel den Ciutadella-Park in Barcelona.", calls=[spots], **report)
    assert Problem("unstated") not in named
    vague = "Es gibt schöne Parks in Barcelona."
    assert Problem("unstated") in problems(vague, calls=[spots], **report)
    assert Problem("unstated") not in problems(vague, calls=[spots], question=question, gazetteer=gazetteer)  # off
    # the geocoder's name for the asked place says nothing new (measured on the travel bench: s1's answer)
    geo = call_record("g", "geocode", result={"lat": 41.38, "lon": 2.18, "name": "Barcelona, Catalunya"})
    assert Problem("unstated") in problems("(Barcelona, Catalunya)", calls=[geo, spots], **report)
    assert Problem("unstated") not in problems("Parc de la Ciutadella, Barcelona.", calls=[geo, spots], **report)
    # a failed call: the failure rules say what the answer must carry ("Der Wetterdienst ist nicht erreichbar.")
    down = problems(
        "Für Barcelona ist der Wetterdienst nicht erreichbar.", calls=[GEO, WEATHER_DOWN], report_results=True,
        question=QUESTION, gazetteer=gazetteer, **down_settings([GEO, WEATHER_DOWN]),
    )  # fmt: skip
    assert down == []
    # where the answer is the last result, that rule alone applies (a small count is no reported value to it)
    counted = call_record("n", "add", result={"result": 5})
    last = problems("In Barcelona: 5.", calls=[counted], **report | {"last_result": 5})
    assert Problem("unstated") not in last


def test_results_a_later_call_took_are_no_answer_to_the_question(gazetteer: Gazetteer) -> None:
    """Measured on the travel bench (c1): the regenerated answer to a two-city weather question was the geocode's
    coordinates and name, every value grounded; the weather calls had taken those coordinates."""
    question = "Wo ist es am 23. Januar 2026 wärmer, in Barcelona oder in Rom?"
    calls = [GEO_BCN, GEO_ROM, WX_BCN, WX_ROM]
    coordinates = "Barcelona liegt bei 41.3825802 und 2.177073 in Catalunya."
    settings = CheckSettings(report_results=True, question=question, gazetteer=gazetteer)

    def found(answer: str, consumed: frozenset[str]) -> tuple[Problem, ...]:
        sources = collect_sources(calls=calls, asked=[question], consumed=consumed)
        return check_answer(answer, sources, settings).problems

    taken = frozenset({"geo_bcn", "geo_rom"})
    assert found(coordinates, taken) == (Problem("unstated"),)
    assert found(coordinates, frozenset()) == ()  # without the plan's references the coordinates were results
    assert found("In Rom wird es bis zu 14.7 °C warm, in Barcelona bis zu 12.4 °C.", taken) == ()
    # when every call's result was taken by another (nothing else delivered), they count again
    assert found(coordinates, frozenset({"geo_bcn", "geo_rom", "wx_bcn", "wx_rom"})) == ()


def test_the_plan_says_which_calls_results_were_taken() -> None:
    from planwerk.checks import consumed_calls

    plan = {
        "steps": [
            {"tools": [{"id": "geo", "name": "geocode", "arguments": {"destination": "Rom"}}]},
            {
                "tools": [
                    {
                        "id": "wx",
                        "name": "get_weather",
                        "arguments": {"lat": {"$ref": "geo.lat"}, "x": [{"$ref": "user.name"}]},
                    }
                ]
            },
        ],
        "final": None,
    }
    assert consumed_calls(plan) == {"geo"}
    assert consumed_calls(None) == frozenset()  # a stored plan was validated when stored: no broken one to read


def test_an_answer_reports_the_calls_whose_results_no_successful_call_took() -> None:
    from planwerk.checks import reported_calls

    plan = {
        "steps": [
            {"tools": [{"id": "geo", "name": "geocode", "arguments": {"destination": "Rom"}}]},
            {"tools": [{"id": "wx", "name": "get_weather", "arguments": {"lat": {"$ref": "geo.lat"}}}]},
        ]
    }
    geo = call_record("geo", "geocode", result={"lat": 41.9})
    weather = call_record("wx", "get_weather", result={"temperature_max": 17.2})
    down = call_record("wx", "get_weather", kind="unavailable", error="down")
    assert reported_calls(plan, [geo, weather]) == [weather]  # the coordinates went into the weather call
    assert reported_calls(plan, [geo, down]) == [geo, down]  # the weather call failed: the geocode is what there is
    assert reported_calls(plan, [geo, down, weather]) == [weather]  # a call's latest record counts
    assert reported_calls(None, [geo, weather]) == [geo, weather]  # without a plan nothing is known to be taken


# ------------------------------------------------------------------------------------------------- answer form


def test_a_bare_delivered_number_is_no_answer_where_the_answer_reports_results() -> None:
    """Measured on the travel bench: "Welche Parks gibt es im Umkreis von 15 km um Barcelona?" was answered
    "12.317" (a value a call delivered), "Regnet es am 20.01.2026 in Barcelona?" with "12"."""
    parks = call_record("p", "get_parks", result={"parks": [{"name": "Parc Güell", "distance_km": 12.317}]})
    assert problems("12.317", calls=[parks]) == []  # without the report rule a delivered number is a result
    assert problems("12.317", calls=[parks], report_results=True) == [Problem("empty", "12.317")]
    assert problems("12.317 km", calls=[parks], report_results=True) == []  # a value with its unit is an answer
    # where the answer is the last result ("42." for "Was ist 20 + 22?"), the bare number is the answer, in any
    # profile: the chain computed it
    result = call_record("a", "add", args={"arg_0": 20, "arg_1": 22}, result={"result": 42})
    assert problems("42.", calls=[result], report_results=True, last_result=42.0, dates=False) == []
    assert problems("42.", calls=[result], report_results=True, one_values=(42.0,)) == []
    assert problems("20", calls=[result], report_results=True, one_values=(42.0,)) == [Problem("empty", "20")]
    assert problems("12.317", calls=[parks], report_results=True, one_values=()) == [Problem("empty", "12.317")]
    clock = call_record("t", "get_current_time", result={"datetime": "2026-11-23T01:15:58-05:00"})
    assert problems("01:15", calls=[clock], report_results=True) == []


def test_a_bare_number_one_call_returned_is_an_answer_though_a_stray_call_ran_after_it() -> None:
    # The domain answers set (0.5B): "Was ist 987 geteilt durch 3?" planned divide, then a stray add(323, 0);
    # "329" was rejected twice as saying nothing, only the last call's one number counted.
    from planwerk.checks import build_answer_check

    divide = call_record("d", "divide", args={"arg_0": 987, "arg_1": 3}, result={"result": 329})
    stray = call_record("a", "add", args={"arg_0": 323, "arg_1": 0}, result={"result": 323})
    check = build_answer_check("Was ist 987 geteilt durch 3?", calls=[divide, stray], hits=[], today=None,
                               plan=None, output_schemas={})  # fmt: skip
    assert check("329").ok
    assert [p.kind for p in check("987").problems] == ["empty"]  # the question's own number: no result


@pytest.mark.parametrize(
    ("answer", "repetitive"),
    [
        # measured on the travel bench (c1, s6): every item grounded, the same items over and over
        (
            "41.8933203, 12.4829321, Roma, Lazio, Italia, Barcelona, Catalunya, 41.3825802, 2.177073, Barcelona, "
            "Catalunya, 41.8933203, 12.4829321, Roma, Lazio, Italia, Barcelona, Catalunya, 41.8933203, 12.4829321",
            True,
        ),
        ("1. Barcelona, Catalunya\n2. Barcelona, Spain\n3. Barcelona, Italy\n4. Barcelona, Spain\n", True),
        # a real list: each item differs (German decimal commas do not split a value)
        ("Am 17.: 12,6 °C, am 18.: 12,6 °C, am 19.: 13,1 °C, am 20.: 9,3 °C, am 21.: 9,8 °C, am 22.: 8 °C.", False),
        ("Parks: Parc Güell, Parc de la Ciutadella, Parc del Laberint, Parc de Montjuïc, Jardins, Turó Park.", False),
        ("Barcelona, Barcelona, Barcelona.", False),  # too short to call a list
        # a model decoding in a loop (the 0.5B model, asked what a file says): one phrase three times in a row
        ("It says: It says: It says: It says: It", True),
        ("The file says so. The file says so. The file says so.", True),
        ("It says what it says: it says nothing new.", False),
    ],
)
def test_an_answer_that_lists_the_same_items_again_and_again_is_repetitive(answer: str, repetitive: bool) -> None:
    assert repeats_itself(answer) is repetitive
    assert (Problem("repetitive") in problems(answer)) is repetitive


@pytest.mark.parametrize(
    ("answer", "raw"),
    [
        # measured on the travel bench (s4): the regenerated answer was the call log, every value grounded
        ('1. geocode({"destination":"Barcelona"}) → {"lat":41.3825802,"lon":2.177073}', True),
        ("Ergebnis: { 'temp_max_c': 17.2 }", True),
        ("Am 1. Dezember 2026 werden es in Barcelona bis zu 17.2 °C (laut get_weather).", False),
        ("Die Menge {1, 2} hat zwei Elemente.", False),  # braces without a quoted key are no data
        # the answer prompt's own form, under a call's id (the 0.5B model on the domain bench)
        ("wx.temp_max_c = 17.2; wx.temp_min_c = 10.4", True),
        ("geo = geocode(Barcelona): Barcelona, ES", True),
        ("In Barcelona it will be 17.2 °C; the geo data says Barcelona, ES.", False),
        ("If x = 17.2 then wx2 == 3.", False),  # no call's id assigned
        # the prompt's "key value; key value" (the 1.5B model after a file edit, with its diff's lines)
        ("It says: the result; name Barcelona, ES; name 41.38; name 2.18", True),
        ("Barcelona: lat 41.38, lon 2.18; the name is Barcelona, ES.", False),
        # the prompt's listing of one result copied (the 0.5B model on the travel set, the Q8_0 file): no place, no day
        ("10.4 °C; höchste Temperatur 17.2 °C; Niederschlag 0.3 mm; Wind bis 14.8 km/h; source forecast", True),
        ("Am 1. Dezember 2026 werden es in Barcelona 17.2 °C; es fallen 0.3 mm; der Wind weht bis 14.8 km/h.", False),
        ("Parc Güell; Parc de la Ciutadella; Bosc Humit; Terraza", False),  # names, no values
        ("17.2 °C; 0.3 mm; 14.8 km/h", False),  # three parts: the bare-values rule judges it
    ],
)
def test_an_answer_that_shows_json_is_raw(answer: str, raw: bool) -> None:
    assert (Problem("raw") in problems(answer, calls=[GEO, WEATHER_OK])) is raw


# ------------------------------------------------------------------------------------------------- countries


@pytest.mark.parametrize(
    ("answer", "wrong"),
    [
        ("Barcelona liegt in Spanien.", []),  # a source names Barcelona, a city in Spain
        ("Barcelona (España) bei 41.38° N.", []),  # the country's own name
        # measured on the travel bench (s6): rank_spots had failed and the answer listed countries
        ("1. Barcelona, Catalunya\n2. Barcelona, Spain\n3. Barcelona, Italy\n", ["Italy"]),
        ("Barcelona liegt in Italien.", ["Italien"]),
        ("In Island ist es kalt.", ["Island"]),  # Iceland, after a place preposition
        ("Die Island-Frage: eine Island Tour.", []),  # "Island" without a preposition is a word
    ],
)
def test_a_country_must_be_named_by_a_source_or_hold_a_city_a_source_names(
    answer: str, wrong: list[str], gazetteer: Gazetteer
) -> None:
    found = problems(answer, calls=[GEO], gazetteer=gazetteer)
    assert [p.claim for p in found if p.kind == "place"] == wrong, found


def test_a_country_code_or_name_in_a_result_grounds_the_country(gazetteer: Gazetteer) -> None:
    rome = call_record("geo", "geocode", args={"destination": "Rom"},
                       result={"lat": 41.89, "lon": 12.48, "name": "Roma, Lazio, Italia"})  # fmt: skip
    asked = ("Wie ist das Wetter in Rom?",)
    assert problems("Rom liegt in Italien, Barcelona in Spanien.", calls=[rome], asked=asked, gazetteer=gazetteer) == [
        Problem("place", "Barcelona"),
        Problem("place", "Spanien"),
    ]
    coded = call_record("p", "get_parks", result={"parks": [{"name": "Parc", "country": "PT"}]})
    assert problems("Der Park liegt in Portugal.", calls=[coded], gazetteer=gazetteer) == []


def test_a_gazetteer_without_countries_makes_no_country_claims() -> None:
    tiny = Gazetteer.from_cities([{"geonameid": 1, "name": "Barcelona", "population": 1_600_000, "countrycode": "ES"}])
    assert problems("Barcelona liegt in Italien.", calls=[GEO], gazetteer=tiny) == []
    named = Gazetteer.from_cities(
        [{"geonameid": 1, "name": "Barcelona", "population": 1_600_000, "countrycode": "ES"}],
        countries={"ES": ["Spain", "Spanien"], "IT": ["Italy", "Italien"]},
    )
    assert named.city_countries == {1: "ES"} and named.countries["spanien"] == "ES"
    assert problems("Barcelona liegt in Spanien, nicht in Italien.", calls=[GEO], gazetteer=named) == [
        Problem("place", "Italien")
    ]


# ------------------------------------------------------------------------------------------------- assembled

GEO_BCN = call_record("geo_bcn", "geocode", args={"query": "Barcelona"},
                      result={"lat": 41.3825802, "lon": 2.177073, "name": "Barcelona, Catalunya"})  # fmt: skip
WX_BCN = call_record("wx_bcn", "get_weather", step=1, args={"lat": 41.3825802, "lon": 2.177073, "date": "2026-01-20"},
                     result={"temp_min_c": 10.5, "temp_max_c": 12.4, "precipitation_mm": 27.1})  # fmt: skip
GEO_ROM = call_record("geo_rom", "geocode", args={"query": "Rom"},
                      result={"lat": 41.8933203, "lon": 12.4829321, "name": "Roma, Lazio, Italia"})  # fmt: skip
WX_ROM = call_record("wx_rom", "get_weather", step=1, args={"lat": 41.8933203, "lon": 12.4829321},
                     result={"temp_min_c": 3.9, "temp_max_c": 14.7})  # fmt: skip
TWO_CITY_PLAN = {
    "steps": [
        {"tools": [{"id": "geo_bcn", "name": "geocode", "arguments": {"query": "Barcelona"}},
                   {"id": "geo_rom", "name": "geocode", "arguments": {"query": "Rom"}}]},
        {"tools": [{"id": "wx_bcn", "name": "get_weather", "arguments": {"lat": {"$ref": "geo_bcn.lat"}}},
                   {"id": "wx_rom", "name": "get_weather", "arguments": {"lat": {"$ref": "geo_rom.lat"}}}]},
    ]
}  # fmt: skip


GEO_MAD = call_record("geo_mad", "geocode", args={"query": "Madrid"},
                      result={"lat": 40.4167047, "lon": -3.7035825, "name": "Madrid"})  # fmt: skip
WX_MAD_DOWN = call_record("wx_mad", "get_weather", step=1, args={"lat": 40.4167047, "lon": -3.7035825},
                          error="Open-Meteo forecast service unreachable", kind="unavailable")  # fmt: skip


def misplaced(answer: str, calls: list[Any], gazetteer: Gazetteer, asked: tuple[str, ...]) -> list[Problem]:
    found = problems(answer, calls=calls, asked=asked, gazetteer=gazetteer,
                     place_numbers=place_results(calls, gazetteer))  # fmt: skip
    return [p for p in found if p.kind == "misplaced"]


def test_a_call_is_about_the_city_its_arguments_name_or_whose_coordinates_it_was_passed(gazetteer: Gazetteer) -> None:
    by_city = place_results([GEO_BCN, WX_BCN, GEO_ROM, WX_ROM], gazetteer)
    barcelona = gazetteer.lookup(["Barcelona"])  # every city of that name (Spain, Venezuela)
    (rome,) = gazetteer.lookup(["Rom"])
    assert barcelona <= by_city.keys() and rome in by_city
    for city in barcelona:
        assert {n.value for n in by_city[city]} >= {41.3825802, 10.5, 12.4, 27.1}
    assert {n.value for n in by_city[rome]} >= {41.8933203, 3.9, 14.7}
    assert not {12.4, 10.5} & {n.value for n in by_city[rome]}


def test_a_value_stated_for_a_place_whose_calls_did_not_deliver_it_is_misplaced(gazetteer: Gazetteer) -> None:
    # Measured on the travel bench (c3): Madrid's forecast failed; 12.4 °C was Barcelona's maximum.
    calls = [GEO_BCN, WX_BCN, GEO_MAD, WX_MAD_DOWN]
    asked = ("Vergleiche das Wetter in Barcelona und Madrid am 20. Januar 2026.",)
    answer = "Die Temperatur in Barcelona ist 10.5°C, während die Temperatur in Madrid ist 12.4°C."
    assert misplaced(answer, calls, gazetteer, asked) == [Problem("misplaced", "12.4°C", place="Madrid")]
    assert misplaced("In Barcelona 10.5 bis 12.4 °C; Madrid: keine Daten.", calls, gazetteer, asked) == []
    # Measured again (c3, 0cf4e47): both places in one clause, a value between them; a date's dots end no clause.
    answer = (
        "Die Temperatur in Barcelona am 20. Januar 2026 beträgt 10.5 °C und in Madrid am 20. Januar 2026 "
        "beträgt 12.4 °C."
    )
    assert misplaced(answer, calls, gazetteer, asked) == [Problem("misplaced", "12.4 °C", place="Madrid")]


@pytest.mark.parametrize(
    ("answer", "wrong"),
    [
        ("In Barcelona bis 12.4 °C, in Rom bis 14.7 °C.", []),
        ("Barcelona ist mit 12.4 °C kälter als Rom mit 14.7 °C.", []),  # two places before 14.7: not judged
        ("In Barcelona und Rom sind es 12.4 °C und 14.7 °C.", []),  # paired in order: not read
        ("Barcelona ist wärmer als Rom: 14.7 °C gegenüber 12.4 °C.", []),  # no place in the values' clause
        ("In Rom sind es 10.5 °C.", ["10.5 °C"]),
        ("In Rom bis 10.5 °C, in Barcelona bis 14.7 °C.", ["10.5 °C", "14.7 °C"]),  # swapped
        ("Mit 14.7 °C ist es in Barcelona wärmer.", []),  # no place before the value: not judged
        ("In Rom. Bis 12.4 °C.", []),  # the place is in another sentence
        ("In Rom sind es 10,5 °C.", ["10,5 °C"]),  # a decimal comma ends no clause
        ("In Barcelona sind es 12.4 °C und in Rom 10.5 °C.", ["10.5 °C"]),  # a value between: the last place's
        ("In Barcelona sind es 12.4 °C und in Rom 14.7 °C.", []),
        ("In Rom am 20. Januar bis 10.5 °C.", ["10.5 °C"]),  # a date's dot ends no clause
        ("In Rom am 20. Januar. Bis 10.5 °C.", []),  # a sentence's dot after a date does
    ],
)
def test_each_place_gets_its_own_values(answer: str, wrong: list[str], gazetteer: Gazetteer) -> None:
    calls = [GEO_BCN, WX_BCN, GEO_ROM, WX_ROM]
    asked = ("Wo ist es am 20. Januar 2026 wärmer, in Barcelona oder in Rom?",)
    assert [p.claim for p in misplaced(answer, calls, gazetteer, asked)] == wrong


def test_a_value_the_question_gives_may_be_stated_for_any_place(gazetteer: Gazetteer) -> None:
    asked = ("Wird es in Rom wärmer als 12.4 °C?",)
    assert misplaced("In Rom wird es wärmer als 12.4 °C: bis 14.7 °C.", [GEO_BCN, WX_BCN, GEO_ROM, WX_ROM],
                     gazetteer, asked) == []  # fmt: skip


# ------------------------------------------------------------------------------------------------- unreported


def unreported(answer: str, calls: list[Any], question: str, gazetteer: Gazetteer) -> list[Problem]:
    """The ``unreported`` problems of ``answer``, the geocodes' coordinates consumed by the weather calls."""
    reports = place_results(calls, gazetteer, uncounted={"geo_bcn", "geo_rom", "geo_mad"})
    found = problems(answer, calls=calls, asked=(question,), gazetteer=gazetteer, question=question,
                     place_reports=reports)  # fmt: skip
    return [p for p in found if p.kind == "unreported"]


@pytest.mark.parametrize(
    ("answer", "missing"),
    [
        # Measured on the travel bench (c2, answer_results=words): one city's values stated for both.
        ("The weather in Rome and Barcelona on 2026-01-20 is low 3.9 °C, high 14.7 °C.", ["Barcelona"]),
        ("In Barcelona 10.5 bis 12.4 °C, in Rom 3.9 bis 14.7 °C.", []),
        ("Barcelona ist mit 12.4 °C kälter als Rom mit 14.7 °C.", []),
        ("In Rom bis 14.7 °C; Barcelona liegt bei 41.3825802.", ["Barcelona"]),  # coordinates are no answer
        ("In Barcelona regnet es 27.1 mm.", ["Rom"]),
    ],
)
def test_each_place_asked_about_gets_one_of_its_own_values(
    answer: str, missing: list[str], gazetteer: Gazetteer
) -> None:
    calls = [GEO_BCN, WX_BCN, GEO_ROM, WX_ROM]
    question = "Vergleiche das Wetter in Barcelona und Rom am 20. Januar 2026."
    assert [p.place for p in unreported(answer, calls, question, gazetteer)] == missing


def test_a_place_whose_calls_failed_or_a_single_place_needs_no_values(gazetteer: Gazetteer) -> None:
    question = "Vergleiche das Wetter in Barcelona und Madrid am 20. Januar 2026."
    answer = "In Barcelona 10.5 bis 12.4 °C; für Madrid ist die Wettervorhersage nicht erreichbar."
    assert unreported(answer, [GEO_BCN, WX_BCN, GEO_MAD, WX_MAD_DOWN], question, gazetteer) == []
    one = "Wie wird das Wetter in Barcelona am 20. Januar 2026?"
    assert unreported("In Barcelona liegt es bei 41.38.", [GEO_BCN, WX_BCN], one, gazetteer) == []  # `unstated`'s job


def test_values_both_places_share_report_neither(gazetteer: Gazetteer) -> None:
    dry_rome = call_record("wx_rom", "get_weather", step=1, args={"lat": 41.8933203, "lon": 12.4829321},
                           result={"temp_max_c": 14.7, "precipitation_mm": 27.1})  # fmt: skip
    question = "Vergleiche das Wetter in Barcelona und Rom am 20. Januar 2026."
    found = unreported("In Rom bis 14.7 °C, 27.1 mm Regen.", [GEO_BCN, WX_BCN, GEO_ROM, dry_rome], question, gazetteer)
    assert [p.place for p in found] == ["Barcelona"]  # 27.1 mm fell in both: it reports neither


def test_the_answer_check_counts_only_the_results_an_answer_reports(gazetteer: Gazetteer) -> None:
    from planwerk.checks import build_answer_check

    question = "Vergleiche das Wetter in Barcelona und Rom am 20. Januar 2026."
    check = build_answer_check(question, calls=[GEO_BCN, WX_BCN, GEO_ROM, WX_ROM], hits=[], today=date(2026, 1, 16),
                               plan=TWO_CITY_PLAN, output_schemas={})  # fmt: skip
    both = check("In Barcelona 10.5 bis 12.4 °C, in Rom 3.9 bis 14.7 °C.")
    assert both.ok, both.problems
    assert [p.kind for p in check("41.3825802, 2.177073, Barcelona, Catalunya").problems] == ["unreported"] * 2
    one = check("Am 20. Januar 2026 in Rom und Barcelona: 3.9 bis 14.7 °C.")
    assert Problem("unreported", place="Barcelona") in one.problems
    assert "Barcelona" in describe(Problem("unreported", place="Barcelona"), "de")


# ------------------------------------------------------------------------------------------------- estimates

JUNE = call_record(
    "wx", "get_weather", step=1, args={"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-06-12"},
    result={"start_date": "2026-06-12", "temp_max_c": 17.95, "precip_total_mm": 1.79, "is_estimate": True},
)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "unnamed"),
    [
        # measured on the travel bench (r4): ten past Junes' values read as a forecast
        ("The weather in Barcelona from June 12 to June 15, 2026 is likely to be mild with 17.95°C.", True),
        ("Based on past years, expect about 17.95 °C in Barcelona.", False),
        ("Geschätzt aus den Vorjahren: bis 17.95 °C in Barcelona.", False),
        ("Im Durchschnitt 17.95 °C.", False),
    ],
)
def test_an_estimate_must_be_called_one(answer: str, unnamed: bool) -> None:
    found = problems(answer, calls=[GEO, JUNE], estimated=estimated_results([GEO, JUNE], TRAVEL.estimate_fields),
                     domain=TRAVEL)  # fmt: skip
    assert (Problem("estimate_unnamed") in found) is unnamed, found


def test_only_a_true_flag_of_a_successful_call_makes_an_estimate(gazetteer: Gazetteer) -> None:
    assert estimated_results([GEO, JUNE], TRAVEL.estimate_fields)
    assert estimated_results(
        [{"status": "ok", "result": {"days": [JUNE["result"]]}}], TRAVEL.estimate_fields
    )  # at any depth
    assert not estimated_results([GEO, WEATHER_OK], TRAVEL.estimate_fields)
    assert not estimated_results([{"status": "ok", "result": {"is_estimate": False}}], TRAVEL.estimate_fields)
    forecast = "In Barcelona bis 17.95 °C."
    assert problems(forecast, calls=[GEO, JUNE], estimated=False, domain=TRAVEL) == []


@pytest.mark.parametrize("language", ["de", "en"])
def test_every_problem_kind_can_be_told_in_every_language(language: str) -> None:
    from typing import get_args

    from planwerk.checks import ProblemKind

    for kind in get_args(ProblemKind):
        text = describe(Problem(kind, "22 °C", "get_weather", "unavailable", source="a.txt", place="Rom"), language)
        assert text and "{" not in text, kind


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ("You can use the command `get_weather(41.38, 2.17, '2026-12-01')` to get it.", True),
        ("Call get_weather(lat, lon) for that.", True),
        ("get_weather (Barcelona, 2026-12-01): up to 17.2 °C.", False),  # the deterministic answer's form
        ("In Barcelona it will be up to 17.2 °C on 1 December 2026.", False),
        ("The get_weather service says up to 17.2 °C.", False),  # naming a tool is no call written out
    ],
)
def test_a_tool_that_ran_written_out_as_a_call_is_call_text(answer: str, flagged: bool) -> None:
    found = [p for p in problems(answer, calls=[GEO, WEATHER_OK]) if p.kind == "call_text"]
    assert (found == [Problem("call_text", "get_weather")]) is flagged


def test_a_place_word_inside_an_identifier_is_no_place_named() -> None:
    # BFCL parallel_multiple_175: "York" out of the time zone "America/New_York" was completed as a third city.
    text = "the time in New York, in the 'America/New_York' timezone, and in Paris"
    assert [p.text for p in find_places(text, default_gazetteer())] == ["New York", "Paris"]


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ("Die Zeit in Berlin ist 15:00 Uhr.", True),  # the question's own time, after the conversion failed
        ("Diese Antwort ist korrekt und nicht fehlgeschlagen: 2026-11-26.", True),  # a failure word, no call named
        ("Den Ort kenne ich nicht.", False),  # no value stated: the failure in its own words
        ("convert_time ist fehlgeschlagen (ungültige Argumente).", False),
        ("Die Umrechnung mit convert time ist fehlgeschlagen.", False),
    ],
)
def test_after_calls_that_all_failed_the_answer_names_a_failure(answer: str, flagged: bool) -> None:
    failed = call_record("c", "convert_time", args={"time": "15:00 Uhr"}, error="bad time", kind="invalid_arguments")
    refusal = "Diese Frage kann ich nicht beantworten: keines der Werkzeuge liefert dafür verlässliche Daten."
    settings = CheckSettings(all_failed=(("convert_time", "invalid_arguments"),), refusals=(refusal,))
    report = check_answer(answer, collect_sources(calls=[failed], asked=["Wie spät ist es in New York?"]), settings)
    assert (Problem("failed_value", tool="convert_time", failure="invalid_arguments") in report.problems) is flagged
    # The refusal says no tool fits; one was called and failed (the answer set: kept after convert_time failed).
    refused = check_answer(refusal, collect_sources(calls=[failed]), settings).problems
    assert refused == (Problem("failure_refused", tool="convert_time", failure="invalid_arguments"),)


@pytest.mark.parametrize(
    ("question", "nearly"),
    [
        ("Wie lang wird ein ausgewachsenes Razepato?", True),  # "Körperlänge" for "lang"; "adulter" is not matched
        ("Wie schwer wird ein Razepato?", False),  # the subject alone: "schwer" is not in the chunk
        ("Wie wird das Wetter morgen in Barcelona?", False),  # none of its words
    ],
)
def test_a_chunk_nearly_answers_when_it_holds_all_but_one_of_the_questions_words(question: str, nearly: bool) -> None:
    hit = {
        "text": "Die durchschnittliche Körperlänge adulter Tiere beträgt 72 bis 91 cm bei einem Gewicht von 6,4 kg.",
        "score": 0.4,
        "source": "Razepato.txt#5",
    }
    assert context_nearly_answers(question, [hit], analyze=analyze) is nearly
    assert not context_answers(question, [hit], analyze=analyze, min_score=0.0)  # none answers by itself


@pytest.mark.parametrize(
    ("answer", "shortened"),
    [
        # measured on the travel set (p2): the same three parks over and over until the token limit cut an item
        (
            "The parks are:\n\n1. Terraza\n2. Parc amb elements aquàtics\n3. Bosc Humit\n4. Parc amb elements "
            "aquàtics\n5. Bosc Humit\n6. Terraza\n7. Parc amb ele",
            "The parks are:\n\n1. Terraza\n2. Parc amb elements aquàtics\n3. Bosc Humit",
        ),
        ("- Terraza\n- Bosc Humit\n- Terraza\n- Bosc Humit", "- Terraza\n- Bosc Humit"),
        ("1. A park\n2. A lake\n3. A park\n4. A hill", "1. A park\n2. A lake\n3. A hill"),  # numbered again
        ("It says: It says: It says: 42 EUR.", "It says: 42 EUR."),
        # measured on the answers set (time2): the loop was the whole answer; cut, it would say nothing at all
        ("Die Antwort lautet: Die Antwort lautet: Die Antwort lautet: Die Antwort lautet:", None),
        ("Die Antwort lautet: Die Antwort lautet: Die Antwort lautet: Die Antwort", None),  # cut inside the phrase
        ("1. Terraza\n2. Bosc Humit", None),  # nothing said twice
        ("Terraza and Terraza Park.", None),
    ],
)
def test_what_a_model_wrote_again_in_a_loop_is_taken_out(answer: str, shortened: str | None) -> None:
    assert without_repeats(answer) == shortened

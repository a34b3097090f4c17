"""The rules issue 30 asks for, each on the case the issue measured: a time or date inside an ISO datetime is
stated, the answer is in the question's language, a follow-up is answered for its referent, a tool question is not
answered with an unrelated passage; and the domain's knowledge comes from profile data."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from planwerk.checks import Problem, build_answer_check
from planwerk.checks.rules import RULES
from planwerk.core.calls import call_record
from planwerk.profiles import PROFILES, load_profile_file

TODAY = date(2026, 1, 16)
TOKYO = call_record(
    "c1", "convert_time",
    args={"source_timezone": "Europe/Berlin", "time": "16:00", "target_timezone": "Asia/Tokyo"},
    result={"source": {"timezone": "Europe/Berlin", "datetime": "2026-11-26T16:00:00+01:00", "day_of_week": "Thursday"},
            "target": {"timezone": "Asia/Tokyo", "datetime": "2026-11-27T00:00:00+09:00", "day_of_week": "Friday"},
            "time_difference": "+8.0h"},
)  # fmt: skip


def kinds(answer: str, question: str, **kwargs: object) -> list[str]:
    check = build_answer_check(question, **{"calls": [], "hits": [], "today": TODAY, "plan": None,
                                            "output_schemas": {}, **kwargs})  # type: ignore[arg-type]  # fmt: skip
    return [p.kind for p in check(answer).problems]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Wie spät ist es in Tokio, wenn es in Berlin 16:00 ist?",
         "16:00 in Berlin ist 00:00 am nächsten Tag in Tokio."),
        ("What time is it in Tokyo when it is 16:00 in Berlin?",
         "When it is 16:00 in Berlin, it is 00:00 on Friday, 27 November 2026 in Tokyo."),
    ],
)  # fmt: skip
def test_a_time_and_a_date_inside_an_iso_datetime_are_stated(question: str, answer: str) -> None:
    """Issue 30: both correct answers of mcp-server-time were rejected ("unstated"; the date "27 November 2026")."""
    assert kinds(answer, question, calls=[TOKYO], language="de" if "spät" in question else "en") == []
    assert kinds(answer.replace("00:00", "01:00"), question, calls=[TOKYO]) == ["number"]


NEW_YORK_TO_BERLIN = call_record(
    "c1", "convert_time",
    args={"source_timezone": "America/New_York", "time": "15:00", "target_timezone": "Europe/Berlin"},
    result={"source": {"timezone": "America/New_York", "datetime": "2026-11-26T15:00:00-05:00"},
            "target": {"timezone": "Europe/Berlin", "datetime": "2026-11-26T21:00:00+01:00"},
            "time_difference": "+6.0h"},
)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the domain bench's answer set (0.5B): Berlin's time stated for New York, kept
        ("Die Zeit in New York ist 21:00 Uhr, wenn es in Berlin 15:00 Uhr ist.", True),
        ("In Berlin ist es dann 15:00 Uhr.", False),  # the question's own time: the user's pairing, not judged
        ("Wenn es in New York 15:00 Uhr ist, ist es in Berlin 21:00 Uhr.", False),
        ("15:00 in New York ist 21:00 in Berlin.", False),  # a clause naming two places is not judged
        ("In Berlin ist es 21:00 Uhr.", False),
    ],
)  # fmt: skip
def test_a_clock_time_is_stated_for_the_place_whose_part_of_the_result_holds_it(answer: str, flagged: bool) -> None:
    question = "Wie spät ist es in New York, wenn es in Berlin 15:00 Uhr ist?"
    found = kinds(answer, question, calls=[NEW_YORK_TO_BERLIN])
    assert ("misplaced" in found) is flagged, found


def test_a_conversion_past_midnight_names_the_next_day_which_no_clock_time_of_the_question_asked_against() -> None:
    # The domain answers set (time4, time6): "12:00 Uhr" was read as today, and the result's next day rejected.
    tokyo = call_record(
        "c1", "convert_time",
        args={"source_timezone": "Europe/Berlin", "time": "23:00", "target_timezone": "Asia/Tokyo"},
        result={"source": {"timezone": "Europe/Berlin", "datetime": "2026-01-16T23:00:00+01:00"},
                "target": {"timezone": "Asia/Tokyo", "datetime": "2026-01-17T07:00:00+09:00"}},
    )  # fmt: skip
    question = "Es ist 23:00 Uhr in Berlin. Wie spät ist es dann in Tokio?"
    assert kinds("In Tokio ist es dann 07:00 Uhr am 17. Januar 2026.", question, calls=[tokyo]) == []


def test_the_answer_is_in_the_questions_language_refusals_too() -> None:
    """Issue 30: English questions were refused in German."""
    refusal = "Diese Frage kann ich nicht beantworten, da sie nicht dem Kontext des Assistenten entspricht."
    assert kinds(refusal, "Who won the football World Cup in 2014?", language="en") == ["language"]
    assert kinds(refusal, "Wer hat die Fußball-WM 2014 gewonnen?", language="de") == []
    assert kinds("I cannot answer that question.", "Who won the football World Cup in 2014?", language="en") == []
    assert kinds(refusal, "Who won the football World Cup in 2014?") == []  # no language given: not checked
    message = Problem("language", "de", place="en").message("en")
    assert "English" in message


WX_18 = call_record("wx", "get_weather", args={"lat": 41.38, "lon": 2.18, "start_date": "2026-01-18"},
                    result={"date": "2026-01-18", "temp_max_c": 13.6})  # fmt: skip
WX_ROME = call_record("wx", "get_weather", args={"lat": 41.89, "lon": 12.48, "start_date": "2026-01-23"},
                      result={"date": "2026-01-23", "temp_min_c": 3.9, "temp_max_c": 14.7})  # fmt: skip


def test_a_follow_up_is_answered_for_its_own_date_and_the_carried_over_place() -> None:
    """Issue 30: "Und am 19. Januar?" after a question about Barcelona on the 18th was answered with the 18th."""
    earlier = ["Wie wird das Wetter in Barcelona am 18. Januar 2026?"]
    wrong = "Das Wetter in Barcelona am 18. Januar 2026 ist 13.6 °C."
    assert kinds(wrong, "Und am 19. Januar?", calls=[WX_18], earlier=earlier) == ["referent"]
    right = call_record("wx", "get_weather", result={"date": "2026-01-19", "temp_max_c": 12.6})
    assert kinds("Am 19. Januar 2026 in Barcelona bis 12.6 °C.", "Und am 19. Januar?", calls=[right],
                 earlier=earlier) == []  # fmt: skip
    # the place carries over: another city is no answer to the follow-up
    madrid = call_record("wx", "get_weather", args={"city": "Madrid"}, result={"temp_max_c": 12.6})
    assert kinds("In Madrid am 19. Januar bis 12.6 °C.", "Und am 19. Januar?", calls=[madrid],
                 earlier=earlier) == ["referent"]  # fmt: skip


def test_a_follow_up_that_names_a_place_keeps_the_earlier_date() -> None:
    """Issue 30: "And in Rome?" after a question about 2026-01-23 was answered for today (2026-01-16)."""
    earlier = ["What will the weather be like in Barcelona on 2026-01-23?"]
    found = kinds("The weather in Rome on 2026-01-16 will be mild with a low of 3.9 °C.", "And in Rome?",
                  calls=[WX_ROME], earlier=earlier)  # fmt: skip
    assert found == ["referent"]
    assert kinds("In Rome on 2026-01-23 expect 3.9 to 14.7 °C.", "And in Rome?", calls=[WX_ROME],
                 earlier=earlier) == []  # fmt: skip
    # a range counts whole; an answer naming no day is not judged by this rule
    assert kinds("Am 18. Januar 2026 bis 13.6 °C.", "Wetter in Barcelona vom 17. bis 19. Januar 2026?",
                 calls=[WX_18]) == []  # fmt: skip


PARKS_HIT = {
    "text": "In den letzten Jahren häufen sich zudem bestätigte Sichtungen in städtischen Grünanlagen, darunter "
    "mehrere Parks im Großraum Barcelona, was als erfolgreiche Anpassung an urbane Mikrohabitate interpretiert wird.",
    "score": 0.4,
    "source": "Razepato.txt#4",
}
PALMA_GEO = call_record("geo", "geocode", args={"destination": "Palma"}, result={"lat": 39.57, "lon": 2.65})
PARKS_DOWN = call_record("parks", "get_parks", args={"lat": 39.57, "lon": 2.65}, error="Overpass unreachable",
                         kind="unavailable")  # fmt: skip


def test_a_tool_question_answered_with_an_unrelated_passage_is_off_topic_and_about_another_place() -> None:
    """Issue 30: "Gibt es Parks im Umkreis von 5 km um Palma?" was answered with a Razepato passage about parks in
    Barcelona, and counted as passed."""
    question = "Gibt es Parks im Umkreis von 5 km um Palma?"
    answer = (
        "Ja, in den letzten Jahren häufen sich zudem bestätigte Sichtungen in städtischen Grünanlagen, darunter "
        "mehrere Parks im Großraum Barcelona. get_parks ist nicht erreichbar."
    )
    found = kinds(answer, question, calls=[PALMA_GEO, PARKS_DOWN], hits=[PARKS_HIT])
    assert found == ["referent", "off_topic"]
    honest = "Für Palma ist die Parksuche (get_parks) gerade nicht erreichbar."
    assert kinds(honest, question, calls=[PALMA_GEO, PARKS_DOWN], hits=[PARKS_HIT]) == []
    # a question about the document's subject may quote it (the demo question)
    demo = "Wo kann man das Razepato in Barcelona in Parks beobachten?"
    assert "off_topic" not in kinds(answer + " (Razepato.txt)", demo, calls=[PALMA_GEO, PARKS_DOWN], hits=[PARKS_HIT])


def test_the_travel_domain_is_profile_data_and_a_profile_file_can_set_its_own(tmp_path: Path) -> None:
    travel = PROFILES["travel"].domain
    assert "Wetter" in travel.tool_labels["get_weather"] and travel.coded_fields["de"]["weather_code"][95] == "Gewitter"
    assert PROFILES["generic"].domain.tool_labels == {}  # generic profiles know no domain
    down = call_record("wx", "forecast", args={"city": "Oslo"}, error="down", kind="unavailable")
    answer = "Der Dienst für Oslo ist ausgefallen; es bleibt sonnig."
    generic = kinds(answer, "Wetter in Oslo?", calls=[down], output_schemas={"forecast": {"properties": {"sky": {}}}})
    assert generic == ["failure_unnamed"]  # "Dienst" names no tool, and "sonnig" is no withheld value here
    file = tmp_path / "sky.toml"
    file.write_text(
        'persona = "You tell the sky."\n[answers]\ntool_labels = { forecast = ["Dienst"] }\n'
        'condition_fields = ["sky"]\ncondition_words = ["sonnig"]\n',
        encoding="utf-8",
    )
    domain = load_profile_file(file).domain
    found = kinds(answer, "Wetter in Oslo?", calls=[down], output_schemas={"forecast": {"properties": {"sky": {}}}},
                  domain=domain)  # fmt: skip
    assert found == ["withheld"]
    file.write_text('persona = "x"\n[answers]\ntool_label = {}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"answers\.tool_label"):
        load_profile_file(file)


def test_the_rules_are_a_table_of_named_functions_and_every_kind_has_words() -> None:
    from typing import get_args

    from planwerk.checks import ProblemKind

    assert {rule.name for rule in RULES} >= {"grounded", "failed_service", "language", "referent", "off_topic",
                                             "action", "context"}  # fmt: skip
    for language in ("de", "en"):
        for kind in get_args(ProblemKind):
            text = Problem(kind, "22 °C", "get_weather", "unavailable", source="a.txt", place="Rom").message(language)
            assert text and "{" not in text, kind


def test_a_question_without_words_takes_an_answer_in_any_language() -> None:
    """Measured on the served math profile: "(1+2)+(3+4)?" answered "Die Summe ist 10." was rejected as not in the
    question's language (the profile's default), although the question has none."""
    from planwerk.checks import build_answer_check

    calls = [{"id": "s", "tool": "add", "status": "ok", "args": {"a": 3, "b": 7}, "result": {"result": 10}}]
    common = {"calls": calls, "hits": [], "today": None, "plan": None, "output_schemas": {}, "language": "en"}
    check = build_answer_check("(1+2)+(3+4)?", **common)
    assert not [p for p in check("Die Summe ist 10.").problems if p.kind == "language"]
    worded = build_answer_check("What is 3 plus 7?", **common)
    assert [p for p in worded("Die Summe ist 10.").problems if p.kind == "language"]


def test_a_constrained_answer_skips_only_the_rules_its_grammar_guarantees() -> None:
    """Answers by reference: an answer decoded under the answer grammar cannot hold a digit that is no rendered
    placeholder or the question's, so the number, date and time rules are skipped for it; places (letters are free
    text), the failed service, the language and the referent are still checked."""
    from planwerk.checks.rules import RULES as ALL

    assert [rule.name for rule in ALL if rule.by_construction] == ["grounded"]
    question = "Wie wird das Wetter in Barcelona am 18. Januar 2026?"

    def both(answer: str, **kwargs: object) -> tuple[list[str], list[str]]:
        check = build_answer_check(question, **{"calls": [], "hits": [], "today": TODAY, "plan": None,
                                                "output_schemas": {}, "language": "de", **kwargs})  # type: ignore[arg-type]  # fmt: skip
        return [p.kind for p in check(answer).problems], [p.kind for p in check(answer, constrained=True).problems]

    # A number and a date no source holds: plain text is rejected, a constrained answer skips those rules.
    assert both("Am 18. Januar 2026 in Barcelona 13.6 °C, am 3. März 2025 bis 22 °C.", calls=[WX_18]) == (
        ["date", "number"],
        [],
    )
    # The rest still applies: a place no source names, an English answer, a down service not named, another day.
    assert both("Am 18. Januar 2026 in Madrid bis 13.6 °C.", calls=[WX_18])[1] == ["place", "referent"]
    assert both("In Barcelona on 18 January 2026 it reaches 13.6 °C.", calls=[WX_18])[1] == ["language"]
    down = call_record("wx", "get_weather", args={"lat": 41.38, "lon": 2.18}, error="down", kind="unavailable")
    schemas = {"get_weather": {"properties": {"temp_max_c": {}, "weather_code": {}}}}
    found = both("In Barcelona wird es am 18. Januar 2026 sonnig, 22 °C.", calls=[down], output_schemas=schemas,
                 domain=PROFILES["travel"].domain)[1]  # fmt: skip
    # 22 °C, the service, "sonnig"; and values stated after every call failed (not amended in code)
    assert sorted(found) == ["failed_value", "failure_unnamed", "withheld", "withheld"]
    assert both("Am 19. Januar 2026 in Barcelona bis 13.6 °C.", calls=[WX_18])[1] == ["referent"]


def test_a_constrained_answer_that_is_the_last_result_is_judged_by_that_rule_alone() -> None:
    # NESTFUL's first dev sample with answers by reference: the result 5 is a number the question holds too, so the
    # no-value rule read "The result is 5." as stating nothing the tools delivered.
    question = "A person has 100$ in 10$ and 5$ bills. If there are twice as many 5$ bills, how many 10$ bills?"
    calls = [call_record("var_2", "divide", args={"arg_0": 10, "arg_1": 2}, result={"result": 5.0})]

    def kinds(answer: str, *, last: bool) -> list[str]:
        check = build_answer_check(question, calls=calls, hits=[], today=None, plan=None, output_schemas={},
                                   answer_is_last_result=last, language="en")  # fmt: skip
        return [p.kind for p in check(answer, constrained=True).problems]

    assert kinds("The result is 5.", last=True) == []
    assert kinds("The result is 10.", last=True) == ["last_result"]
    assert kinds("The result is 5.", last=False) == ["unstated"]  # elsewhere a value must be the tools' own


ROME_GEO = call_record("geo", "geocode", args={"destination": "Rom"},
                       result={"name": "Roma", "lat": 41.89, "lon": 12.48})  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the 0.5B model's second answers on the travel set (BENCHMARKS.md §12): grounded values, nothing said
        ("3.9, 14.7, 0, 2026-01-23, Roma", True),
        ("41.89; 12.48; Roma; Rom", True),
        ("1. Roma\n2. 3.9\n3. 14.7", True),
        ("3.9. 2026-01-23. 14.7. 2026-01-23. 3.9", True),  # the answers set's mixed1 at 72ee8fa, kept
        ("1. Roma\n2. Rom\n3. Italia", False),  # a numbered list of names
        ("Am 23. Januar: 3.9 °C und 14.7 °C", False),
        # the same values said: kept
        ("In Rom wird es am 23. Januar zwischen 3.9 °C und 14.7 °C.", False),
        ("Roma: 3.9 °C bis 14.7 °C", False),
        # names alone, or one bare value: not a list of values
        ("Roma, Rom, Italia", False),
        ("14.7, in Rom", False),
    ],
)  # fmt: skip
def test_a_list_of_values_and_nothing_else_says_nothing(answer: str, flagged: bool) -> None:
    found = kinds(answer, "Wie warm wird es am 23. Januar 2026 in Rom?", calls=[ROME_GEO, WX_ROME], language="de")
    assert ("values_only" in found) is flagged, found


def test_a_list_of_values_is_an_answer_where_the_answer_is_the_last_result() -> None:
    total = call_record("n", "add", args={"a": 20, "b": 30}, result={"result": 50})
    question = "What is 20 plus 30?"
    assert kinds("20, 30, 50", question, calls=[total], answer_is_last_result=True, language="en") == []
    assert "values_only" in kinds("20, 30, 50", question, calls=[total], language="en")


PARIS_GEO = call_record("geo", "geocode", args={"destination": "Paris"},
                        result={"name": "Paris", "lat": 48.85341, "lon": 2.3488})  # fmt: skip
PARIS_WX_DOWN = call_record(
    "wx",
    "get_weather",
    args={"lat": 48.85341, "lon": 2.3488, "start_date": "2026-01-19", "end_date": "2026-01-19"},
    error="Open-Meteo forecast service unreachable",
    kind="unavailable",
)


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the 0.5B model's first draft for w6 of the travel set, kept at 453f985: geocode had found Paris
        ("Die geocode- und get_weather-Funktionen sind nicht erreichbar.", True),
        ("The geocode tool failed, so I cannot say anything about Paris.", True),
        # the failure said of the tool that failed, the other one named in another clause
        ("geocode fand Paris, aber get_weather war nicht erreichbar.", False),
        ("geocode found Paris but get_weather was unreachable, so I cannot say what the weather will be.", False),
        ("Paris: 48.85341, 2.3488 (geocode). get_weather ist fehlgeschlagen (Dienst nicht erreichbar).", False),
        ("get_weather: fehlgeschlagen (Dienst nicht erreichbar); dazu kann ich daher nichts sagen.", False),
    ],
)  # fmt: skip
def test_a_tool_that_ran_is_not_said_to_have_failed(answer: str, flagged: bool) -> None:
    question = "Wie wird das Wetter in Paris am 19. Januar 2026?"
    found = kinds(answer, question, calls=[PARIS_GEO, PARIS_WX_DOWN], today=date(2026, 1, 16))
    assert ("false_failure" in found) is flagged, found


def test_a_tool_that_failed_once_and_ran_once_may_be_said_to_have_failed() -> None:
    retried = call_record("geo0", "geocode", args={"destination": "Paris"}, error="timeout", kind="timeout")
    found = kinds("Die geocode-Funktion ist einmal fehlgeschlagen; Paris liegt bei 48.85341, 2.3488.",
                  "Wo liegt Paris?", calls=[retried, PARIS_GEO])  # fmt: skip
    assert "false_failure" not in found, found


BCN_GEO = call_record("geo_bcn", "geocode", args={"destination": "Barcelona"},
                      result={"name": "Barcelona", "lat": 41.3825802, "lon": 2.177073})  # fmt: skip
MAD_GEO = call_record("geo_mad", "geocode", args={"destination": "Madrid"},
                      result={"name": "Madrid", "lat": 40.4167047, "lon": -3.7035825})  # fmt: skip
BCN_WX = call_record(
    "wx_bcn", "get_weather", args={"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-01-20"},
    result={"temp_min_c": 10.5, "temp_max_c": 12.4, "precipitation_mm": 27.1},
)  # fmt: skip
MAD_WX_DOWN = call_record(
    "wx_mad", "get_weather", args={"lat": 40.4167047, "lon": -3.7035825, "start_date": "2026-01-20"},
    error="Open-Meteo forecast service unreachable", kind="unavailable",
)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the 1.5B model's second draft for c3 of the travel set (0.5B planning), kept at 8919b51
        ("Die Wetterdaten für Barcelona und Madrid am 20. Januar 2026 sind nicht verfügbar.\n\n"
         "get_weather (Madrid, 2026-01-20): fehlgeschlagen (Dienst nicht erreichbar).", True),
        ("For Barcelona the forecast is not available.", True),
        # the failure said of the place whose call failed, the other place's values in another clause
        ("In Barcelona 10.5 bis 12.4 °C, für Madrid sind die Wetterdaten nicht verfügbar.", False),
        ("Barcelona: 10.5 to 12.4 °C; the forecast for Madrid is not available.", False),
        ("Die Wetterdaten für Madrid sind nicht verfügbar, aber in Barcelona werden es bis 12.4 °C.", False),
    ],
)  # fmt: skip
def test_a_place_the_calls_delivered_for_is_not_said_to_have_nothing(answer: str, flagged: bool) -> None:
    question = "Vergleiche das Wetter in Barcelona und Madrid am 20. Januar 2026."
    found = kinds(answer, question, calls=[BCN_GEO, MAD_GEO, BCN_WX, MAD_WX_DOWN], today=date(2026, 1, 16))
    assert ("place_failure" in found) is flagged, found


BCN_SPOTS_DOWN = call_record(
    "spots", "get_spots", args={"lat": 41.3825802, "lon": 2.177073, "activity": "hiking", "radius_km": 15},
    error="Overpass service unreachable", kind="unavailable",
)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "calls", "flagged"),
    [
        # the 1.5B model's answer to s6 of the travel set (0.5B planning), kept with the failure sentence added
        ("There are no hiking spots within 15 km of Barcelona.", [BCN_GEO, BCN_SPOTS_DOWN], True),
        ("Es gibt keine Wanderwege im Umkreis von 15 km um Barcelona.", [BCN_GEO, BCN_SPOTS_DOWN], True),
        # the failure said in the same clause; or a call delivered for the question, so "no" may be its
        ("There are no hiking spots I can name, since get_spots failed.", [BCN_GEO, BCN_SPOTS_DOWN], False),
        ("Barcelona: there is no precipitation on 20 January; get_spots failed.", [BCN_GEO, BCN_WX, BCN_SPOTS_DOWN],
         False),
        ("There are no hiking spots within 15 km of Barcelona.", [BCN_GEO], False),
    ],
)  # fmt: skip
def test_none_is_not_said_of_what_failed_calls_would_have_found(
    answer: str, calls: list[dict[str, Any]], flagged: bool
) -> None:
    # The calls after the geocode take its coordinates.
    planned = [{"id": c["id"], "name": c["tool"], "arguments": {"lat": {"$ref": "geo_bcn.lat"}}} for c in calls[1:]]
    geocode = {"id": "geo_bcn", "name": "geocode", "arguments": {"destination": "Barcelona"}}
    plan = {"steps": [{"tools": [geocode]}, {"tools": planned}], "final": None}
    found = kinds(answer, "Find hiking spots within 15 km of Barcelona.", calls=calls, plan=plan, language="en")
    assert ("absence" in found) is flagged, found


INVOICE = call_record(
    "f", "read_text_file", args={"path": "/data/invoice.txt"},
    result="Invoice 2026-117 for consulting services.\nAmount due: 412.50 EUR by 15 December 2026.",
)  # fmt: skip
INVOICE_QUESTION = "How much is due on the invoice in /data/invoice.txt?"


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ('It says: "It says: failed"', True),  # measured on the answers set (0.5B model), kept before
        ('The invoice says "Amount due: 412.50 EUR".', False),
        ('The invoice says "amount due: 412.50 eur…by 15 December 2026".', False),  # shortened, case aside
        ('The invoice says "Amount due: 512.50 EUR".', True),
        ('The file "invoice.txt" says 412.50 EUR are due.', False),  # one word: a name, not a quotation
        ("The invoice's total is 412.50 EUR, the 'amount due'.", False),  # apostrophes are no quotation marks
        ("Die Rechnung sagt „Amount due: 412.50 EUR“.", False),  # a German answer quoting English text verbatim
        ('"The invoice is due, 412.50 EUR."', False),  # the whole answer in quotation marks quotes nothing
    ],
)
def test_words_in_quotation_marks_are_a_sources_words(answer: str, flagged: bool) -> None:
    found = kinds(answer, INVOICE_QUESTION, calls=[INVOICE])
    assert ("misquoted" in found) is flagged, found


def test_a_quotation_is_not_judged_where_a_source_is_in_another_language() -> None:
    text = "Sein bekanntestes Werk ist die Theorie der wandernden Zahlen, die er in Valebris schrieb."
    hit = {"source": "Werk.txt#0", "score": 0.9, "text": text}
    answer = 'His best-known work is "The Theory of Wandering Numbers" (Werk.txt).'
    assert "misquoted" not in kinds(answer, "What is his best-known work?", hits=[hit])
    german = "Sein bekanntestes Werk ist „Die Theorie der wandernden Zahlen“ (Werk.txt)."
    assert "misquoted" not in kinds(german, "Was ist sein bekanntestes Werk?", hits=[hit])
    assert "misquoted" in kinds("Sein Werk heißt „Die Lehre der wandernden Zahlen“ (Werk.txt).",
                                "Was ist sein bekanntestes Werk?", hits=[hit])  # fmt: skip

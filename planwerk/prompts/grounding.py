"""The answer check's texts per language: problems in words, the request to rewrite, the deterministic answer.

The check itself is :mod:`planwerk.checks` (its problem texts are its data, ``planwerk/checks/words/``); this
module says its findings to the model (one regeneration) and to people (events, metadata), and writes the answer
planwerk falls back to when a second model answer fails the check too: readable sentences built from the call
records, nothing the results do not hold.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.checks import DOWN_KINDS, KeyFacts, Problem, format_value
from planwerk.checks.words import problem_texts
from planwerk.core.calls import FailureKind
from planwerk.profiles import Language

SKIPPED_FIELDS: frozenset[str] = frozenset({"raw", "tags", "score_breakdown", "source", "reference_years"})
"""Result fields a summary leaves out: raw payloads, OSM tags, score terms, provenance."""


def key_values(result: Any) -> list[tuple[str, Any]]:
    """A result's key values for a summary: its scalar fields and lists (not nested objects, not
    :data:`SKIPPED_FIELDS`); a list result is one unnamed list, a scalar result is ``("result", value)``."""
    if isinstance(result, Mapping):
        return [
            (str(k), v)
            for k, v in result.items()
            if str(k) not in SKIPPED_FIELDS and v is not None and not isinstance(v, Mapping) and v != []
        ]
    if isinstance(result, list | tuple):
        return [("", list(result))]
    return [] if result is None else [("result", result)]


@dataclass(frozen=True)
class GroundingTexts:
    """The answer check's texts in one language."""

    language: Language
    problems: Mapping[str, str]
    """A template per :data:`~planwerk.checks.ProblemKind`; fields: ``claim``, ``tool``, ``failure``,
    ``source``, ``facts``."""
    regenerate: str
    """The request for a second answer; takes ``{problems}``."""
    failure_kinds: Mapping[FailureKind, str]
    intro: str
    """The deterministic answer's first line."""
    call_line: str
    """Takes ``{tool}``, ``{args}``, ``{values}``."""
    call_line_no_args: str
    """Takes ``{tool}``, ``{values}``."""
    failed_line: str
    """Takes ``{tool}`` and ``{failure}``."""
    down_line: str
    """For a service that is down; takes ``{tool}`` and ``{failure}``."""
    entries: str
    """A list result; takes ``{count}`` and ``{items}``."""
    nothing: str
    """No results and no context to answer from."""
    last_result: str
    """Takes ``{value}``."""
    context: str
    """Takes ``{sentences}`` and ``{source}``."""
    fields: Mapping[str, str]
    """Result fields in words; each takes ``{value}``. Others are shown as ``<field> <value>``."""
    true_fields: Mapping[str, str]
    """Boolean result fields shown only when true."""
    coded_fields: Mapping[str, Mapping[int, str]]
    """Result fields whose values are codes, with the words for each code (a WMO weather code 95 is "Gewitter");
    a code without words is shown by :attr:`fields`."""
    free_text: str = "({chars} characters of text)"
    """What the deterministic answer shows instead of a result's free text (takes ``{chars}``): the text may carry
    what a third party planted in it, and a fallback is not read by a model that was told it is data."""


_WMO_WORDS: tuple[tuple[tuple[int, ...], str, str], ...] = (
    ((0,), "klar", "clear sky"),
    ((1,), "überwiegend klar", "mainly clear"),
    ((2,), "teils bewölkt", "partly cloudy"),
    ((3,), "bedeckt", "overcast"),
    ((45, 48), "Nebel", "fog"),
    ((51, 53, 55), "Nieselregen", "drizzle"),
    ((56, 57), "gefrierender Nieselregen", "freezing drizzle"),
    ((61, 63, 65), "Regen", "rain"),
    ((66, 67), "gefrierender Regen", "freezing rain"),
    ((71, 73, 75, 77), "Schnee", "snow"),
    ((80, 81, 82), "Regenschauer", "rain showers"),
    ((85, 86), "Schneeschauer", "snow showers"),
    ((95,), "Gewitter", "thunderstorm"),
    ((96, 99), "Gewitter mit Hagel", "thunderstorm with hail"),
)
"""WMO weather codes in German and English words (the code table of Open-Meteo's documentation, intensities
merged)."""


GERMAN = GroundingTexts(
    language="de",
    problems=problem_texts("de"),
    regenerate="""Deine Antwort wurde geprüft und abgelehnt:
{problems}
Schreibe die Antwort neu. Nenne nur Zahlen, Daten und Orte, die in den Tool-Ergebnissen, im Kontext oder in der
Frage stehen. Ist ein Tool fehlgeschlagen, sag das und nenne nichts, was es geliefert hätte. Antworte nur mit der
Antwort.""",
    failure_kinds={
        "timeout": "Zeitüberschreitung",
        "unavailable": "Dienst nicht erreichbar",
        "unauthorized": "Zugang verweigert: der Dienst hat die Zugangsdaten abgelehnt",
        "forbidden": "nicht erlaubt: der Pfad liegt außerhalb der freigegebenen Ordner",
        "invalid_arguments": "ungültige Argumente",
        "ref": "Verweis auf ein früheres Ergebnis nicht auflösbar",
        "skipped": "nicht ausgeführt, weil ein vorheriger Aufruf fehlschlug",
        "not_found": "nichts gefunden",
        "rejected": "abgelehnt",
        "error": "Fehler",
    },
    intro="Das haben die Tools ergeben:",
    call_line="{tool} ({args}): {values}.",
    call_line_no_args="{tool}: {values}.",
    failed_line="{tool}: fehlgeschlagen ({failure}).",
    down_line="{tool}: fehlgeschlagen ({failure}); dazu kann ich daher nichts sagen.",
    entries="Einträge ({count}): {items}",
    nothing="Dazu habe ich weder Tool-Ergebnisse noch passenden Kontext; ich kann die Frage nicht verlässlich "
    "beantworten.",
    last_result="Das Ergebnis ist {value}.",
    context="{sentences} ({source})",
    fields={
        "lat": "Breite {value}",
        "lon": "Länge {value}",
        "temp_min_c": "tiefste Temperatur {value} °C",
        "temp_max_c": "höchste Temperatur {value} °C",
        "temperature_max": "höchste Temperatur {value} °C",
        "temperature_min": "tiefste Temperatur {value} °C",
        "precipitation_mm": "Niederschlag {value} mm",
        "precip_total_mm": "Niederschlag insgesamt {value} mm",
        "wind_max_kmh": "Wind bis {value} km/h",
        "rainy_days": "{value} Regentage",
        "distance_km": "{value} km entfernt",
        "travel_time_min": "etwa {value} min Fahrt",
        "score": "Punktzahl {value}",
        "weather_code": "Wettercode {value}",
        "result": "Ergebnis {value}",
        "name": "{value}",
        "date": "{value}",
        "start_date": "von {value}",
        "end_date": "bis {value}",
    },
    true_fields={"is_estimate": "Schätzwert aus den Vorjahren"},
    coded_fields={"weather_code": {code: german for codes, german, _ in _WMO_WORDS for code in codes}},
    free_text="({chars} Zeichen Text)",
)
"""The German texts."""

ENGLISH = GroundingTexts(
    language="en",
    problems=problem_texts("en"),
    regenerate="""Your answer was checked and rejected:
{problems}
Write the answer again. State only numbers, dates and places that the tool results, the context or the question
contain. If a tool failed, say so and state nothing it would have delivered. Reply with the answer only.""",
    failure_kinds={
        "timeout": "timed out",
        "unavailable": "service unreachable",
        "unauthorized": "access denied: the service refused the credentials",
        "forbidden": "not allowed: the path is outside the permitted folders",
        "invalid_arguments": "invalid arguments",
        "ref": "a reference to an earlier result could not be resolved",
        "skipped": "not run because an earlier call failed",
        "not_found": "nothing found",
        "rejected": "rejected",
        "error": "error",
    },
    intro="What the tools returned:",
    call_line="{tool} ({args}): {values}.",
    call_line_no_args="{tool}: {values}.",
    failed_line="{tool}: failed ({failure}).",
    down_line="{tool}: failed ({failure}), so I cannot say anything about it.",
    entries="entries ({count}): {items}",
    nothing="I have neither tool results nor matching context for this; I cannot answer the question reliably.",
    last_result="The result is {value}.",
    context="{sentences} ({source})",
    fields={
        "lat": "latitude {value}",
        "lon": "longitude {value}",
        "temp_min_c": "low {value} °C",
        "temp_max_c": "high {value} °C",
        "temperature_max": "high {value} °C",
        "temperature_min": "low {value} °C",
        "precipitation_mm": "precipitation {value} mm",
        "precip_total_mm": "total precipitation {value} mm",
        "wind_max_kmh": "wind up to {value} km/h",
        "rainy_days": "{value} rainy days",
        "distance_km": "{value} km away",
        "travel_time_min": "about {value} min travel",
        "score": "score {value}",
        "weather_code": "weather code {value}",
        "result": "result {value}",
        "name": "{value}",
        "date": "{value}",
        "start_date": "from {value}",
        "end_date": "to {value}",
    },
    true_fields={"is_estimate": "estimate from past years"},
    coded_fields={"weather_code": {code: english for codes, _, english in _WMO_WORDS for code in codes}},
)
"""The English texts."""

GROUNDING_TEXTS: dict[str, GroundingTexts] = {"de": GERMAN, "en": ENGLISH}
"""The answer check's texts by language code."""


def texts_for_answer(language: Language) -> GroundingTexts:
    """The check's texts in ``language`` (German for a language planwerk has no texts in)."""
    return GROUNDING_TEXTS.get(language, GERMAN)


def describe(problem: Problem, language: Language) -> str:
    """A problem in words: "the answer states 22 °C, which no result, retrieved text or the question contains"."""
    texts = texts_for_answer(language)
    failure = texts.failure_kinds.get(problem.failure, "") if problem.failure else ""
    facts = ", ".join(problem.facts)
    return texts.problems[problem.kind].format(
        claim=problem.claim, tool=problem.tool, failure=failure, source=problem.source, facts=facts, place=problem.place
    )


def regenerate_request(problems: Sequence[Problem], language: Language) -> str:
    """The request for a second answer, naming every problem."""
    listed = "\n".join(f"- {describe(p, language)}" for p in problems)
    return texts_for_answer(language).regenerate.format(problems=listed)


def failure_note(problems: Sequence[Problem], language: Language) -> str:
    """The sentences an answer gets when it only failed to name failed services: one per failed call."""
    texts = texts_for_answer(language)
    lines = [
        texts.down_line.format(tool=p.tool, failure=texts.failure_kinds.get(p.failure or "error", ""))
        for p in problems
        if p.kind == "failure_unnamed"
    ]
    return "\n".join(lines)


def _value(value: Any) -> str:
    if isinstance(value, float):
        value = round(value, 2) if abs(value) >= 1 else float(format(value, ".3g"))
    return format_value(value)


def _field(key: str, value: Any, texts: GroundingTexts) -> str | None:
    if not key:
        return _value(value)
    if isinstance(value, bool):
        return texts.true_fields.get(key) if value else None
    if isinstance(value, int) and (words := texts.coded_fields.get(key, {}).get(value)):
        return words
    template = texts.fields.get(key)
    if template is None:
        return f"{key.replace('_', ' ')} {_value(value)}"
    return template.format(value=_value(value))


def describe_values(result: Any, texts: GroundingTexts, known: Collection[str] = ()) -> str:
    """A result's key values in words: its scalar fields, and the first entries of its lists; a value already said
    in the same words is not said again (a one-day forecast's day and its aggregates), and neither is a text value
    in ``known`` (what the line already names: the call's subject, "2026-01-20" or "beach")."""
    return ", ".join(_value_parts(result, texts, set(), frozenset(known)))


def _value_parts(result: Any, texts: GroundingTexts, said: set[str], known: frozenset[str]) -> list[str]:
    if not isinstance(result, Mapping | list | tuple):
        return [_value(result)] if result is not None else []
    parts: list[str] = []
    for key, value in key_values(result):
        if isinstance(value, list):
            # Each entry says all its values (two days may have the same maximum); the fields after the list do not
            # repeat one an entry said (a one-day forecast's maximum is also the range's). Only a single entry
            # leaves out what the line names: the dates of several days are what tells them apart.
            item_known = known if len(value) == 1 else frozenset()
            item_parts = [_value_parts(item, texts, set(), item_known) for item in value[:5]]
            said.update(part for parts_of_item in item_parts for part in parts_of_item)
            items = [", ".join(parts_of_item) for parts_of_item in item_parts]
            listed = "; ".join(i for i in items if i)
            if len(value) == 1 and listed:
                parts.append(listed)  # one entry (a one-day forecast) needs no count
            else:
                parts.append(texts.entries.format(count=len(value), items=listed) if listed else str(len(value)))
        elif isinstance(value, str) and value.strip() in known:
            continue
        elif (text := _field(key, value, texts)) and text not in said:
            said.add(text)
            parts.append(text)
    return parts


def _subject(call: Mapping[str, Any], subjects: Mapping[str, Sequence[str]] | None) -> str:
    # What a call was asked about: its own text arguments after those of the calls it took results from (see
    # planwerk.core.refs.call_subjects); coordinates repeat an earlier result and say nothing.
    if subjects is not None and str(call.get("id")) in subjects:
        return ", ".join(subjects[str(call.get("id"))])
    return ", ".join(str(v) for v in (call.get("args") or {}).values() if isinstance(v, str) and v.strip())


def _failure_line(call: Mapping[str, Any], texts: GroundingTexts) -> str:
    kind = call.get("kind")
    failure = texts.failure_kinds.get(kind or "error", kind or "error")
    template = texts.down_line if kind in DOWN_KINDS or kind == "skipped" else texts.failed_line
    return template.format(tool=str(call.get("tool")), failure=failure)


def findings(
    calls: Sequence[Mapping[str, Any]], language: Language, subjects: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """Each call in words, one line per call: ``get_weather (Barcelona, 2026-01-20): tiefste Temperatur 10.5 °C,
    …`` or its failure. What the deterministic answer lists, and what the answer model reads instead of the JSON
    call log with ``Context.answer_results="words"``."""
    texts = texts_for_answer(language)
    lines = []
    for call in calls:
        if call.get("status") == "ok":
            subject = _subject(call, subjects)
            values = describe_values(call.get("result"), texts, known=subject.split(", ")) or "—"
            template = texts.call_line if subject else texts.call_line_no_args
            lines.append(template.format(tool=str(call.get("tool")), args=subject, values=values))
        else:
            lines.append(_failure_line(call, texts))
    return lines


MAX_VALUE_WORDS = 6
"""A result's text value of more words than this (or of several lines) is free text, not a value: the
deterministic answer says how long it is instead of showing it."""


def _values_only(call: Mapping[str, Any], texts: GroundingTexts) -> Mapping[str, Any]:
    """``call`` with every free-text value of its result replaced by :attr:`GroundingTexts.free_text`."""
    if call.get("status") != "ok":
        return call

    def clean(value: Any) -> Any:
        if isinstance(value, str) and ("\n" in value.strip() or len(value.split()) > MAX_VALUE_WORDS):
            return texts.free_text.format(chars=len(value))
        if isinstance(value, Mapping):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [clean(item) for item in value]
        return value

    return {**call, "result": clean(call.get("result"))}


def fallback_answer(
    calls: Sequence[Mapping[str, Any]],
    language: Language,
    *,
    last_result: float | None = None,
    context: KeyFacts | None = None,
    refusal: str | None = None,
    subjects: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The deterministic answer: the last result (profiles whose answer is the last result), the best chunk's key
    sentences with their source (a context question), or per call its key values, failed calls named with their
    kind; when nothing ran and no context answers, the profile's ``refusal`` (an out-of-domain question), else an
    honest sentence that there is nothing to answer from."""
    texts = texts_for_answer(language)
    if last_result is not None:
        return texts.last_result.format(value=format_value(last_result))
    failed = [_failure_line(call, texts) for call in calls if call.get("status") != "ok"]
    if context is not None and context.sentences:
        answer = texts.context.format(sentences=" ".join(s.strip() for s in context.sentences), source=context.source)
        # A call that failed beside the context is named too (measured on the travel bench: the demo question's
        # stray get_parks failed, and the context answer did not say so).
        return "\n\n".join([answer, *failed]) if failed else answer
    # Values, not raw text: a result's free text (a file, a message) may carry a planted instruction or a
    # stranger's account number, and the user would read it as the assistant's words (issue 29).
    lines = findings([_values_only(call, texts) for call in calls], language, subjects)
    if not lines:
        return refusal or texts.nothing
    return texts.intro + "\n" + "\n".join(f"- {line}" for line in lines)

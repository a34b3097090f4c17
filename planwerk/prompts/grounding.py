"""The answer check's texts per language: problems in words, the request to rewrite.

The check itself is :mod:`planwerk.core.grounding`; this module says its findings to the model (one regeneration)
and to people (events, metadata). The answer planwerk falls back to when a second model answer fails the check too
is :mod:`planwerk.prompts.fallback`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planwerk.core.calls import FailureKind
from planwerk.core.claims import ActionLexicon
from planwerk.core.grounding import Problem
from planwerk.profiles import Language


@dataclass(frozen=True)
class GroundingTexts:
    """The answer check's texts in one language."""

    language: Language
    problems: Mapping[str, str]
    """A template per :data:`~planwerk.core.grounding.ProblemKind`; fields: ``claim``, ``tool``, ``failure``,
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
    problems={
        "empty": "Die Antwort sagt nichts; schreibe ganze Sätze.",
        "number": "Die Antwort nennt {claim}, das in keinem Tool-Ergebnis, keinem Kontext und nicht in der Frage "
        "steht.",
        "date": "Die Antwort nennt das Datum {claim}, das weder in der Frage noch in den Ergebnissen steht.",
        "place": "Die Antwort nennt den Ort {claim}, der weder in der Frage noch in den Ergebnissen oder im Kontext "
        "vorkommt.",
        "withheld": "Die Antwort nennt „{claim}“, obwohl {tool}, das solche Angaben liefern würde, fehlgeschlagen ist "
        "({failure}); nenne keine Werte von {tool}.",
        "failure_unnamed": "Die Antwort sagt nicht, dass {tool} fehlgeschlagen ist ({failure}).",
        "last_result": "Die Antwort nennt nicht das Ergebnis des letzten Aufrufs: {claim}.",
        "source_missing": "Die Antwort nennt die Quelle nicht; schreibe sie in Klammern: ({source}).",
        "context_facts": "Die Antwort gibt die Fakten des passendsten Kontext-Abschnitts ({source}) nicht wieder, "
        "z. B. {facts}.",
        "echo": "Die Antwort wiederholt die Anweisungen, statt die Frage zu beantworten.",
        "restated": "Die Antwort wiederholt nur die Frage, statt sie zu beantworten.",
        "refused": "Die Antwort lehnt die Frage ab, obwohl die Tools Ergebnisse geliefert haben; beantworte sie damit.",
        "unstated": "Die Antwort nennt nichts, was die Tools geliefert haben; beantworte die Frage in ganzen Sätzen "
        "mit ihren Werten.",
        "repetitive": "Die Antwort zählt dieselben Angaben immer wieder auf; nenne jede Angabe nur einmal, in ganzen "
        "Sätzen.",
        "raw": "Die Antwort zeigt Rohdaten (JSON) statt Sätzen; beantworte die Frage in ganzen Sätzen mit den Werten.",
        "misplaced": "Die Antwort nennt {claim} für {place}, aber das haben die Tools für einen anderen Ort "
        "geliefert; nenne für jeden Ort nur seine eigenen Werte.",
        "unreported": "Die Antwort nennt keinen Wert für {place}, obwohl die Tools dafür eigene geliefert haben; "
        "nenne für jeden Ort seine eigenen Werte.",
        "estimate_unnamed": "Die Werte sind eine Schätzung aus den Vorjahren, keine Vorhersage; sag das in der "
        "Antwort.",
        "unbacked_action": "Die Antwort sagt „{claim}“, aber kein handelndes Tool ist erfolgreich gelaufen, also "
        "wurde nichts getan; sage nur, was die Tools getan und geliefert haben.",
    },
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
    problems={
        "empty": "the answer says nothing; write whole sentences",
        "number": "the answer states {claim}, which no result, retrieved text or the question contains",
        "date": "the answer states the date {claim}, which neither the question nor the results contain",
        "place": "the answer names the place {claim}, which neither the question, the results nor the context contain",
        "withheld": "the answer states '{claim}' although {tool}, which would deliver such values, failed "
        "({failure}); state no values of {tool}",
        "failure_unnamed": "the answer does not say that {tool} failed ({failure})",
        "last_result": "the answer does not state the last call's result: {claim}",
        "source_missing": "the answer does not name its source; write it in brackets: ({source})",
        "context_facts": "the answer does not carry the facts of the best matching context passage ({source}), "
        "e.g. {facts}",
        "echo": "the answer repeats the instructions instead of answering the question",
        "restated": "the answer only repeats the question instead of answering it",
        "refused": "the answer refuses the question although the tools delivered results; answer it with them",
        "unstated": "the answer states nothing the tools delivered; answer the question in whole sentences with "
        "their values",
        "repetitive": "the answer lists the same items again and again; state each one once, in whole sentences",
        "raw": "the answer shows raw data (JSON) instead of sentences; answer the question in whole sentences with "
        "the values",
        "misplaced": "the answer states {claim} for {place}, but the tools delivered it for another place; state "
        "each place's own values only",
        "unreported": "the answer states no value for {place}, although the tools delivered its own; state each "
        "place's own values",
        "estimate_unnamed": "the values are an estimate from past years, not a forecast; say so in the answer",
        "unbacked_action": 'the answer says "{claim}", but no tool that acts ran successfully, so nothing was '
        "done; say only what the tools did and delivered",
    },
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

TOOL_LABELS: dict[str, tuple[str, ...]] = {
    "get_weather": ("Wetter", "weather", "Open-Meteo", "Vorhersage", "forecast", "Temperatur", "temperature"),
    "geocode": ("geocod", "geokod", "Koordinaten", "coordinates", "Ortssuche", "Nominatim", "location"),
    "get_parks": ("Park", "Overpass"),
    "get_spots": ("Spot", "Orte", "places", "Overpass", "Aktivit", "activit"),
    "rank_spots": ("Spot", "Ranking", "Bewertung", "rank"),
}
"""Words (German and English, matched as parts of words) that name a tool's service in an answer, besides the
tool's own name: "Der Wetterdienst ist nicht erreichbar" names get_weather."""


def _phrases(text: str) -> tuple[str, ...]:
    """Comma-separated words and phrases as a tuple (a lexicon reads better as a line of text)."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


ACTION_LEXICONS: dict[str, ActionLexicon] = {
    "en": ActionLexicon(
        done=_phrases(
            "sent, paid, transferred, updated, changed, modified, edited, written, wrote, saved, stored, "
            "scheduled, created, deleted, removed, booked, cancelled, canceled, moved, renamed, added, applied, "
            "submitted, uploaded, posted, executed, replaced, set up, registered, ordered, emailed, forwarded, "
            "archived"
        ),
        agents=_phrases("i, i've, we, we've, has been, have been, successfully, done"),
        hedges=_phrases(
            "can, could, would, will, shall, may, might, should, cannot, can't, couldn't, won't, not, didn't, "
            "haven't, hasn't, wasn't, weren't, don't, doesn't, never, unable, if, please, want, going to, need"
        ),
    ),
    "de": ActionLexicon(
        done=_phrases(
            "gesendet, gesandt, versandt, verschickt, abgeschickt, überwiesen, bezahlt, gezahlt, aktualisiert, "
            "geändert, bearbeitet, geschrieben, gespeichert, geplant, angelegt, erstellt, gelöscht, entfernt, "
            "gebucht, storniert, verschoben, umbenannt, hinzugefügt, eingerichtet, übernommen, ausgeführt, "
            "eingetragen, ersetzt, hochgeladen"
        ),
        agents=_phrases("ich, wir, habe, haben, wurde, wurden, erfolgreich, erledigt"),
        hedges=_phrases(
            "kann, kannst, könnte, könnten, würde, würden, werde, werden, soll, sollte, möchte, nicht, kein, "
            "keine, nie, wenn, falls, bitte, muss"
        ),
    ),
}
"""How each language says an action was completed (:mod:`planwerk.core.claims`): completion verbs, words that make
a sentence a report of a finished act, and words that hedge or deny it. Phrasing, not a domain: an answer that
claims one of these needs a successful call of a tool that acts."""

FAILURE_WORDS: tuple[str, ...] = (
    "nicht erreichbar",
    "nicht verfügbar",
    "nicht abrufbar",
    "nicht abgerufen",
    "nicht abrufen",
    "nicht laden",
    "nicht geladen",
    "nicht möglich",
    "nicht ermitteln",
    "nicht ermittelt",
    "nicht ausgeführt",
    "fehlgeschlagen",
    "fehler",
    "ausgefallen",
    "zeitüberschreitung",
    "keine verbindung",
    "keine daten",
    "verweigert",
    "nicht erlaubt",
    "abgelehnt",
    "konnte nicht",
    "konnten nicht",
    "kann nicht",
    "können nicht",
    "unreachable",
    "unavailable",
    "not available",
    "not reachable",
    "failed",
    "could not",
    "couldn't",
    "cannot",
    "can't",
    "error",
    "timed out",
    "timeout",
    "no data",
    "denied",
    "refused",
    "not allowed",
    "unauthorized",
    "not authorized",
)
"""Phrases (German and English, lower case) that say a call failed."""

ESTIMATE_WORDS: tuple[str, ...] = (
    "schätz",
    "geschätzt",
    "durchschnitt",
    "vorjahre",
    "vergangenen jahre",
    "früheren jahre",
    "historisch",
    "üblicherweise",
    "typisch",
    "estimat",
    "average",
    "typical",
    "past years",
    "previous years",
    "historical",
    "usually",
)
"""Words (parts of words, German and English) that say a value is an estimate, not a forecast."""

CONDITION_WORDS: tuple[str, ...] = (
    "sonnig",
    "sonnenschein",
    "bewölkt",
    "wolkig",
    "bedeckt",
    "regnerisch",
    "regen",
    "niesel",
    "schauer",
    "gewitter",
    "schnee",
    "neblig",
    "nebel",
    "windig",
    "sturm",
    "heiter",
    # how warm it is, in words (measured on the travel bench: "Die Wetter in Paris am 19. Januar 2026 ist sehr
    # warm." while get_weather was down); no "heiß" (heißt) and no "hot" (hotel): word beginnings match
    "warm",
    "wärmer",
    "kalt",
    "kälter",
    "kühl",
    "mild",
    "frost",
    "sunny",
    "sunshine",
    "cloudy",
    "overcast",
    "rainy",
    "rain",
    "drizzle",
    "shower",
    "thunder",
    "snow",
    "foggy",
    "windy",
    "storm",
    "cold",
    "cool",
    "chilly",
    "freezing",
)
"""Word beginnings that describe weather: an answer states none of them when the weather call failed, unless the
user's own words hold them ("Wird es sonnig?")."""


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

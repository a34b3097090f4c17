"""What an answer may draw on, flattened from the run's records: numbers, dates, texts, and the calls whose values
it must not state. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from planwerk.checks.domain import NO_DOMAIN, Domain
from planwerk.core.calls import FailureKind
from planwerk.core.refs import as_data
from planwerk.text.dates import SourceDate, source_dates_in_text
from planwerk.text.numbers import CODE, SourceNumber, source_numbers_in_text, unit_of_key

DOWN_KINDS: frozenset[FailureKind] = frozenset({"timeout", "unavailable", "unauthorized", "forbidden"})
"""Failure kinds that mean a service is down or refused: the answer must say so and state nothing the call would
have delivered."""


@dataclass
class Sources:
    """What an answer may draw on, flattened for checking (:func:`collect_sources`)."""

    numbers: list[SourceNumber] = field(default_factory=list)
    """Every number: results, arguments, errors, chunks, question and conversation."""
    dates: list[SourceDate] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """Every text (for places and clock times)."""
    delivered: list[SourceNumber] = field(default_factory=list)
    """Numbers of successful calls, the question and the conversation: what may ground a value of the kind a
    failed call would have delivered (a retrieved chunk's "22 °C" is no weather report)."""
    asked: list[str] = field(default_factory=list)
    """The question and the conversation."""
    delivered_calls: int = 0
    """How many calls succeeded."""
    tools: list[str] = field(default_factory=list)
    """The tools the successful calls called (an answer writing one out as a call talks about it, not its result)."""
    failed_tools: list[str] = field(default_factory=list)
    """The tools of the calls that did not succeed (failed, skipped, rejected)."""
    result_keys: set[str] = field(default_factory=set)
    """The keys of the successful calls' results, as the answer prompt labels values ("temp max c" for
    ``temp_max_c``, case folded)."""
    call_ids: list[str] = field(default_factory=list)
    """The successful calls' ids: the answer prompt names results by them (``f = read_file(…): …``), a reader
    never sees them."""
    result_numbers: list[SourceNumber] = field(default_factory=list)
    """Numbers of the successful calls' results an answer reports (not their arguments, not intermediate ones)."""
    result_texts: list[str] = field(default_factory=list)
    """Texts of those results (names, descriptions, datetimes)."""
    chunks: list[tuple[str, str]] = field(default_factory=list)
    """The retrieved chunks: (document, text)."""


def _walk(value: Any, key: str | None, sources: Sources, domain: Domain) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        number = SourceNumber(float(value), unit_of_key(key, domain.field_units) if key else None)
        sources.numbers.append(number)
        sources.delivered.append(number)
    elif isinstance(value, str):
        add_text(sources, value, delivered=True)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _walk(v, str(k), sources, domain)
    elif isinstance(value, list | tuple):
        sources.numbers.append(SourceNumber(float(len(value))))  # "3 Parks" for a list of three
        for item in value:
            _walk(item, key, sources, domain)


def _keys(value: Any, depth: int = 0) -> set[str]:
    """The keys of a result's objects (a few levels deep), as the answer prompt labels values."""
    value = as_data(value)
    if depth > 4:
        return set()
    if isinstance(value, Mapping):
        own = {str(k).replace("_", " ").casefold() for k in value}
        return own.union(*(_keys(v, depth + 1) for v in value.values()))
    if isinstance(value, list | tuple):
        return set().union(*(_keys(v, depth + 1) for v in value[:20]))
    return set()


def add_text(sources: Sources, text: str, *, delivered: bool = False, asked: bool = False) -> None:
    """Add a source text: its numbers, dates and words (``delivered``: a result's or the user's text)."""
    numbers = source_numbers_in_text(text)
    sources.numbers.extend(numbers)
    if delivered or asked:
        sources.delivered.extend(numbers)
    sources.dates.extend(source_dates_in_text(text))
    sources.texts.append(text)
    if asked:
        sources.asked.append(text)


def collect_sources(
    *,
    calls: Sequence[Mapping[str, Any]] = (),
    hits: Sequence[Mapping[str, Any]] = (),
    asked: Sequence[str] = (),
    dates: Iterable[date] = (),
    consumed: Collection[str] = (),
    domain: Domain = NO_DOMAIN,
) -> Sources:
    """Sources from the call log (results and arguments; failed calls' errors), the chunks' texts, the question and
    the conversation (``asked``), and extra ``dates`` (today, the question's relative dates). ``consumed``: ids of
    calls whose results later calls took (``$ref``): their values ground an answer but are not what it reports
    (measured on the travel bench: a geocode's coordinates "41.3825802, 2.177073" answered a weather question)."""
    sources = Sources()
    intermediate: tuple[list[SourceNumber], list[str]] = ([], [])
    for call in calls:
        if call.get("status") == "ok":
            sources.delivered_calls += 1
            sources.tools.append(str(call.get("tool")))
            sources.call_ids.append(str(call.get("id")))
            sources.result_keys |= _keys(call.get("result"))
            _walk(call.get("args") or {}, None, sources, domain)
            numbers, texts = len(sources.numbers), len(sources.texts)
            _walk(call.get("result"), None, sources, domain)
            numbers_to, texts_to = (
                (sources.result_numbers, sources.result_texts) if call.get("id") not in consumed else intermediate
            )
            numbers_to.extend(sources.numbers[numbers:])
            texts_to.extend(sources.texts[texts:])
        else:  # a failed call's arguments came from the question or earlier results; its error is a text
            sources.failed_tools.append(str(call.get("tool")))
            add_text(sources, " ".join(str(v) for v in (call.get("args") or {}).values()))
            add_text(sources, str(call.get("error") or ""))
    for hit in hits:
        add_text(sources, str(hit.get("text", "")))
        sources.chunks.append((str(hit.get("source", "")).split("#", 1)[0], str(hit.get("text", ""))))
    for text in asked:
        add_text(sources, text, asked=True)
    for day in dates:
        sources.dates.append((day.year, day.month, day.day))
        sources.numbers.extend(SourceNumber(float(v), "date") for v in (day.year, day.month, day.day))
    if not sources.result_numbers and not sources.result_texts:
        sources.result_numbers, sources.result_texts = intermediate
    return sources


@dataclass(frozen=True)
class Withheld:
    """A call whose values the answer must not state: it failed because its service is down, or was skipped."""

    tool: str
    kind: FailureKind
    units: frozenset[str] = frozenset()
    """Units of the values it would have delivered (from its output schema's field names)."""
    conditions: bool = False
    """Whether it would have delivered conditions in words (the profile's condition words: "sonnig", "rain")."""


def delivered_fields(schema: Mapping[str, Any] | None) -> set[str]:
    """Every property name of a JSON schema, nested objects, arrays and ``$defs`` included."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            if isinstance(properties := node.get("properties"), Mapping):
                names.update(str(k) for k in properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema or {})
    return names


def withheld_calls(
    calls: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any] | None], domain: Domain = NO_DOMAIN
) -> list[Withheld]:
    """The calls whose values an answer must not state: failed with a down kind or skipped, and not followed by a
    successful call of the same tool (a replan that worked). ``schemas``: output schemas by tool name; a tool
    without one delivers the fields the profile lists for it (:attr:`Domain.tool_fields`)."""
    succeeded_after = {str(call["tool"]): index for index, call in enumerate(calls) if call.get("status") == "ok"}
    found: dict[str, Withheld] = {}
    for index, call in enumerate(calls):
        tool, kind = str(call["tool"]), call.get("kind")
        if (kind not in DOWN_KINDS and kind != "skipped") or succeeded_after.get(tool, -1) > index or tool in found:
            continue
        fields = delivered_fields(schemas.get(tool)) or set(domain.tool_fields.get(tool, ()))
        # Coordinates (°) and day counts are no values only this call delivers.
        units = {u for u in (unit_of_key(f, domain.field_units) for f in fields) if u and u not in ("°", "d", CODE)}
        # Condition words name no value a check could trace to one call: when another call of the tool worked (the
        # other city of a comparison), they may come from it, so only a tool that delivered nothing withholds them.
        conditions = any(f.lower() in domain.condition_fields for f in fields) and tool not in succeeded_after
        found[tool] = Withheld(tool, kind, frozenset(units), conditions)  # type: ignore[arg-type]
    return list(found.values())

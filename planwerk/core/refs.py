"""``$ref`` references: parsing and resolution against earlier results and user fields.

A reference is ``{"$ref": "<root>.<path>"}`` or the string form ``"$ref:<root>.<path>"``. The root is a call id
or ``user``; the path walks dict keys and list indices (``geo.lat``, ``spots.items.0.name``, ``spots.items[0]``).
Resolution only ever indexes dicts and lists: no attribute access, no eval, so a path cannot reach anything but
the data. Pure: no I/O.

**Bounded.** A reference shares the data it points to in memory, but the resolved arguments are serialised (the
tool call, its event, the checkpoint), so 3,000 references to a 150 KB result are 450 MB on every one of those
paths. The arguments of one call are therefore capped like results (:class:`ArgumentLimits`, 1 MB by default):
the serialised size is estimated while resolving, each distinct value once, and resolution stops with an
:class:`ArgumentsTooLarge` error as soon as the estimate passes the limit, before anything is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from planwerk.core.plan import PlanData, planned_calls
from planwerk.core.sanitize import SanitizePolicy, sanitize_value

REF_KEY = "$ref"
REF_PREFIX = "$ref:"
USER_ROOT = "user"
QUESTION_FIELD = "raw"
"""``user.raw``: the user's whole question, a field every plan may reference (derived, never stored)."""
MAX_REF_LENGTH = 500
MAX_PATH_DEPTH = 32
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


class RefError(ValueError):
    """A reference that cannot be resolved; the message names the reference and what is available."""

    def __init__(self, ref: str, message: str):
        super().__init__(f"$ref {ref!r}: {message}")
        self.ref = ref


class ArgumentsTooLarge(RefError):
    """The resolved arguments of one call would be larger than :attr:`ArgumentLimits.max_bytes`."""

    def __init__(self, ref: str, *, at_least: int, limit: int, this_ref: int, resolved: int):
        super().__init__(
            ref,
            f"the call's resolved arguments would be at least {at_least:,} bytes of JSON with this reference "
            f"(about {this_ref:,} bytes, after {resolved} resolved reference(s)), over the limit of {limit:,} "
            "bytes; reference a smaller part of the result (a field or an index) or reference it once",
        )
        self.at_least = at_least
        self.limit = limit


@dataclass(frozen=True)
class ArgumentLimits:
    """Bounds of one call's resolved arguments."""

    max_bytes: int = 1_000_000
    """Estimated size of the arguments as JSON (UTF-8 code units are counted as one byte each)."""
    max_depth: int = 64
    """Nesting deeper than this is cut (see :mod:`planwerk.core.sanitize`)."""


DEFAULT_LIMITS = ArgumentLimits()


@dataclass(frozen=True)
class Ref:
    """A parsed reference: ``root`` is a call id or ``user``; ``path`` holds keys (str) and indices (int)."""

    text: str
    root: str
    path: tuple[str | int, ...]

    @property
    def is_user(self) -> bool:
        """Whether the reference points into the user fields rather than a call result."""
        return self.root == USER_ROOT


def ref_text(value: Any) -> str | None:
    """The reference string inside ``value`` if it is a reference, else ``None``."""
    if isinstance(value, Mapping) and REF_KEY in value and isinstance(value[REF_KEY], str):
        # {"$ref": ...} with stray extra keys still counts: small models add "description" and the like.
        return value[REF_KEY].strip()
    if isinstance(value, str) and value.startswith(REF_PREFIX):
        return value[len(REF_PREFIX) :].strip()
    return None


def literal_strings(value: Any) -> Iterator[str]:
    """The literal strings of an argument value (references are not literals)."""
    if isinstance(value, str):
        if ref_text(value) is None:
            yield value
    elif isinstance(value, Mapping):
        if ref_text(value) is None:
            for item in value.values():
                yield from literal_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from literal_strings(item)


def parse_ref(text: str) -> Ref:
    """Parse ``"geo.lat"`` / ``"spots.items[0].name"`` into a :class:`Ref`; raises :class:`RefError`."""
    if not text:
        raise RefError(text, "empty reference; expected '<call id>.<path>' or 'user.<field>'")
    if len(text) > MAX_REF_LENGTH:
        raise RefError(text[:40] + "…", f"longer than {MAX_REF_LENGTH} characters")
    root, _, rest = text.partition(".")
    if "[" in root:  # "items[0]" directly on the root
        root, _, tail = root.partition("[")
        rest = f"[{tail}" + (f".{rest}" if rest else "")
    root = root.strip()
    if not root:
        raise RefError(text, "missing the call id before the path")
    path: list[str | int] = []
    position = 0
    while position < len(rest):
        if rest[position] == ".":
            position += 1
            continue
        match = _SEGMENT.match(rest, position)
        if match is None:
            raise RefError(text, f"cannot read the path at {rest[position:]!r}")
        key, index = match.groups()
        path.append(int(index) if index is not None else key.strip())
        position = match.end()
    if len(path) > MAX_PATH_DEPTH:
        raise RefError(text, f"path deeper than {MAX_PATH_DEPTH} segments")
    return Ref(text=text, root=root, path=tuple(path))


def iter_refs(value: Any) -> Iterator[Ref | RefError]:
    """Every reference inside a (nested) argument value, or the error that parsing it raised."""
    text = ref_text(value)
    if text is not None:
        try:
            yield parse_ref(text)
        except RefError as error:
            yield error
        return
    if isinstance(value, Mapping):
        for item in value.values():
            yield from iter_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_refs(item)


def as_data(value: Any) -> Any:
    """A result whose text is JSON counts as that JSON (MCP servers without structured output send text)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                return value
    return value


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = ", ".join(repr(k) for k in list(value)[:20])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)} items (indices 0..{len(value) - 1})" if value else "an empty list"
    return f"a {type(value).__name__} value"


def walk(ref: Ref, root_value: Any) -> Any:
    """Follow ``ref.path`` through ``root_value`` (dict keys and list indices only)."""
    current = as_data(root_value)
    walked = ref.root
    for position, segment in enumerate(ref.path):
        if isinstance(current, Mapping):
            key = str(segment)
            if key in current:
                current = current[key]
            elif position == 0 and key == "result" and "result" not in current:
                # The notebook's protocol forbids "<id>.result.x", but models write it: the result is the root.
                continue
            else:
                raise RefError(ref.text, f"no key {key!r} in {walked}, which is {_describe(current)}")
        elif isinstance(current, list):
            index = segment if isinstance(segment, int) else _as_index(segment)
            if index is None:
                if position == 0 and segment == "result":
                    continue
                raise RefError(ref.text, f"{walked} is {_describe(current)}; expected an index, got {segment!r}")
            if not -len(current) <= index < len(current):
                raise RefError(ref.text, f"index {index} out of range: {walked} is {_describe(current)}")
            current = current[index]
        elif position == 0 and segment == "result":
            continue  # a text or number result is the root too (the 1.5B model: extract of "<read>.result")
        else:
            raise RefError(ref.text, f"cannot take {segment!r} of {walked}, which is {_describe(current)}")
        current = as_data(current)
        walked = f"{walked}.{segment}"
    return current


def _as_index(segment: str | int) -> int | None:
    if isinstance(segment, int):
        return segment
    return int(segment) if re.fullmatch(r"-?\d+", segment) else None


def json_size(value: Any, cap: int) -> int:
    """The size of ``value`` written as compact JSON, estimated; counting stops once it passes ``cap``.

    Iterative (no recursion limit) and bounded by ``cap``: a huge value costs no more than ``cap`` bytes of
    counting. Strings count their characters plus quotes (escapes are not counted), numbers their digits.
    """
    total = 0
    stack: list[Any] = [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2 + 2 * len(item)  # braces; a colon and a comma per member
            for key, member in item.items():
                total += len(key) + 2 if isinstance(key, str) else 8
                stack.append(member)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)  # brackets and commas
            stack.extend(item)
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 2  # digits without converting a huge number to text
        elif isinstance(item, float):
            total += len(repr(item))
        else:
            total += 24  # anything else is written with str(): a guess
    return total


class _Resolver:
    """Resolves the references of one call, charging each resolved value against the byte budget.

    Values are cached by reference text (a path into a JSON-text result parses it once, not per reference) and
    sized once per object, so 3,000 references to one result cost one walk of it, and the call fails as soon as
    the estimate passes the limit.
    """

    def __init__(self, results: Mapping[str, Any], user: Mapping[str, Any], limits: ArgumentLimits):
        self.results = results
        self.user = user
        self.limits = limits
        self.spent = 0
        self.resolved = 0
        self.last_ref: str | None = None
        self._values: dict[str, Any] = {}
        self._roots: dict[str, Any] = {}
        self._sizes: dict[int, tuple[Any, int]] = {}  # id -> (the object, kept alive so its id stays unique; size)

    def value(self, value: Any) -> Any:
        text = ref_text(value)
        if text is not None:
            resolved = self._lookup(text)
            self._charge(text, resolved)
            self.resolved += 1
            return resolved
        if isinstance(value, Mapping):
            self.spent += 2 + 2 * len(value) + sum(len(str(key)) + 2 for key in value)
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            self.spent += 2 + len(value)
            return [self.value(item) for item in value]
        self.spent += json_size(value, self.limits.max_bytes)
        if self.last_ref is not None:  # literals count too, but only references can make arguments grow
            self._check(self.last_ref, 0)
        return value

    def _lookup(self, text: str) -> Any:
        if text in self._values:
            return self._values[text]
        ref = parse_ref(text)
        if ref.is_user:
            found = dict(self.user) if not ref.path else walk(ref, self.user)
        else:
            if ref.root not in self.results:
                known = ", ".join(sorted(self.results)) or "none yet"
                raise RefError(text, f"no result for call id {ref.root!r} (results available: {known})")
            if ref.root not in self._roots:
                self._roots[ref.root] = as_data(self.results[ref.root])
            found = walk(ref, self._roots[ref.root])
        self._values[text] = found
        return found

    def _charge(self, text: str, value: Any) -> None:
        cached = self._sizes.get(id(value))
        if cached is not None and cached[0] is value:
            size = cached[1]
        else:
            size = json_size(value, self.limits.max_bytes - self.spent)
            self._sizes[id(value)] = (value, size)
        self.spent += size
        self.last_ref = text
        self._check(text, size)

    def _check(self, text: str, size: int) -> None:
        if self.spent > self.limits.max_bytes:
            raise ArgumentsTooLarge(
                text, at_least=self.spent, limit=self.limits.max_bytes, this_ref=size, resolved=self.resolved
            )


def resolve_value(
    value: Any, results: Mapping[str, Any], user: Mapping[str, Any], limits: ArgumentLimits = DEFAULT_LIMITS
) -> Any:
    """Replace every reference inside ``value`` by the data it points to; raises :class:`RefError`.

    Raises :class:`ArgumentsTooLarge` (a :class:`RefError`) when the result would be over ``limits.max_bytes``.
    """
    return _Resolver(results, user, limits).value(value)


def resolve_arguments(
    arguments: Mapping[str, Any],
    results: Mapping[str, Any],
    user: Mapping[str, Any],
    limits: ArgumentLimits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Resolve all references in a call's arguments, within ``limits``; the result is sanitized.

    Raises :class:`RefError`, or :class:`ArgumentsTooLarge` when the arguments would be over ``limits.max_bytes``.
    A JSON-text result a path walks into may hold lone surrogates or deep nesting: both are cleaned here, so the
    arguments can be sent, printed and checkpointed.
    """
    resolver = _Resolver(results, user, limits)
    resolved = {key: resolver.value(value) for key, value in arguments.items()}
    return sanitize_value(resolved, SanitizePolicy(max_depth=limits.max_depth))


def dependencies(arguments: Mapping[str, Any]) -> set[str]:
    """The call ids a call's arguments reference (user references and unparsable ones excluded)."""
    return {ref.root for ref in iter_refs(dict(arguments)) if isinstance(ref, Ref) and not ref.is_user}


def rename_refs(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every reference to a call id in ``names`` pointing at its new id (in the form it was
    written: ``{"$ref": …}`` or ``"$ref:…"``); user references and other ids stay."""
    text = ref_text(value)
    if text is not None:
        root, dot, rest = text.partition(".")
        if root in names and root != USER_ROOT:
            renamed = f"{names[root]}{dot}{rest}"
            return {REF_KEY: renamed} if isinstance(value, Mapping) else f"{REF_PREFIX}{renamed}"
        return value
    if isinstance(value, Mapping):
        return {key: rename_refs(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [rename_refs(item, names) for item in value]
    return value


def retarget_refs(value: Any, renamed: Mapping[str, str]) -> Any:
    """``value`` with each reference whose whole text is a key of ``renamed`` pointing at that key's value, written
    ``{"$ref": …}``; other references stay as they were written."""
    text = ref_text(value)
    if text is not None:
        return {REF_KEY: renamed[text]} if text in renamed else value
    if isinstance(value, Mapping):
        return {key: retarget_refs(item, renamed) for key, item in value.items()}
    if isinstance(value, list):
        return [retarget_refs(item, renamed) for item in value]
    return value


def call_subjects(plan: PlanData | None, max_words: int = 6) -> dict[str, tuple[str, ...]]:
    """What each call of ``plan`` is about: its own short text arguments ("Barcelona", "2026-01-20") after those
    of the calls it takes results from, so a weather call that takes a geocode's coordinates is about the city the
    geocode was asked for. Texts of more than ``max_words`` words are left out (a whole question is no subject)."""
    calls: dict[str, Mapping[str, Any]] = {call.id: call.arguments for _, call in planned_calls(plan)}
    subjects: dict[str, tuple[str, ...]] = {}

    def of(call_id: str, seen: frozenset[str]) -> tuple[str, ...]:
        if call_id in subjects:
            return subjects[call_id]
        arguments = calls.get(call_id, {})
        found: list[str] = []
        for root in sorted(dependencies(arguments)):
            if root in calls and root not in seen:  # a self- or cyclic reference is the checker's to reject
                found.extend(of(root, seen | {call_id}))
        found.extend(
            value.strip()
            for value in arguments.values()
            if isinstance(value, str) and value.strip() and len(value.split()) <= max_words and ref_text(value) is None
        )
        subjects[call_id] = tuple(dict.fromkeys(found))
        return subjects[call_id]

    for call_id in calls:
        of(call_id, frozenset())
    return subjects


def user_fields(answers: Mapping[str, Any], question: str) -> dict[str, Any]:
    """The fields ``user.*`` references read: the user's ``answers`` (to questions asked back) and
    :data:`QUESTION_FIELD`, the ``question`` itself (derived here so the state keeps the question once)."""
    return {**{k: v for k, v in answers.items() if k != QUESTION_FIELD}, QUESTION_FIELD: question}

"""``$ref`` references: parsing and resolution against earlier results and user fields.

A reference is ``{"$ref": "<root>.<path>"}`` or the string form ``"$ref:<root>.<path>"``. The root is a call id
or ``user``; the path walks dict keys and list indices (``geo.lat``, ``spots.items.0.name``, ``spots.items[0]``).
Resolution only ever indexes dicts and lists: no attribute access, no eval, so a path cannot reach anything but
the data. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

REF_KEY = "$ref"
REF_PREFIX = "$ref:"
USER_ROOT = "user"
MAX_REF_LENGTH = 500
MAX_PATH_DEPTH = 32
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


class RefError(ValueError):
    """A reference that cannot be resolved; the message names the reference and what is available."""

    def __init__(self, ref: str, message: str):
        super().__init__(f"$ref {ref!r}: {message}")
        self.ref = ref


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
        else:
            raise RefError(ref.text, f"cannot take {segment!r} of {walked}, which is {_describe(current)}")
        current = as_data(current)
        walked = f"{walked}.{segment}"
    return current


def _as_index(segment: str | int) -> int | None:
    if isinstance(segment, int):
        return segment
    return int(segment) if re.fullmatch(r"-?\d+", segment) else None


def resolve_value(value: Any, results: Mapping[str, Any], user: Mapping[str, Any]) -> Any:
    """Replace every reference inside ``value`` by the data it points to; raises :class:`RefError`."""
    text = ref_text(value)
    if text is not None:
        ref = parse_ref(text)
        if ref.is_user:
            if not ref.path:
                return dict(user)
            return walk(ref, user)
        if ref.root not in results:
            known = ", ".join(sorted(results)) or "none yet"
            raise RefError(text, f"no result for call id {ref.root!r} (results available: {known})")
        return walk(ref, results[ref.root])
    if isinstance(value, Mapping):
        return {key: resolve_value(item, results, user) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_value(item, results, user) for item in value]
    return value


def resolve_arguments(
    arguments: Mapping[str, Any], results: Mapping[str, Any], user: Mapping[str, Any]
) -> dict[str, Any]:
    """Resolve all references in a call's arguments."""
    return {key: resolve_value(value, results, user) for key, value in arguments.items()}


def dependencies(arguments: Mapping[str, Any]) -> set[str]:
    """The call ids a call's arguments reference (user references and unparsable ones excluded)."""
    return {ref.root for ref in iter_refs(dict(arguments)) if isinstance(ref, Ref) and not ref.is_user}

"""A tool's JSON schemas may only reference their own parts: ``$ref`` to ``#`` or a JSON pointer that resolves.

A server's schema is data from outside. ``{"$ref": "http://host/x.json"}`` would make a validator or a schema
library fetch that address (a request the operator never allowed), and a dangling ``#/$defs/Missing`` ends in an
exception deep inside validation. Both are refused when the tools are listed: the tool is left out, with a reason
that says what was wrong (``planwerk.tools.mcp`` logs it and the run reports it as a ``server_error`` event).
Nothing is fetched, ever: the check reads the schema alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
"""The keywords that point elsewhere (2020-12, 2019-09 and the common ``$ref``)."""
MAX_NODES = 100_000
"""A schema with more nodes than this is refused (a listing is bounded in size already; this bounds the walk)."""


def schema_problem(schema: Any, *, what: str = "schema") -> str | None:
    """Why ``schema`` cannot be used (a reference that is not local or does not resolve), or ``None``."""
    if schema is None:
        return None
    for count, (path, ref) in enumerate(_refs(schema, "")):
        if count > MAX_NODES:
            return f"the {what} is too large to check ({MAX_NODES:,} references or more)"
        if not isinstance(ref, str):
            return f"the {what} has a $ref that is not a string at {path or '/'}"
        if not ref.startswith("#"):
            return (
                f"the {what} references {ref[:200]!r} at {path or '/'}: only references inside the schema are allowed"
            )
        if _resolve(schema, ref[1:]) is None:
            return f"the {what} references {ref[:200]!r} at {path or '/'}, which is not in the schema"
    return None


def _refs(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    stack: list[tuple[str, Any]] = [(path, node)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, Mapping):
            for key in REF_KEYS:
                if key in value:
                    yield where, value[key]
            stack.extend((f"{where}/{key}", child) for key, child in value.items() if key not in REF_KEYS)
        elif isinstance(value, list):
            stack.extend((f"{where}/{index}", child) for index, child in enumerate(value))


def _resolve(root: Any, pointer: str) -> Any:
    """The node a JSON pointer (RFC 6901, URI fragment form) names in ``root``; ``None`` if there is none."""
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return None  # a plain-name fragment ("#foo", an $anchor): not supported, so not trusted
    node = root
    for raw in unquote(pointer[1:]).split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node

"""Which arguments of a tool call name files, and whether they stay inside a server's ``roots``. Pure, no I/O
besides resolving symbolic links (``os.path.realpath``).

MCP roots are advisory: a server is told them and may ignore them (a naive file server reads ``../secret.txt``).
With a profile's ``enforce_roots = true`` planwerk checks every call before it is sent
(``planwerk.tools.mcp``) and refuses one that names a file outside the server's roots (failure kind ``forbidden``).

**What names a file.** Decided from the call, never from a tool's name:

- a string argument whose schema says so (``format`` ``uri``, ``uri-reference``, ``iri``, ``path``, ``file-path``),
  or whose name does (``path``, ``file``, ``filename``, ``dir``, ``directory``, ``folder``, ``root``, ``uri``,
  ``cwd``, or a name ending in one of them: ``source_path``, ``output_file``): checked unless it is a URL of another
  scheme (``https://...``);
- any other string that looks like a path: absolute (``/etc/passwd``, ``~/x``, ``C:\\x``), a ``file://`` URI, or
  one with a ``..`` segment;
- the ``uri`` of the built-in ``read_resource`` when it is a ``file://`` URI (that argument is named ``uri``).

Nested objects and arrays are walked; an item is named by the nearest property name.

**Inside.** The path (a ``file://`` URI's path, percent-decoded; ``~`` expanded) is resolved with its symbolic
links (``realpath``); a relative one against the server's working directory (a stdio server's ``cwd``, else
planwerk's; an HTTP server's first root). It is inside when it is a root or below one. A server without roots has
no inside: every file argument is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

FILE_FORMATS = frozenset({"uri", "uri-reference", "iri", "iri-reference", "path", "file-path"})
"""JSON-schema ``format`` values that say a string names a file (or may: a URI)."""
_FILE_NAME = re.compile(r"(?:^|_)(?:path|paths|file|files|filename|filepath|dir|directory|folder|root|uri|cwd)$")
"""Argument names that say a string names a file (``path``, ``source_path``, ``output_file``, ``uri``, …)."""
_DOTDOT = re.compile(r"(?:^|[/\\])\.\.(?:[/\\]|$)")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class PathArgument:
    """A string of a call's arguments that names a file."""

    where: str
    """Where it is in the arguments (``path``, ``files[2]``, ``options.dir``)."""
    value: str


@dataclass(frozen=True)
class OutsideRoots:
    """A file argument outside every root."""

    where: str
    value: str
    resolved: str
    """The path it resolved to."""


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "~", "file:")) or _DRIVE.match(value) is not None or _DOTDOT.search(value) is not None


def _names_file(name: str, schema: Mapping[str, Any] | None) -> bool:
    if isinstance(schema, Mapping) and schema.get("format") in FILE_FORMATS:
        return True
    return _FILE_NAME.search(name.lower()) is not None


def path_arguments(schema: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> list[PathArgument]:
    """The strings of ``arguments`` that name files (see the module docstring), with where they are."""
    found: list[PathArgument] = []

    def walk(value: Any, where: str, name: str, node: Mapping[str, Any] | None) -> None:
        if isinstance(value, str):
            named = _names_file(name, node)
            other_scheme = _SCHEME.match(value) is not None and not value.lower().startswith("file://")
            if (named and value and not other_scheme) or (not other_scheme and _looks_like_path(value)):
                found.append(PathArgument(where, value))
        elif isinstance(value, Mapping):
            properties = node.get("properties") if isinstance(node, Mapping) else None
            for key, item in value.items():
                child = properties.get(key) if isinstance(properties, Mapping) else None
                walk(item, f"{where}.{key}" if where else str(key), str(key), child)
        elif isinstance(value, list | tuple):
            items = node.get("items") if isinstance(node, Mapping) else None
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]", name, items if isinstance(items, Mapping) else None)

    walk(arguments, "", "", schema)
    return found


def _local_path(value: str) -> str:
    """The filesystem path a file argument names (a ``file://`` URI's path, percent-decoded)."""
    if value.lower().startswith("file:"):
        parts = urlsplit(value)
        return unquote(parts.path) or "/"
    return value


def resolve(value: str, base: str) -> str:
    """Where the file argument ``value`` points, symbolic links resolved; a relative path against ``base``."""
    path = os.path.expanduser(_local_path(value))
    return os.path.realpath(os.path.join(base, path))


def root_paths(root_uris: Sequence[str]) -> tuple[str, ...]:
    """The resolved directories of ``file://`` root URIs."""
    return tuple(os.path.realpath(_local_path(uri)) for uri in root_uris)


def is_inside(path: str, roots: Sequence[str]) -> bool:
    """Whether the resolved ``path`` is one of the resolved ``roots`` or below one."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def outside_roots(
    schema: Mapping[str, Any] | None, arguments: Mapping[str, Any], root_uris: Sequence[str], base: str | None = None
) -> list[OutsideRoots]:
    """The file arguments of a call that lie outside every root (``root_uris``: the server's ``file://`` roots;
    ``base``: where relative paths start, default the first root, else planwerk's working directory)."""
    roots = root_paths(root_uris)
    start = base if base is not None else (roots[0] if roots else str(Path.cwd()))
    out = []
    for argument in path_arguments(schema, arguments):
        resolved = resolve(argument.value, start)
        if not is_inside(resolved, roots):
            out.append(OutsideRoots(argument.where, argument.value, resolved))
    return out

"""Reading a corpus from disk: files and folders to ``{document name: text}``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

SUFFIXES: tuple[str, ...] = (".txt", ".md")
"""File types a folder contributes."""
SKIPPED_STEMS: frozenset[str] = frozenset({"notice", "license", "licence", "readme", "copying"})
"""Files in a folder that describe the corpus rather than belong to it."""


def packaged_corpus() -> Path:
    """The folder of the corpus shipped with planwerk (the two German workshop texts)."""
    # Next to the package's modules (planwerk may be a namespace package, which importlib.resources rejects).
    return Path(__file__).resolve().parent.parent / "data" / "corpus"


def _expand(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            files.extend(
                sorted(
                    p
                    for p in path.iterdir()
                    if p.is_file() and p.suffix.lower() in SUFFIXES and p.stem.lower() not in SKIPPED_STEMS
                )
            )
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"corpus path {str(path)!r} does not exist; expected a text file or a folder")
    return files


def read_documents(paths: Iterable[Path]) -> dict[str, str]:
    """Read every file (folders: their ``*.txt``/``*.md`` files) as UTF-8, keyed by file name.

    Document names must be unique, because chunks are cited as ``<name>#<number>``.
    """
    docs: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for file in _expand(paths):
        if file.name in docs:
            raise ValueError(
                f"two corpus files are both named {file.name!r} ({origin[file.name]} and {file}); "
                "document names must be unique because hits cite them"
            )
        try:
            docs[file.name] = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"corpus file {file} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
        origin[file.name] = file
    if not docs:
        raise ValueError("the corpus is empty: no .txt or .md files in the given paths")
    return docs


def fingerprint(text: str) -> str:
    """sha256 of a document's UTF-8 text (what decides whether it must be embedded again)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

"""Checking a threads file (``--db``) before SQLite sees it, so a bad path gets one sentence, not a traceback.

SQLite's own errors for a bad path say neither which file nor what was expected ("unable to open database file",
"file is not a database"), and they surface deep inside the first checkpoint read. :func:`check_threads_file`
names the path and what is wrong with it: a folder, a file that is no SQLite database, a folder that cannot be
created, a file that cannot be written.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Literal

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite 3 database file."""

Access = Literal["read", "write"]


class ThreadsFileError(ValueError):
    """The threads file cannot be used; the message names the path and the problem."""


def header_problem(path: Path, head: bytes) -> str | None:
    """Why a file that starts with ``head`` is no SQLite database; None when it is one (or empty: a new one)."""
    if not head or head.startswith(SQLITE_HEADER):
        return None
    return f"threads file {path} is not a SQLite database (it does not start with the SQLite header)"


def check_threads_file(path: Path, access: Access) -> None:
    """Raise :class:`ThreadsFileError` unless ``path`` can hold threads: an existing SQLite file, or (for
    ``write``) a new file that can be created there. ``read`` never creates anything."""
    if str(path) in ("", "."):
        raise ThreadsFileError("the threads file path is empty; expected a file such as threads.sqlite")
    if path.is_dir():
        raise ThreadsFileError(f"threads file {path} is a folder; expected a SQLite file such as {path}/threads.sqlite")
    if path.exists():
        _check_existing(path, access)
    elif access == "write":
        _check_creatable(path)


def _check_existing(path: Path, access: Access) -> None:
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise ThreadsFileError(f"threads file {path} cannot be read: {error.strerror or error}") from None
    problem = header_problem(path, head)
    if problem:
        raise ThreadsFileError(problem)
    if access == "write" and not os.access(path, os.W_OK):
        raise ThreadsFileError(f"threads file {path} is not writable")


def _check_creatable(path: Path) -> None:
    for parent in (path.parent, *path.parent.parents):
        if parent.exists():
            if not parent.is_dir():
                raise ThreadsFileError(f"threads file {path} cannot be created: {parent} is a file, not a folder")
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Create it empty (SQLite takes an empty file as a new database): proves the folder is writable, which
        # os.access cannot tell for root or on a read-only file system.
        with path.open("ab"):
            pass
    except OSError as error:
        raise ThreadsFileError(f"threads file {path} cannot be created: {error.strerror or error}") from None


LOW_SPACE_BYTES = 1 << 20
"""Below this many free bytes beside the threads file, SQLite's "disk I/O error" is taken for a full disk."""


def disk_full_problem(error: sqlite3.Error, path: Path) -> str | None:
    """A sentence for SQLite's ``error`` when the disk holding ``path`` is full, else ``None``.

    SQLite says "database or disk is full" when it notices, but a write to the WAL that fails for lack of space
    often comes back as "disk I/O error"; that one counts as a full disk only when the disk has (almost) no free
    space left."""
    text = str(error).lower()
    full = getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in text
    free: int | None = None
    if full or "disk i/o error" in text:
        try:
            free = shutil.disk_usage(path.parent if str(path.parent) else Path(".")).free
        except OSError:
            free = None
        full = full or (free is not None and free < LOW_SPACE_BYTES)
    if not full:
        return None
    left = f" ({free:,} bytes free)" if free is not None else ""
    return (
        f"threads file {path} could not be written: the disk is full{left}. What was committed before is kept; "
        "free some space, then continue the thread (planwerk resume)"
    )

"""Sharing one threads file between processes: SQLite settings that wait instead of failing, and a lock per thread.

Several ``planwerk`` processes (shells, scripts, cron) may use one ``threads.sqlite`` at once. Two things go
wrong without care:

- **"database is locked"**: SQLite allows one writer at a time. A process holds the write lock from a checkpoint's
  ``INSERT`` to its ``COMMIT``, two hops of its event loop apart, and on a loaded machine that can outlast
  SQLite's default 5 s wait. :class:`SqlitePolicy` sets WAL (readers never block the writer), a long busy timeout
  and a bounded retry of a write that still found the file locked.
- **Lost turns**: two processes running a turn on one thread each continue from the checkpoint they read first,
  and the thread's head is whichever wrote last: the other turn's question and answer are gone. A per-thread file
  lock (``flock`` on ``<db>.locks/<hash>.lock``) queues them: the second waits up to a bound, then fails with
  :class:`ThreadBusyError` naming the thread, having written nothing.

Lock files stay after use: removing a file another process may be about to lock would let two processes each hold
"the" lock (one on the removed file, one on its successor). They are empty, one per thread ever run.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DEFAULT_THREAD_WAIT_S = 120.0
"""How long a turn waits for another process's turn on the same thread before it gives up (CLI ``--wait``)."""


@dataclass(frozen=True)
class SqlitePolicy:
    """How a planwerk SQLite connection waits for other writers."""

    busy_timeout_s: float = 30.0
    """SQLite's own wait for the write lock, per statement."""
    retry_for_s: float = 120.0
    """How long a write that still failed with "database is locked" is retried, in all."""
    first_pause_s: float = 0.05
    """The pause before the first retry; each later pause doubles, up to ``max_pause_s``."""
    max_pause_s: float = 2.0
    """The longest pause between two retries."""


DEFAULT_POLICY = SqlitePolicy()


class ThreadBusyError(RuntimeError):
    """Another process runs a turn on the thread, and it did not finish within the wait."""


def is_locked_error(error: BaseException) -> bool:
    """Whether ``error`` is SQLite's "database is locked" / "busy" (worth retrying), not a real failure."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    text = str(error).lower()
    return "database is locked" in text or "database table is locked" in text or "busy" in text


def retry_pauses(policy: SqlitePolicy) -> Iterator[float]:
    """The pauses between retries: doubling from ``first_pause_s``, capped, ending once ``retry_for_s`` is spent."""
    pause, spent = policy.first_pause_s, 0.0
    while spent < policy.retry_for_s:
        pause = min(pause, policy.max_pause_s, policy.retry_for_s - spent)
        yield pause
        spent += pause
        pause *= 2


async def retry_locked(
    operation: Callable[[], Awaitable[T]],
    policy: SqlitePolicy,
    *,
    before_retry: Callable[[], Awaitable[None]] | None = None,
) -> T:
    """Run ``operation``; while it fails with "database is locked", run ``before_retry`` (e.g. a rollback), pause
    and run it again, for at most ``policy.retry_for_s``. The last error is raised when the time is spent."""
    pauses = retry_pauses(policy)
    while True:
        try:
            return await operation()
        except sqlite3.OperationalError as error:
            if not is_locked_error(error):
                raise
            pause = next(pauses, None)
            if pause is None:
                raise
            if before_retry is not None:
                await before_retry()
            await asyncio.sleep(pause)


def lock_file(db: Path, thread_id: str) -> Path:
    """The lock file of ``thread_id`` beside the real file ``db`` names: hashed, so any thread id is a safe, short
    file name. Symlinks (to the file or to a folder above it) are resolved first: two processes naming one threads
    file by different paths must share its locks, or both run a turn on the thread and one turn is lost."""
    real = Path(os.path.realpath(db))
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return real.parent / f"{real.name}.locks" / f"{digest}.lock"


def _open_lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.asynccontextmanager
async def thread_lock(db: Path, thread_id: str, *, wait_s: float, poll_s: float = 0.05) -> AsyncIterator[None]:
    """Hold ``thread_id``'s lock for the block, across processes; wait for it up to ``wait_s`` seconds, then raise
    :class:`ThreadBusyError`. The kernel releases it when the process dies (kill -9 included), so a crashed
    turn never leaves its thread locked."""
    fd = await asyncio.to_thread(_open_lock, lock_file(db, thread_id))
    try:
        deadline = time.monotonic() + max(wait_s, 0.0)
        pause = poll_s
        while not _try_lock(fd):
            left = deadline - time.monotonic()
            if left <= 0:
                raise ThreadBusyError(
                    f"thread {thread_id!r} is busy: another planwerk process is running a turn on it "
                    f"(waited {wait_s:g} s); try again when it has finished, or wait longer (--wait SECONDS)"
                )
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 1.5, 0.5)  # poll often at first (short turns), then gently
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock

"""The per-thread lock and the SQLite retry rules that let processes share one threads file (issue 13, item 1)."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planwerk.serving.locking import SqlitePolicy, ThreadBusyError, lock_file, retry_locked, retry_pauses, thread_lock
from planwerk.serving.sqlite_saver import DurableSqliteSaver

FAST = SqlitePolicy(busy_timeout_s=0.01, retry_for_s=0.3, first_pause_s=0.01, max_pause_s=0.05)


def test_retry_pauses_double_up_to_the_cap_and_stop_when_the_time_is_spent() -> None:
    pauses = list(retry_pauses(SqlitePolicy(retry_for_s=1.0, first_pause_s=0.1, max_pause_s=0.3)))
    assert pauses[:3] == [0.1, 0.2, 0.3]
    assert sum(pauses) == pytest.approx(1.0)
    assert max(pauses) <= 0.3


async def test_a_locked_write_is_retried_and_other_errors_are_not() -> None:
    attempts: list[int] = []

    async def locked_twice() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "written"

    assert await retry_locked(locked_twice, FAST) == "written" and len(attempts) == 3

    async def broken() -> None:
        raise sqlite3.OperationalError("no such table: checkpoints")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        await retry_locked(broken, FAST)

    async def always_locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    begin = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await retry_locked(always_locked, FAST)
    assert time.monotonic() - begin < 2  # bounded by retry_for_s, not forever


async def test_a_second_holder_waits_for_the_first_and_gives_up_after_its_wait(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    order: list[str] = []

    async def turn(name: str, hold_s: float, wait_s: float) -> None:
        async with thread_lock(db, "t", wait_s=wait_s):
            order.append(f"start {name}")
            await asyncio.sleep(hold_s)
            order.append(f"end {name}")

    await asyncio.gather(turn("a", 0.3, 5), turn("b", 0, 5))
    assert order in (["start a", "end a", "start b", "end b"], ["start b", "end b", "start a", "end a"])
    async with thread_lock(db, "t", wait_s=0):
        with pytest.raises(ThreadBusyError, match="thread 't' is busy"):
            async with thread_lock(db, "t", wait_s=0.2):
                pass
        async with thread_lock(db, "other thread", wait_s=0):  # other threads are not held up
            pass


def test_a_killed_holder_releases_its_thread(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "threads.sqlite"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from pathlib import Path\n"
            "from planwerk.serving.locking import thread_lock\n"
            "async def main():\n"
            f"    async with thread_lock(Path({str(db)!r}), 't', wait_s=0):\n"
            "        print('held', flush=True)\n"
            "        await asyncio.sleep(60)\n"
            "asyncio.run(main())\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"

        async def try_lock(wait_s: float) -> None:
            async with thread_lock(db, "t", wait_s=wait_s):
                pass

        with pytest.raises(ThreadBusyError):
            asyncio.run(try_lock(0.1))
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        asyncio.run(try_lock(2))  # the kernel dropped the lock with the process
    finally:
        if holder.poll() is None:
            holder.kill()
    assert lock_file(db, "t").parent == tmp_path / "threads.sqlite.locks"
    figures.record("thread lock", killed_holders_released=1)


async def test_a_task_writes_all_its_values_in_one_statement(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    async with DurableSqliteSaver.from_conn_string(str(db)) as saver:
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}
        await saver.aput_writes(config, [("a", 1), ("b", {"x": [2]}), ("c", "drei")], task_id="task-1")
        await saver.aput_writes(config, [("a", 9)], task_id="task-1")  # a repeated task keeps its first writes
        await saver.adelete_thread("nobody")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = conn.execute("SELECT idx, channel FROM writes ORDER BY idx").fetchall()
    assert rows == [(0, "a"), (1, "b"), (2, "c")]


async def test_a_thread_named_through_a_symlink_shares_the_lock_of_the_real_file(tmp_path: Path) -> None:
    real_folder = tmp_path / "real"
    real_folder.mkdir()
    db = real_folder / "threads.sqlite"
    db.touch()
    (tmp_path / "alias.sqlite").symlink_to(db)  # a symlink to the file
    (tmp_path / "linked").symlink_to(real_folder)  # a symlink to a folder above it
    assert (
        lock_file(tmp_path / "alias.sqlite", "t") == lock_file(db, "t") == lock_file(tmp_path / "linked" / db.name, "t")
    )
    async with thread_lock(db, "t", wait_s=0):
        for other in (tmp_path / "alias.sqlite", tmp_path / "linked" / db.name):
            with pytest.raises(ThreadBusyError):
                async with thread_lock(other, "t", wait_s=0):
                    pass

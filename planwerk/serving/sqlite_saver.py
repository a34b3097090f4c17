"""langgraph's ``AsyncSqliteSaver`` plus the one method the LangGraph server's rollback needs.

``multitask_strategy="rollback"`` cancels the thread's running (or pending) run and then deletes what that run
wrote, through the checkpointer's ``adelete_for_runs(run_ids)``: ``langgraph_runtime_inmem.ops`` calls it when it
deletes the run record, ``langgraph_api.worker_runtime.cleanup_custom_checkpointer_for_run`` after the cancelled run
stops. ``AsyncSqliteSaver`` (langgraph-checkpoint-sqlite 3.1) does not implement it, so the server's adapter raises
``RuntimeError``: the request answers HTTP 500 and the thread stays stuck. This subclass adds it; everything else,
kill -9 durability included (every ``aput``/``aput_writes`` commits before it returns), is langgraph's own or
:class:`DurableSqliteSaver`'s.

What a run wrote is found the way the server's own in-memory checkpointer finds it: the checkpoints whose metadata
``run_id`` is that run (the server puts ``run_id`` into every checkpoint's metadata), in every namespace, with the
writes attached to them. Writes a run attached to a checkpoint an *earlier* run made (the first step of a resumed
run) carry no run id and stay, exactly as on the in-memory runtime.

Every planwerk SQLite connection is a :class:`DurableSqliteSaver`: WAL, a long busy timeout and a bounded retry
of a write that found the file locked (:mod:`planwerk.serving.locking`), so several processes can share one file
(issue 13: 20 parallel ``planwerk ask`` processes lost 14 threads to "database is locked").

``aprune`` is not implemented: ``langgraph dev``'s runtime never calls it (its ``Threads.prune`` deletes whole
threads through ``adelete_thread`` and answers 422 for ``keep_latest``), so the start-up warning about it is harmless.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from planwerk.serving.locking import DEFAULT_POLICY, SqlitePolicy, retry_locked
from planwerk.serving.threads_file import LOW_SPACE_BYTES, ThreadsFileError, disk_full_problem

T = TypeVar("T")

_MAX_ROWS_PER_STATEMENT = 3_000
"""A task's writes in one statement up to this many (9 parameters each; SQLite allows 32,766 per statement)."""

# The metadata column holds JSON text (json.dumps); CAST also reads rows an older saver version stored as bytes.
_RUN_ID = "json_extract(CAST(metadata AS TEXT), '$.run_id')"


class DurableSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` that shares its file with other processes: WAL, a busy timeout, locked writes retried,
    and the write lock held as briefly as possible.

    The connection runs in autocommit mode and every write is one statement (a checkpoint's ``INSERT``, a task's
    writes as one multi-row ``INSERT``), so it commits inside SQLite's worker thread in one go. Upstream runs
    ``INSERT`` and ``COMMIT`` as two calls; between them the process holds the file's only write lock across two
    thread hops of its event loop, and with 20 processes on 2 cores every writer queued behind that (measured:
    about 45 s of each process's life went to waiting for the lock). Retrying is safe: every write replaces or
    ignores the same rows, and is committed as a whole or not at all."""

    policy: SqlitePolicy = DEFAULT_POLICY

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, policy: SqlitePolicy = DEFAULT_POLICY
    ) -> AsyncIterator[DurableSqliteSaver]:
        """A saver on the SQLite file ``conn_string`` with ``policy``'s waiting rules (closed with the block)."""
        async with aiosqlite.connect(conn_string, timeout=policy.busy_timeout_s, isolation_level=None) as conn:
            saver = cls(conn)
            saver.policy = policy
            saver.path = Path(conn_string)
            # WAL before anything else: readers then never block the one writer, nor it them.
            await saver._retrying(lambda: _enable_wal(conn))
            yield saver

    @classmethod
    @contextlib.asynccontextmanager
    async def read_only(cls, path: str | Path, *, policy: SqlitePolicy = DEFAULT_POLICY) -> AsyncIterator[Any]:
        """A saver that only reads the committed threads of ``path``: nothing is created or written, so it works on
        a full disk and on a read-only mount. Where nothing can be written, SQLite cannot map the WAL's
        shared-memory file even to read, so a file whose WAL is empty (every commit is in the main file) is read
        as immutable; elsewhere it is opened read-only, beside writers."""
        file = Path(path)
        immutable = _cannot_write(file.parent) and _wal_is_empty(file)
        uri = f"file:{quote(str(file.resolve()))}?{'immutable=1' if immutable else 'mode=ro'}"
        async with aiosqlite.connect(uri, uri=True, timeout=policy.busy_timeout_s, isolation_level=None) as conn:
            saver = cls(conn)
            saver.policy = policy
            saver.path = file
            saver.is_setup = True  # setup would write
            tables = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
            if await saver._retrying(lambda: _fetch_one(conn, tables)) is None:
                # A file no run has written to yet (a process that gave up before setup): it holds no thread.
                yield InMemorySaver()
                return
            yield saver

    path: Path | None = None
    """The SQLite file (for messages)."""

    async def _retrying(self, operation: Callable[[], Awaitable[T]]) -> T:
        try:
            return await retry_locked(operation, self.policy)
        except sqlite3.OperationalError as error:
            # "disk I/O error" names neither the file nor the cause: say that the disk is full, where it is.
            problem = disk_full_problem(error, self.path) if self.path is not None else None
            if problem is None:
                raise
            raise ThreadsFileError(problem) from error

    async def setup(self) -> None:
        """Create the tables (once per connection), waiting out other processes that hold the file."""
        await self._retrying(super().setup)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The thread's latest (or the named) checkpoint."""
        parent = super()
        return await self._retrying(lambda: parent.aget_tuple(config))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint: one ``INSERT``, committed by itself (autocommit), retried while the file is locked."""
        parent = super()
        return await self._retrying(lambda: parent.aput(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Save a task's writes as one multi-row ``INSERT`` (all or none of them: a task with half its writes
        would count as finished on resume), retried while the file is locked."""
        if not writes:
            return
        verb = "INSERT OR REPLACE" if all(w[0] in WRITES_IDX_MAP for w in writes) else "INSERT OR IGNORE"
        rows = [
            (
                str(config["configurable"]["thread_id"]),
                str(config["configurable"]["checkpoint_ns"]),
                str(config["configurable"]["checkpoint_id"]),
                task_id,
                task_path,
                WRITES_IDX_MAP.get(channel, idx),
                channel,
                *self.serde.dumps_typed(value),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        await self.setup()
        await self._retrying(lambda: self._insert_writes(verb, rows))

    async def _insert_writes(self, verb: str, rows: list[tuple[Any, ...]]) -> None:
        columns = "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
        if len(rows) <= _MAX_ROWS_PER_STATEMENT:
            values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows))
            params = [field for row in rows for field in row]
            async with self.lock:
                await self.conn.execute(f"{verb} INTO writes ({columns}) VALUES {values}", params)
            return
        statement = f"{verb} INTO writes ({columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        await self._transaction(lambda: self.conn.executemany(statement, rows))

    async def _transaction(self, body: Callable[[], Awaitable[object]]) -> None:
        """Run ``body``'s statements in one explicit transaction (the connection is in autocommit mode)."""
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                await body()
            except BaseException:
                await self.conn.rollback()
                raise
            await self.conn.execute("COMMIT")

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes in one transaction (retried while the file is locked)."""

        async def delete() -> None:
            await self.conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (str(thread_id),))
            await self.conn.execute("DELETE FROM writes WHERE thread_id = ?", (str(thread_id),))

        await self.setup()
        await self._retrying(lambda: self._transaction(delete))


def _cannot_write(folder: Path) -> bool:
    """Whether nothing can be written in ``folder``: a read-only mount, or a disk (almost) full. SQLite must then
    not be asked to open the WAL's shared-memory file, which a read-only connection writes too."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return True
    read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
    return read_only or usage.free < LOW_SPACE_BYTES


def _wal_is_empty(file: Path) -> bool:
    """Whether the WAL beside ``file`` holds nothing (absent or empty): the main file then has every commit, so
    reading it as immutable is exact."""
    wal = Path(f"{file}-wal")
    try:
        return wal.stat().st_size == 0
    except FileNotFoundError:
        return True


async def _enable_wal(conn: aiosqlite.Connection) -> None:
    async with conn.execute("PRAGMA journal_mode=WAL"):
        pass


class ServerSqliteSaver(DurableSqliteSaver):
    """``AsyncSqliteSaver`` with ``adelete_for_runs``, so the LangGraph server can roll a run back."""

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints the given runs made (any namespace) and the writes attached to them."""
        ids = sorted({str(run_id) for run_id in run_ids})
        if not ids:
            return
        marks = ", ".join("?" for _ in ids)
        await self.setup()

        async def delete() -> None:
            # Writes first: they are found through their checkpoints. One transaction: both or neither.
            await self.conn.execute(
                "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                f"(SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE {_RUN_ID} IN ({marks}))",
                ids,
            )
            await self.conn.execute(f"DELETE FROM checkpoints WHERE {_RUN_ID} IN ({marks})", ids)

        await self._retrying(lambda: self._transaction(delete))


async def _fetch_one(conn: aiosqlite.Connection, query: str) -> Any:
    async with conn.execute(query) as cursor:
        return await cursor.fetchone()

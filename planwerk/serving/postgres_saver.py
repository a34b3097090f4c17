"""langgraph's ``AsyncPostgresSaver`` plus ``adelete_for_runs``, the method the LangGraph server's rollback needs.

See :mod:`planwerk.serving.sqlite_saver` for why and what it deletes: the checkpoints whose metadata ``run_id`` is
one of the runs, and the writes attached to them. langgraph-checkpoint-postgres 3.2 implements ``aprune`` itself
but not ``adelete_for_runs``. Channel values live in ``checkpoint_blobs``, keyed by channel version and shared
between checkpoints; the blobs only the deleted checkpoints used stay behind (storage only, never read again).
Imported only when a PostgreSQL URI is configured (the driver is in the ``serve`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver


class ServerPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` with ``adelete_for_runs``, so the LangGraph server can roll a run back."""

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints the given runs made (any namespace) and the writes attached to them."""
        ids = sorted({str(run_id) for run_id in run_ids})
        if not ids:
            return
        async with self._cursor() as cur:
            if self.pipe:  # a transaction must not take in what the pipeline queued before it (as in aprune)
                await self.pipe.sync()
            async with cur.connection.transaction():
                await cur.execute(
                    "DELETE FROM checkpoint_writes AS w USING checkpoints AS c "
                    "WHERE c.metadata->>'run_id' = ANY(%s) AND w.thread_id = c.thread_id "
                    "AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id",
                    (ids,),
                )
                await cur.execute("DELETE FROM checkpoints WHERE metadata->>'run_id' = ANY(%s)", (ids,))

"""langgraph's ``AsyncSqliteSaver`` plus the one method the LangGraph server's rollback needs.

``multitask_strategy="rollback"`` cancels the thread's running (or pending) run and then deletes what that run
wrote, through the checkpointer's ``adelete_for_runs(run_ids)``: ``langgraph_runtime_inmem.ops`` calls it when it
deletes the run record, ``langgraph_api.worker_runtime.cleanup_custom_checkpointer_for_run`` after the cancelled run
stops. ``AsyncSqliteSaver`` (langgraph-checkpoint-sqlite 3.1) does not implement it, so the server's adapter raises
``RuntimeError``: the request answers HTTP 500 and the thread stays stuck. This subclass adds it; everything else,
kill -9 durability included (every ``aput``/``aput_writes`` commits), is langgraph's own.

What a run wrote is found the way the server's own in-memory checkpointer finds it: the checkpoints whose metadata
``run_id`` is that run (the server puts ``run_id`` into every checkpoint's metadata), in every namespace, with the
writes attached to them. Writes a run attached to a checkpoint an *earlier* run made (the first step of a resumed
run) carry no run id and stay, exactly as on the in-memory runtime.

``aprune`` is not implemented: ``langgraph dev``'s runtime never calls it (its ``Threads.prune`` deletes whole
threads through ``adelete_thread`` and answers 422 for ``keep_latest``), so the start-up warning about it is harmless.
"""

from __future__ import annotations

from collections.abc import Iterable

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

# The metadata column holds JSON text (json.dumps); CAST also reads rows an older saver version stored as bytes.
_RUN_ID = "json_extract(CAST(metadata AS TEXT), '$.run_id')"


class ServerSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` with ``adelete_for_runs``, so the LangGraph server can roll a run back."""

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints the given runs made (any namespace) and the writes attached to them."""
        ids = sorted({str(run_id) for run_id in run_ids})
        if not ids:
            return
        marks = ", ".join("?" for _ in ids)
        await self.setup()
        async with self.lock, self.conn.cursor() as cur:
            # Writes first: they are found through their checkpoints. One commit, so a crash leaves both or neither.
            await cur.execute(
                "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                f"(SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE {_RUN_ID} IN ({marks}))",
                ids,
            )
            await cur.execute(f"DELETE FROM checkpoints WHERE {_RUN_ID} IN ({marks})", ids)
            await self.conn.commit()

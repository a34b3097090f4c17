"""The LangGraph server's entry points (``langgraph.json``): the graph factory and the durable checkpointer.

The server calls :func:`make_graph` on every access (runs, state reads, schemas, Studio's graph view). Only a
run (``runtime.execution_runtime`` set) gets MCP tools: sessions kept per process across runs, by configuration
(:mod:`planwerk.serving.warm`); every other access gets the same topology without tools. :data:`app` (the
``http.app`` of ``langgraph.json``) loads the model, the MCP sessions and the retriever at server start. The
run's :class:`~planwerk.graph.context.Context` (assistant context merged with the run's) picks the model spec,
profile and MCP config; :func:`planwerk.graph.runtime.open_deps`, the same composition root
:class:`~planwerk.agent.Agent` uses, resolves the model and retriever (cached per process)
once per run, off the event loop.

:func:`make_checkpointer` keeps threads durable: PostgreSQL when ``PLANWERK_POSTGRES_URI`` (or a
``postgres://`` ``DATABASE_URI``) is set, its tables in the schema ``PLANWERK_POSTGRES_SCHEMA`` (default
``planwerk``); else a SQLite file (``PLANWERK_CHECKPOINT_DB``, default ``.langgraph_api/planwerk-checkpoints.sqlite``
next to the dev server's own thread records). Python callers use it too:
``async with make_checkpointer() as saver, Agent(checkpointer=saver) as agent: ...``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from planwerk.graph.builder import build_graph
from planwerk.graph.deps import Deps
from planwerk.graph.run_context import run_context
from planwerk.graph.runtime import open_deps
from planwerk.serving.context_check import RunContextCheck
from planwerk.serving.disconnect import DisconnectDefault
from planwerk.serving.sqlite_saver import ServerSqliteSaver
from planwerk.serving.warm import close_tool_pool, tool_pool, warm_start
from planwerk.tools.config import load_config

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

log = logging.getLogger(__name__)

GRAPH_ID = "planwerk"
"""The graph's id in ``langgraph.json`` (and the assistant the server creates for it)."""
POSTGRES_URI_ENVS = ("PLANWERK_POSTGRES_URI", "DATABASE_URI")
"""Environment variables naming a PostgreSQL connection string, first set one wins (``DATABASE_URI`` only as a
``postgres://``/``postgresql://`` URL)."""
SQLITE_PATH_ENV = "PLANWERK_CHECKPOINT_DB"
"""Environment variable naming the SQLite checkpoint file."""
DEFAULT_SQLITE_PATH = Path(".langgraph_api") / "planwerk-checkpoints.sqlite"
"""Relative to the server's working directory: next to ``langgraph dev``'s thread records, reset together."""
POOL_SIZE_ENV = "PLANWERK_POSTGRES_POOL_SIZE"
"""Connections in the PostgreSQL pool (default 10)."""
SCHEMA_ENV = "PLANWERK_POSTGRES_SCHEMA"
"""The PostgreSQL schema of planwerk's checkpoint tables (default ``planwerk``): kept apart from other tables in
the same database, e.g. the LangGraph server's own ones when ``DATABASE_URI`` is shared."""
DEFAULT_SCHEMA = "planwerk"
CONNECT_TIMEOUT_S = 30
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

Backend = Literal["postgres", "sqlite"]


# --- the graph factory ----------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def make_graph(runtime: ServerRuntime) -> AsyncIterator[CompiledStateGraph]:
    """The planwerk graph for one server access; only a run gets MCP tools (pooled per process, see
    :mod:`planwerk.serving.warm`). Each run logs how long its graph took to load (``graph load``)."""
    execution = runtime.execution_runtime
    if execution is None:  # state reads, schemas, Studio's graph view: same topology, nothing connected
        yield build_graph(Deps())
        return
    started = time.perf_counter()
    # In a thread: the policy resolves paths and may read a profile file (blocking calls on the server's loop).
    context = await asyncio.to_thread(run_context, execution.context)
    config = await asyncio.to_thread(load_config, context.mcp_config)
    # Sessions are shared only among runs of one user (the server's authenticated user; None with auth off).
    owner = runtime.user.identity if runtime.user is not None else None
    async with tool_pool().lease(config, owner) as (tools, warm), open_deps(context, tools=tools) as deps:
        graph = build_graph(deps)
        log.info(
            "graph load: %.1f ms (MCP sessions %s)", (time.perf_counter() - started) * 1000, "warm" if warm else "cold"
        )
        yield graph


# --- server start and shutdown (langgraph.json: "http": {"app": "planwerk.serving.server:app"}) ----------------


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Load what runs need in the background at start (:func:`planwerk.serving.warm.warm_start`, progress in the
    log; the server answers meanwhile); close the pooled MCP sessions at shutdown."""
    warming = asyncio.create_task(warm_start(), name="planwerk-warm-start")
    try:
        yield
    finally:
        warming.cancel()
        with contextlib.suppress(BaseException):
            await warming
        await close_tool_pool()


def _app() -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    # The server applies this app's middleware to its own routes too: a context the operator does not allow is
    # answered 422 when it is sent (planwerk.serving.context_check), before a run is queued; a streamed run whose
    # client names no on_disconnect gets the operator's default, cancel (planwerk.serving.disconnect).
    return Starlette(lifespan=lifespan, middleware=[Middleware(RunContextCheck), Middleware(DisconnectDefault)])


app = _app()
"""The ASGI app the LangGraph server mounts beside its own (no routes: the lifespan above and the context check)."""


# --- the checkpointer -----------------------------------------------------------------------------------------


def checkpoint_backend(env: Mapping[str, str] | None = None) -> tuple[Backend, str]:
    """Which checkpointer :func:`make_checkpointer` opens, and where (connection string or file path)."""
    env = os.environ if env is None else env
    ours = env.get(POSTGRES_URI_ENVS[0], "").strip()
    if ours:
        return "postgres", ours
    # DATABASE_URI is shared: `langgraph dev` sets it to ":memory:" for its in-memory runtime.
    platform = env.get(POSTGRES_URI_ENVS[1], "").strip()
    if platform.startswith(("postgres://", "postgresql://")):
        return "postgres", platform
    return "sqlite", env.get(SQLITE_PATH_ENV, "").strip() or str(DEFAULT_SQLITE_PATH)


@contextlib.asynccontextmanager
async def make_checkpointer() -> AsyncIterator[BaseCheckpointSaver]:
    """A durable checkpointer for the server's life: PostgreSQL when configured, else SQLite (see module doc).

    Both are langgraph's savers plus ``adelete_for_runs``, which ``multitask_strategy="rollback"`` needs
    (:mod:`planwerk.serving.sqlite_saver`)."""
    backend, where = checkpoint_backend()
    if backend == "postgres":
        async with _postgres_saver(where) as saver:
            yield saver
        return
    path = Path(where).expanduser()
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    log.info("planwerk checkpoints in SQLite file %s", path)
    async with ServerSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


def postgres_schema(env: Mapping[str, str] | None = None) -> str:
    """The schema for planwerk's checkpoint tables; ``ValueError`` unless it is a plain lower-case identifier."""
    env = os.environ if env is None else env
    schema = env.get(SCHEMA_ENV, "").strip() or DEFAULT_SCHEMA
    if not _IDENTIFIER.match(schema):
        raise ValueError(f"{SCHEMA_ENV}={schema!r}: expected a lower-case identifier such as {DEFAULT_SCHEMA!r}")
    return schema


@contextlib.asynccontextmanager
async def _postgres_saver(uri: str) -> AsyncIterator[BaseCheckpointSaver]:
    """An ``AsyncPostgresSaver`` over a connection pool (concurrent runs share it), its tables in their own schema
    (created with the tables if missing)."""
    try:
        import psycopg
        from psycopg import sql
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        from planwerk.serving.postgres_saver import ServerPostgresSaver
    except ImportError as error:
        raise RuntimeError(
            f"a PostgreSQL URI is set ({' or '.join(POSTGRES_URI_ENVS)}), but the driver is missing ({error}); "
            "install planwerk[serve]"
        ) from error
    schema = postgres_schema()
    size_text = os.environ.get(POOL_SIZE_ENV, "").strip() or "10"
    if not size_text.isdigit() or int(size_text) < 1:
        raise ValueError(f"{POOL_SIZE_ENV}={size_text!r}: expected a positive whole number of connections")
    size = int(size_text)
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    # The saver's own connection settings (see AsyncPostgresSaver.from_conn_string), plus the schema.
    pool = AsyncConnectionPool(
        uri,
        min_size=1,
        max_size=size,
        open=False,
        timeout=CONNECT_TIMEOUT_S,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "options": f"-c search_path={schema}",
        },
    )
    await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    try:
        saver = ServerPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        log.info("planwerk checkpoints in PostgreSQL schema %s (pool of %d)", schema, size)
        yield saver
    finally:
        await pool.close()

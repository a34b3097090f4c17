"""The server module in-process: run context, checkpointer choice, retriever cache, the graph factory, tracing."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import langsmith.utils
import pytest
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime

from planwerk.graph import runtime
from planwerk.graph.context import Context
from planwerk.graph.run_context import run_context
from planwerk.graph.runtime import shared_retriever
from planwerk.serving.server import checkpoint_backend, make_checkpointer, make_graph, postgres_schema
from planwerk.serving.sqlite_saver import ServerSqliteSaver
from planwerk.serving.warm import close_tool_pool
from tests.operator_env import temp_files_allowed
from tests.serving.conftest import add, plan, write_math_config, write_replay


@pytest.fixture(autouse=True)
def operator_allows_temp_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs may name the tests' replay files and MCP configs, as under the tests' dev servers."""
    for name, value in temp_files_allowed().items():
        monkeypatch.setenv(name, value)


@pytest.fixture(autouse=True)
async def close_pooled_sessions() -> AsyncIterator[None]:
    """Runs through make_graph pool their MCP sessions on the test's event loop: closed after each test."""
    yield
    await close_tool_pool()


def test_run_context_takes_known_fields_and_drops_the_rest(tmp_path: Path) -> None:
    replay = tmp_path / "x.json"
    context = run_context(
        {
            "model": f"replay:{replay}",
            "profile": "math",
            "retrieval_k": "2",
            "thread_id": "t1",
            "langgraph_request_id": "r",
        }
    )
    assert context == Context(model=f"replay:{replay.resolve()}", profile="math", retrieval_k=2)
    assert run_context({"model": None, "mcp_config": None}) == Context()  # a form's empty fields: the defaults
    assert run_context(None) == Context()
    assert run_context(context) is context


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"retrieval_k": "viele"}, "context.retrieval_k: Input should be a valid integer"),
        ({"constrained_decoding": "vielleicht"}, "context.constrained_decoding: Input should be a valid boolean"),
        (
            {"profile": "astrology"},
            "unknown profile 'astrology'; known profiles: auto, generic, generic-en, math, travel",
        ),
        (["model"], "run context must be an object with Context fields, got list"),
    ],
)
def test_run_context_rejects_bad_values_naming_the_key(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as error:
        run_context(value)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ("sqlite", str(Path(".langgraph_api") / "planwerk-checkpoints.sqlite"))),
        ({"PLANWERK_CHECKPOINT_DB": "/data/t.sqlite"}, ("sqlite", "/data/t.sqlite")),
        ({"DATABASE_URI": ":memory:"}, ("sqlite", str(Path(".langgraph_api") / "planwerk-checkpoints.sqlite"))),
        ({"DATABASE_URI": "postgresql://u@db:5432/lg"}, ("postgres", "postgresql://u@db:5432/lg")),
        (
            {"PLANWERK_POSTGRES_URI": "postgres://a@b/c", "DATABASE_URI": "postgresql://x@y/z"},
            ("postgres", "postgres://a@b/c"),
        ),
    ],
)
def test_checkpoint_backend_choice(env: dict[str, str], expected: tuple[str, str]) -> None:
    assert checkpoint_backend(env) == expected


def test_postgres_schema_is_a_plain_identifier() -> None:
    assert postgres_schema({}) == "planwerk"
    assert postgres_schema({"PLANWERK_POSTGRES_SCHEMA": "agents_v2"}) == "agents_v2"
    with pytest.raises(ValueError, match="expected a lower-case identifier"):
        postgres_schema({"PLANWERK_POSTGRES_SCHEMA": "x; DROP TABLE threads"})


async def test_sqlite_checkpointer_file_is_created_where_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PLANWERK_POSTGRES_URI", "DATABASE_URI"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "deep" / "folder" / "threads.sqlite"
    monkeypatch.setenv("PLANWERK_CHECKPOINT_DB", str(path))
    async with make_checkpointer() as saver:
        assert isinstance(saver, ServerSqliteSaver)  # AsyncSqliteSaver + rollback
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        assert await saver.aget_tuple(config) is None
    assert path.is_file()


async def test_retriever_loads_once_and_a_failure_means_no_retrieval(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import planwerk.rag.retriever as retriever_module

    loads: list[Any] = []
    sentinel = object()

    def working(paths: Any = None, model: str | None = None) -> Any:
        loads.append(paths if model is None else (paths, model))
        return sentinel

    monkeypatch.setattr(runtime, "_retrievers", {})
    monkeypatch.setattr(retriever_module, "load_retriever", working)
    assert await shared_retriever(Context(profile="travel")) is sentinel
    assert await shared_retriever(Context(profile="travel")) is sentinel
    assert loads == [None]  # the packaged corpus, loaded once per process
    assert await shared_retriever(Context(profile="math")) is None  # no corpus: nothing loaded
    assert loads == [None]
    # Another embedder is another retriever (its own index), cached beside the first.
    for _ in range(2):
        assert await shared_retriever(Context(profile="travel", embedding_model="embeddinggemma")) is sentinel
    assert loads == [None, (None, "embeddinggemma")]

    def broken(paths: Any = None, model: str | None = None) -> Any:
        loads.append(paths)
        raise OSError("index folder is read-only")

    loads.clear()
    monkeypatch.setattr(runtime, "_retrievers", {})
    monkeypatch.setattr(retriever_module, "load_retriever", broken)
    with caplog.at_level(logging.WARNING, logger="planwerk.graph.runtime"):
        assert await shared_retriever(Context(profile="travel")) is None
        assert await shared_retriever(Context(profile="travel")) is None
    assert loads == [None]  # one failed load: the failure is remembered for a while, no reload on every run
    assert "runs go on without retrieval" in caplog.text and "index folder is read-only" in caplog.text


def topology(graph: Any) -> tuple[set[str], set[tuple[str, str]]]:
    drawn = graph.get_graph()
    return set(drawn.nodes), {(e.source, e.target) for e in drawn.edges}


async def test_factory_connects_mcp_only_for_runs_and_keeps_the_topology(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import planwerk.tools.mcp as mcp_module

    real_open_tools = mcp_module.open_tools
    opened: list[Any] = []

    def counting_open_tools(config: Any = None, **kwargs: Any) -> Any:
        opened.append(config)
        return real_open_tools(config, **kwargs)

    monkeypatch.setattr(mcp_module, "open_tools", counting_open_tools)
    store = InMemoryStore()
    async with make_graph(_ReadRuntime(access_context="assistants.read", store=store)) as read_graph:
        read_shape = topology(read_graph)
    async with make_graph(_ReadRuntime(access_context="threads.read", store=store)):
        pass
    assert opened == []  # schemas and state reads start no MCP server

    model = write_replay(tmp_path / "factory.json", [plan(add("s", 2, 3)), "2 + 3 = 5."])
    context = {
        "model": model,
        "profile": "math",
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "thread_id": "mirrored-configurable-key",
    }
    runtime = _ExecutionRuntime(access_context="threads.create_run", store=store, context=context)
    async with make_graph(runtime) as run_graph:
        assert topology(run_graph) == read_shape
        out = await run_graph.ainvoke(
            {"messages": [{"role": "user", "content": "Was ist 2 + 3?"}]}, context=run_context(context)
        )
    assert len(opened) == 1 and list(opened[0].servers) == ["math"]
    assert out["answer"] == "2 + 3 = 5."
    assert out["results"] == {"s": {"result": 5.0}}  # the call ran on the math server over stdio


async def test_tracing_is_off_without_langsmith_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(__import__("os").environ):
        if name.startswith(("LANGSMITH_", "LANGCHAIN_")):
            monkeypatch.delenv(name)
    langsmith.utils.get_env_var.cache_clear()
    tracers: list[Any] = []
    original = LangChainTracer.__init__

    def recording(self: LangChainTracer, *args: Any, **kwargs: Any) -> None:
        tracers.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(LangChainTracer, "__init__", recording)
    try:
        assert not langsmith.utils.tracing_is_enabled()
        model = write_replay(tmp_path / "tracing.json", [json.dumps({"steps": [], "final": "Hallo."})])
        runtime = _ExecutionRuntime(
            access_context="threads.create_run",
            store=InMemoryStore(),
            context={"model": model, "profile": "math", "mcp_config": write_math_config(tmp_path / "mcp.json")},
        )
        async with make_graph(runtime) as graph:
            out = await graph.ainvoke(
                {"messages": [{"role": "user", "content": "Hallo"}]}, context=run_context(runtime.context)
            )
        assert out["answer"] == "Hallo."
        assert tracers == []  # no LangSmith tracer, so no client and no network call
        # The control: the standard variables switch it on (nothing is run, so nothing is sent).
        monkeypatch.setenv("LANGSMITH_TRACING", "true")
        langsmith.utils.get_env_var.cache_clear()
        assert langsmith.utils.tracing_is_enabled()
    finally:
        langsmith.utils.get_env_var.cache_clear()


# --- warm runs: MCP sessions pooled per process, loading at start ----------------------------------------------

FAULTY = str(Path(__file__).resolve().parents[1] / "reliability" / "faulty_server.py")


def faulty_config() -> Any:
    from planwerk.tools.config import load_config

    return load_config({"mcpServers": {"faulty": {"command": "${PYTHON}", "args": [FAULTY, "stdio"], "timeout": 20}}})


async def test_runs_share_pooled_mcp_sessions_per_config_and_close_with_the_pool(tmp_path: Path) -> None:
    from planwerk.serving.warm import ToolPool
    from planwerk.tools.config import load_config

    pool = ToolPool()
    config = faulty_config()
    try:
        async with pool.lease(config) as (first, first_warm), pool.lease(faulty_config()) as (second, second_warm):
            assert second is first and not first_warm and second_warm  # same configuration: opened once
            pid = (await first.call("ok", {"text": "a"}))["pid"]
        async with pool.lease(config) as (again, warm):
            assert again is first and warm and (await again.call("ok", {"text": "b"}))["pid"] == pid
        other = load_config(write_math_config(tmp_path / "mcp.json"))
        async with pool.lease(other) as (math, warm):
            assert math is not first and not warm and pool.open_configs == 2
    finally:
        await pool.aclose()
    assert pool.open_configs == 0
    assert await _exited(pid), "the pooled server still runs after the pool closed"


async def test_the_warm_starts_spare_sessions_go_to_the_first_user_and_only_to_them() -> None:
    from planwerk.serving.warm import ToolPool

    pool = ToolPool()
    try:
        async with pool.lease(faulty_config(), spare=True) as (spare, _):  # the warm start, before any run
            pass
        async with pool.lease(faulty_config(), "alice") as (alices, warm):
            assert alices is spare and warm  # the first user's run finds the sessions open
        async with pool.lease(faulty_config(), "bob") as (bobs, warm):
            assert bobs is not spare and not warm  # never shared with a second user
        async with pool.lease(faulty_config(), "alice") as (again, warm):
            assert again is spare and warm
        assert pool.open_configs == 2
    finally:
        await pool.aclose()


@pytest.mark.faults
async def test_a_pooled_source_whose_server_went_away_is_replaced_on_the_next_lease() -> None:
    from planwerk.core.tools import ToolError
    from planwerk.serving.warm import ToolPool

    pool = ToolPool(reopen_after_s=0)
    try:
        async with pool.lease(faulty_config()) as (tools, _):
            for _ in range(2):  # the source reconnects once by itself; the second death leaves it unavailable
                with pytest.raises(ToolError):
                    await tools.call("die", {})
                await _settled(tools)
            assert "faulty" in tools.unavailable
        async with pool.lease(faulty_config()) as (fresh, warm):
            assert fresh is not tools and not warm
            assert (await fresh.call("ok", {"text": "c"}))["text"] == "c"
    finally:
        await pool.aclose()


async def _settled(tools: Any) -> None:
    """Wait (bounded) until a died server is back or given up."""
    import asyncio

    from planwerk.core.tools import ToolError

    for _ in range(100):
        try:
            await tools.call("ok", {"text": "?"})
            return
        except ToolError:
            if tools.unavailable and "reconnecting failed" in next(iter(tools.unavailable.values()), ""):
                return
            await asyncio.sleep(0.1)


async def _exited(pid: int) -> bool:
    import asyncio
    import os

    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", ("model", "tools", "retriever")), ("none", ()), ("tools, model", ("model", "tools")), ("all", None)],
)
def test_warm_start_parts_come_from_the_environment(value: str, expected: Any) -> None:
    from planwerk.serving.warm import WARM_PARTS, warm_parts

    assert warm_parts({"PLANWERK_WARM_START": value}) == (WARM_PARTS if expected is None else expected)


def test_a_bad_warm_start_setting_is_one_clear_error() -> None:
    from planwerk.serving.warm import warm_context, warm_parts

    with pytest.raises(ValueError, match=r"unknown part\(s\) embedder; expected all, none, or a comma list of model"):
        warm_parts({"PLANWERK_WARM_START": "model,embedder"})
    with pytest.raises(ValueError, match="PLANWERK_WARM_START_CONTEXT: not valid JSON"):
        warm_context({"PLANWERK_WARM_START_CONTEXT": "{model"})
    assert warm_context({"PLANWERK_WARM_START_CONTEXT": '{"profile": "math"}'}).profile == "math"


async def test_runs_through_the_factory_reuse_the_mcp_sessions_and_log_their_graph_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import planwerk.tools.mcp as mcp_module

    real_open_tools = mcp_module.open_tools
    opened: list[Any] = []

    def counting_open_tools(config: Any = None, **kwargs: Any) -> Any:
        opened.append(config)
        return real_open_tools(config, **kwargs)

    monkeypatch.setattr(mcp_module, "open_tools", counting_open_tools)
    config = write_math_config(tmp_path / "mcp.json")
    store = InMemoryStore()
    caplog.set_level(logging.INFO, logger="planwerk.serving.server")
    for i in range(2):
        model = write_replay(tmp_path / f"run{i}.json", [plan(add("s", i, 1)), f"{i} + 1 = {i + 1}."])
        context = {"model": model, "profile": "math", "mcp_config": config}
        runtime = _ExecutionRuntime(access_context="threads.create_run", store=store, context=context)
        async with make_graph(runtime) as graph:
            out = await graph.ainvoke(
                {"messages": [{"role": "user", "content": f"Was ist {i} + 1?"}]}, context=run_context(context)
            )
        assert out["results"] == {"s": {"result": float(i + 1)}}
    assert len(opened) == 1  # the second run found the math server's session open
    loads = [r.getMessage() for r in caplog.records if r.getMessage().startswith("graph load:")]
    assert [line.rsplit("(", 1)[1] for line in loads] == ["MCP sessions cold)", "MCP sessions warm)"]


@pytest.mark.faults
async def test_a_dead_server_beside_live_ones_is_retried_in_the_background_not_on_a_run(tmp_path: Path) -> None:
    import sys

    from planwerk.serving.warm import ToolPool
    from planwerk.tools.config import load_config

    # "silent" never answers at start-up: every attempt to open it waits its whole timeout.
    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"], "timeout": 3}
    math = json.loads(Path(write_math_config(tmp_path / "mcp.json")).read_text())["mcpServers"]["math"]
    config = load_config({"mcpServers": {"math": math, "silent": silent}})
    pool = ToolPool(reopen_after_s=0)
    try:
        async with pool.lease(config) as (first, _):
            assert "silent" in first.unavailable
        # Before: this lease opened new sessions and waited for "silent" again. Now the run gets the live math
        # server at once, and "silent" is tried again beside it.
        async with pool.lease(config) as (again, warm):
            assert again is first and warm
            assert (await again.call("add", {"arg_0": 1, "arg_1": 2}))["result"] == 3
    finally:
        await pool.aclose()


@pytest.mark.faults
async def test_new_sessions_take_over_once_the_dead_server_is_back(tmp_path: Path) -> None:
    import asyncio
    import sys

    from planwerk.serving.warm import ToolPool
    from planwerk.tools.config import load_config

    # "late" stays silent until its marker file exists, then serves the math tools.
    marker = tmp_path / "up"
    script = (
        "import pathlib, sys, time\n"
        f"while not pathlib.Path({str(marker)!r}).exists(): time.sleep(0.2)\n"
        "sys.argv = ['math', 'stdio']\n"
        "import runpy; runpy.run_module('planwerk.tools.servers.math', run_name='__main__')\n"
    )
    late = {"command": sys.executable, "args": ["-c", script], "timeout": 3, "prefix": "late"}
    math = json.loads(Path(write_math_config(tmp_path / "mcp.json")).read_text())["mcpServers"]["math"]
    config = load_config({"mcpServers": {"math": math, "late": late}})
    pool = ToolPool(reopen_after_s=0)
    try:
        async with pool.lease(config) as (first, _):
            assert "late" in first.unavailable
        marker.touch()
        for _ in range(300):  # each lease starts (at most one) background attempt; the run never waits for it
            async with pool.lease(config) as (fresh, _):
                pass
            if fresh is not first:
                break
            await asyncio.sleep(0.1)
        assert fresh is not first and not fresh.unavailable
        assert (await fresh.call("late_add", {"arg_0": 1, "arg_1": 2}))["result"] == 3
    finally:
        await pool.aclose()

"""The server module in-process: run context, checkpointer choice, retriever cache, the graph factory, tracing."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import langsmith.utils
import pytest
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime

from planwerk import runtime
from planwerk.graph.context import Context
from planwerk.graph.server import checkpoint_backend, make_checkpointer, make_graph, postgres_schema, run_context
from planwerk.graph.sqlite_saver import ServerSqliteSaver
from planwerk.runtime import shared_retriever
from tests.serving.conftest import add, plan, write_math_config, write_replay


def test_run_context_takes_known_fields_and_drops_the_rest() -> None:
    context = run_context(
        {
            "model": "replay:x.json",
            "profile": "math",
            "retrieval_k": "2",
            "thread_id": "t1",
            "langgraph_request_id": "r",
        }
    )
    assert context == Context(model="replay:x.json", profile="math", retrieval_k=2)
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

    def working(paths: Any = None) -> Any:
        loads.append(paths)
        return sentinel

    monkeypatch.setattr(runtime, "_retrievers", {})
    monkeypatch.setattr(retriever_module, "load_retriever", working)
    assert await shared_retriever(Context(profile="travel")) is sentinel
    assert await shared_retriever(Context(profile="travel")) is sentinel
    assert loads == [None]  # the packaged corpus, loaded once per process
    assert await shared_retriever(Context(profile="math")) is None  # no corpus: nothing loaded
    assert loads == [None]

    def broken(paths: Any = None) -> Any:
        loads.append(paths)
        raise OSError("index folder is read-only")

    monkeypatch.setattr(runtime, "_retrievers", {})
    monkeypatch.setattr(retriever_module, "load_retriever", broken)
    with caplog.at_level(logging.WARNING, logger="planwerk.runtime"):
        assert await shared_retriever(Context(profile="travel")) is None
        assert await shared_retriever(Context(profile="travel")) is None
    assert len(loads) == 2  # the failure is remembered for a while: no reload on every run
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

"""The composition root (``planwerk.graph.runtime.open_deps``), how ``Agent`` merges its keywords over a
``Context``, and reading a thread without tools or a model (``read_state``, ``planwerk state``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planwerk.agent import Agent, read_state
from planwerk.cli import app
from planwerk.graph import runtime
from planwerk.graph.context import Context
from planwerk.graph.deps import NoTools
from planwerk.graph.runtime import open_deps
from planwerk.models.replay import ReplayChatModel

FINAL = json.dumps({"steps": [], "final": "Hallo zurück."})
"""A plan that needs no tool: prepare → retrieve → plan → finalize, one model call."""


@pytest.fixture
def replay_spec(tmp_path: Path) -> str:
    file = tmp_path / "replay.json"
    file.write_text(json.dumps([FINAL]), encoding="utf-8")
    return f"replay:{file}"


class Forbidden:
    """Stands in for something a code path must not touch: any call fails the test."""

    def __init__(self, what: str):
        self.what = what
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise AssertionError(f"{self.what} was called: {args!r}")


# --- Agent keywords over the Context ------------------------------------------------------------------------


def test_agent_keeps_the_contexts_profile_and_model_when_no_keyword_is_given(replay_spec: str) -> None:
    context = Context(profile="math", model=replay_spec, mcp_config="servers.json", today="2026-11-22")
    assert Agent(context=context).context == context  # not travel with the default model, as before


def test_agent_keywords_override_only_the_fields_they_name(replay_spec: str, tmp_path: Path) -> None:
    context = Context(profile="math", model="default", retrieval_k=2)
    agent = Agent(model=replay_spec, mcp_config=tmp_path / "mcp.json", context=context)
    assert agent.context == Context(
        profile="math", model=replay_spec, mcp_config=str(tmp_path / "mcp.json"), retrieval_k=2
    )
    assert Agent(profile="travel", context=context).context.profile == "travel"
    assert Agent().context == Context()
    # A model object leaves the context's spec alone (it is never loaded).
    assert Agent(model=ReplayChatModel.of([]), context=Context(model=replay_spec)).context.model == replay_spec


def test_agent_checks_the_merged_context_at_once(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown profile 'astrology'"):
        Agent(profile="astrology")
    with pytest.raises(ValueError, match="replay file not found"):
        Agent(context=Context(model=f"replay:{tmp_path / 'missing.json'}"))


# --- open_deps --------------------------------------------------------------------------------------------


async def test_open_deps_resolves_the_contexts_model_and_keeps_given_collaborators(replay_spec: str) -> None:
    tools = NoTools()
    async with open_deps(Context(model=replay_spec, profile="math"), tools=tools) as deps:
        assert isinstance(deps.chat_model, ReplayChatModel)  # resolved once, before the graph runs
        assert deps.tools is tools
        assert deps.retriever is None  # the math profile has no corpus
    model = ReplayChatModel.of([])
    async with open_deps(Context(model="default"), chat_model=model, tools=tools, retriever=None) as deps:
        assert deps.chat_model is model and deps.retriever is None  # nothing loaded: no default model, no index


async def test_open_deps_loads_an_answer_model_only_where_the_run_has_one_of_its_own(
    replay_spec: str, tmp_path: Path
) -> None:
    tools = NoTools()
    async with open_deps(Context(model=replay_spec), tools=tools, retriever=None) as deps:
        assert deps.answer_chat_model is deps.chat_model  # one model writes plans and answers
    writer_file = tmp_path / "writer.json"
    writer_file.write_text("[]", encoding="utf-8")
    context = Context(model=replay_spec, answer_model=f"replay:{writer_file}")
    async with open_deps(context, tools=tools, retriever=None) as deps:
        assert isinstance(deps.answer_chat_model, ReplayChatModel) and deps.answer_chat_model is not deps.chat_model
    given, writer = ReplayChatModel.of([]), ReplayChatModel.of([])
    async with open_deps(context, chat_model=given, answer_chat_model=writer, tools=tools, retriever=None) as deps:
        assert deps.chat_model is given and deps.answer_chat_model is writer
    with pytest.raises(ValueError, match="replay file not found"):
        Agent(answer_model=f"replay:{tmp_path / 'missing.json'}")  # checked before anything starts


async def test_open_deps_uses_the_shared_retriever_of_the_profile(
    replay_spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import planwerk.rag.retriever as retriever_module

    loads: list[Any] = []
    sentinel = object()

    def load(paths: Any = None, model: str | None = None) -> Any:
        loads.append(paths)
        return sentinel

    monkeypatch.setattr(runtime, "_retrievers", {})
    monkeypatch.setattr(retriever_module, "load_retriever", load)
    for _ in range(2):
        async with open_deps(Context(model=replay_spec), tools=NoTools()) as deps:
            assert deps.retriever is sentinel
    assert loads == [None]  # the packaged corpus, once per process: the Agent and the server share it


async def test_open_deps_opens_the_contexts_mcp_servers_for_its_block(
    replay_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"]}}}
        )
    )
    async with open_deps(Context(model=replay_spec, profile="math", mcp_config=str(config))) as deps:
        assert "add" in deps.tools.specs
        assert await deps.tools.call("add", {"arg_0": 2, "arg_1": 3}) == {"result": 5.0}


# --- reading a thread ---------------------------------------------------------------------------------------


async def make_thread(db: Path, thread_id: str) -> None:
    async with Agent(model=ReplayChatModel.of([FINAL]), tools=NoTools(), retriever=False, db=db) as agent:
        reply = await agent.ask("Hallo?", thread_id=thread_id)
    assert reply.answer == "Hallo zurück."


async def test_read_state_reads_checkpoints_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "threads.sqlite"
    await make_thread(db, "t1")
    import planwerk.models.specs
    import planwerk.tools.mcp

    monkeypatch.setattr(planwerk.models.specs, "load_chat_model", Forbidden("load_chat_model"))
    monkeypatch.setattr(planwerk.tools.mcp, "open_tools", Forbidden("open_tools"))
    monkeypatch.setattr(subprocess, "Popen", Forbidden("subprocess.Popen"))
    values = await read_state("t1", db=db)
    # The question, the progress text a chat shows at once, the answer.
    assert [m.type for m in values["messages"]] == ["human", "ai", "ai"] and values["answer"] == "Hallo zurück."
    with pytest.raises(KeyError, match="unknown thread id 'nope'"):
        await read_state("nope", db=db)
    with pytest.raises(KeyError, match="unknown thread id 't1'"):
        await read_state("t1", db=tmp_path / "elsewhere.sqlite")
    assert not (tmp_path / "elsewhere.sqlite").exists()  # a read creates no thread file


def test_state_command_starts_no_process_and_loads_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import planwerk.models.specs
    import planwerk.tools.mcp

    db = tmp_path / "threads.sqlite"
    asyncio.run(make_thread(db, "cli-state"))
    popen = Forbidden("subprocess.Popen")  # stdio MCP servers start through it (asyncio's subprocess transport)
    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(planwerk.models.specs, "load_chat_model", Forbidden("load_chat_model"))
    monkeypatch.setattr(planwerk.tools.mcp, "open_tools", Forbidden("open_tools"))
    result = CliRunner().invoke(app, ["state", "--thread", "cli-state", "--db", str(db)])
    assert result.exit_code == 0, result.output
    values = json.loads(result.stdout)
    assert values["messages"] == [
        {"role": "human", "content": "Hallo?"},
        {"role": "ai", "content": "Einen Moment, ich plane die nötigen Schritte …"},
        {"role": "ai", "content": "Hallo zurück."},
    ]
    assert popen.calls == 0

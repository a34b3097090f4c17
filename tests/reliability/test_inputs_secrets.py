"""Bad input gets one clear line saying what was expected; secrets of the MCP config never leave it.

Already covered elsewhere (not repeated here): empty and enormous questions and ``state`` of an unknown thread
(tests/graph/test_graph.py), bad model specs, a missing MCP config file, unknown profiles and ``resume`` of an
unknown thread on the command line (tests/test_cli.py), malformed configs key by key (tests/tools/test_config.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tracers.context import collect_runs

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.config import ConfigError
from tests.graph.tools import travel_tools
from tests.tools.conftest import ECHO_SCRIPT, http_server

TOKEN = "sk-planwerk-7f3a9c21e4b8d605"
FINAL = json.dumps({"steps": [], "final": "fertig"})


def one_line(error: BaseException) -> str:
    text = str(error.args[0]) if isinstance(error, KeyError) else str(error)
    assert "\n" not in text and len(text) < 400, text
    return text


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "gpt:4",
            "unknown model spec 'gpt:4'; expected one of: default, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, "
            "qwen2.5-coder-0.5b-q4_0, qwen2.5-coder-0.5b-q8_0, hf:",
        ),
        ("hf:", "model spec 'hf:' names no hf target"),
        ("gguf:model.bin", "expected a .gguf file after 'gguf:'"),
        ("endpoint:ftp://x", "the endpoint must be an http(s) URL"),
    ],
)
def test_unknown_model_specs_fail_when_the_agent_is_made(spec: str, expected: str) -> None:
    with pytest.raises(ValueError) as caught:
        Agent(model=spec)
    assert expected in one_line(caught.value)


async def test_a_malformed_mcp_config_is_named_before_anything_runs(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"x": {"command": "a", "url": "http://127.0.0.1:1/mcp"}}}))
    with pytest.raises(ConfigError) as caught:
        async with Agent(model=ReplayChatModel.of([]), mcp_config=config, retriever=False):
            pass
    assert one_line(caught.value).startswith('mcpServers.x: has both "command" and "url"')
    config.write_text("{not json")
    with pytest.raises(ConfigError, match=r"mcp.json: not valid JSON \(line 1, column 2"):
        async with Agent(model=ReplayChatModel.of([]), mcp_config=config, retriever=False):
            pass


@pytest.mark.parametrize(
    "field", ["tool_timeout_s", "max_concurrency", "max_plan_attempts", "retrieval_k", "history_max_tokens"]
)
@pytest.mark.parametrize("value", [0, -1, "5"])
def test_limits_in_the_run_context_must_be_positive(field: str, value: Any) -> None:
    # Before: tool_timeout_s=-1 was accepted and cut only the calls that happened to await (silently).
    with pytest.raises(ValueError) as caught:
        Context(**{field: value})
    assert one_line(caught.value) == f"Context.{field} must be a positive number, got {value!r}"


@pytest.mark.parametrize(
    "field", ["tool_timeout_s", "max_concurrency", "max_plan_attempts", "retrieval_k", "retrieval_threshold"]
)
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_limits_in_the_run_context_must_be_finite(field: str, value: float) -> None:
    # Before: tool_timeout_s=inf was accepted and every call then failed with OverflowError; nan passed "<= 0".
    with pytest.raises(ValueError, match=f"Context.{field} must be a finite number"):
        Context(**{field: value})


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_the_thread_wait_must_be_finite(value: float) -> None:
    with pytest.raises(ValueError, match="thread_wait_s must be a finite number of seconds"):
        Agent(model=ReplayChatModel.of([]), retriever=False, thread_wait_s=value)


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--tool-timeout", "inf", "tool_timeout_s must be a finite number"),
        ("--wait", "inf", "thread_wait_s must be a finite number"),
        ("--tool-timeout", "nan", "greater than or equal to"),  # the option's own range check refuses nan
    ],
)
def test_the_cli_refuses_non_finite_numbers(option: str, value: str, says: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    replay = tmp_path / "replay.json"
    replay.write_text("[]", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "planwerk.cli", "ask", "Was ist 1 + 1?", "--model", f"replay:{replay}", option, value],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in " ".join(done.stderr.split()), done.stderr


def test_a_missing_corpus_is_named() -> None:
    from planwerk.rag.retriever import load_retriever

    with pytest.raises(FileNotFoundError) as caught:
        load_retriever([Path("/nope")])
    assert one_line(caught.value) == "corpus path '/nope' does not exist; expected a text file or a folder"


async def test_resuming_what_cannot_be_resumed_says_why() -> None:
    async with Agent(model=ReplayChatModel.of([FINAL]), tools=travel_tools(), retriever=False) as agent:
        with pytest.raises(KeyError) as unknown:
            await agent.resume("Barcelona", thread_id="nope")
        assert one_line(unknown.value) == "unknown thread id 'nope': no checkpoint exists for it"
        with pytest.raises(KeyError, match="unknown thread id 'nope'"):
            await agent.resume(None, thread_id="nope")
        with pytest.raises(TypeError, match="the question must be a string, got NoneType"):
            await agent.ask(None, thread_id="none")  # type: ignore[arg-type]
        await agent.ask("Hallo?", thread_id="done")
        with pytest.raises(ValueError, match="thread 'done' is not waiting for an answer; ask a new question"):
            await agent.resume("Barcelona", thread_id="done")
        with pytest.raises(ValueError, match="thread 'done' has no interrupted run to continue"):
            await agent.resume(None, thread_id="done")
        assert (await agent.state("done"))["answer"] == "fertig"  # the thread is intact


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


async def run_with_a_token(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    """A graph run against an HTTP MCP server whose config carries a bearer token; every place output goes to."""
    caplog.set_level(logging.DEBUG)
    plan = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "l", "name": "leak", "arguments": {}},
        {"id": "e", "name": "echo_text", "arguments": {"text": "hallo"}}]}], "final": None})  # fmt: skip
    with http_server([ECHO_SCRIPT]) as (url, _):
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"echo": {
            "url": url, "timeout": 10, "headers": {"Authorization": f"Bearer {TOKEN}"}}}}))  # fmt: skip
        model = ReplayChatModel.of([plan, "Ein Aufruf wurde abgelehnt."])
        context = Context(today="2026-11-22", max_plan_attempts=1)
        async with Agent(model=model, mcp_config=config, retriever=False, context=context) as agent:
            with collect_runs() as traces:
                reply = await agent.ask("Wer bin ich?", thread_id="secret")
            history = [snapshot async for snapshot in agent.graph.aget_state_history(agent._config("secret"))]
    errors = {e["id"]: e["error"] for e in reply.events if e["event"] == "tool_error"}
    assert "rejected credentials ***" in errors["l"]  # the careless server's message, redacted
    assert reply.answer == "Ein Aufruf wurde abgelehnt."
    assert traces.traced_runs and len(history) > 3 and caplog.records

    def runs(run: Any) -> list[Any]:
        return [run, *(r for child in run.child_runs for r in runs(child))]

    traced = [r for root in traces.traced_runs for r in runs(root)]
    records = [(r.levelno, f"{r.name} {r.getMessage()}") for r in caplog.records]
    return {
        "events": _dump(reply.events),
        "logs (INFO and up)": "\n".join(text for level, text in records if level >= logging.INFO),
        "logs (DEBUG)": "\n".join(text for level, text in records if level < logging.INFO),
        "checkpoints": _dump([(s.values, s.metadata, s.tasks, s.config) for s in history]),
        "traces of graph, nodes and model": _dump(
            [r.model_dump(exclude={"child_runs"}) for r in traced if r.run_type != "tool"]
        ),
        "traces of MCP tool runs": _dump(
            [r.model_dump(exclude={"child_runs"}) for r in traced if r.run_type == "tool"]
        ),
        "prompts": _dump([[m.content for m in prompt] for prompt in model.prompts]),
    }


async def test_bearer_token_of_an_http_mcp_server_appears_nowhere_the_engine_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: Any
) -> None:
    places = await run_with_a_token(tmp_path, caplog)
    engine = {k: v for k, v in places.items() if k not in ("logs (DEBUG)", "traces of MCP tool runs")}
    found = [where for where, text in engine.items() if TOKEN in text]
    assert found == [], f"the token leaked into: {found}"
    figures.record("secrets", places_checked=len(engine), leaks=0)


async def test_bearer_token_stays_out_of_debug_logs_and_tool_traces(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: Any
) -> None:
    # Libraries log raw MCP traffic at DEBUG, and a LangChain tool run would record the server's raw error text:
    # the log-record scrubber and calling the adapter's coroutine directly keep the token out of both.
    places = await run_with_a_token(tmp_path, caplog)
    assert TOKEN not in places["logs (DEBUG)"] and TOKEN not in places["traces of MCP tool runs"]
    figures.record("secrets in debug logs and tool traces", leaks=0)

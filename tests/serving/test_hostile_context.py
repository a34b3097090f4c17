"""Hostile run contexts against the real ``langgraph dev`` server and Aegra's graph: a request names a shell as its
MCP server, or sends the operator's model key to a server of its choosing. The run fails with an error naming the
setting, and nothing is started or sent (issue 28, items 1 and 2). Authentication is off here: the limits hold
without it (a web page can reach a loopback server)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.ports import serve_app
from tests.serving.conftest import DevServer, write_replay

KEY = "sk-operator-secret-4711"


def shell_config(marker: Path) -> dict[str, Any]:
    """An MCP config whose one server is a shell that creates ``marker`` (the issue's request)."""
    return {"mcpServers": {"x": {"command": "/bin/sh", "args": ["-c", f"id > {marker}"]}}}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile")
    out = {"server": base / "server", "configs": base / "configs", "outside": base / "outside"}
    for folder in out.values():
        folder.mkdir()
    return out


@pytest.fixture(scope="module")
def recorder() -> Iterator[tuple[str, list[str]]]:
    """A model server of the attacker's on loopback: records the Authorization header of every request."""
    seen: list[str] = []

    async def completions(request: Request) -> Response:
        seen.append(request.headers.get("authorization", ""))
        return JSONResponse({"error": {"message": "no"}}, status_code=400)

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    with serve_app(app) as url:
        yield f"{url}/v1", seen


@pytest.fixture(scope="module")
def server(folders: dict[str, Path]) -> Iterator[DevServer]:
    """The dev server with the operator's key set, no endpoint allowed, and its own MCP config folder."""
    dev = DevServer(
        folders["server"],
        extra_env={
            "PLANWERK_AUTH": "off",
            "PLANWERK_ENDPOINT_API_KEY": KEY,
            "PLANWERK_ALLOWED_ENDPOINTS": "",
            "PLANWERK_MCP_CONFIGS": str(folders["configs"]),
        },
    )
    try:
        dev.start()
        yield dev
    finally:
        dev.kill()


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    yield get_client(url=server.url, timeout=60)


async def run_errors(client: LangGraphClient, assistant: str = "planwerk", **kwargs: Any) -> list[str]:
    """The error events of one run on a new thread, as JSON text; the run must have failed."""
    thread = (await client.threads.create())["thread_id"]
    question = {"messages": [{"role": "user", "content": "1+1?"}]}
    parts = [part async for part in client.runs.stream(thread, assistant, input=question, **kwargs)]
    assert (await client.threads.get(thread))["status"] == "error"
    return [json.dumps(part.data) for part in parts if part.event == "error"]


def answering(folder: Path) -> str:
    """A replay model (in the tests' allowed temp folder) that answers at once, planning no call."""
    return write_replay(folder / "answer.json", [json.dumps({"steps": [], "final": "2."})])


async def refused(request: Any) -> str:
    """The 422 answer's detail to a request (a coroutine, or a stream whose iteration sends it)."""
    with pytest.raises(httpx.HTTPStatusError) as error:  # the SDK's own errors are a kind of it
        if hasattr(request, "__aiter__"):
            async for _ in request:
                pass
        else:
            await request
    assert error.value.response.status_code == 422
    return error.value.response.json()["detail"]


QUESTION = {"messages": [{"role": "user", "content": "1+1?"}]}


async def test_an_inline_mcp_config_is_refused_when_sent_and_starts_nothing(
    client: LangGraphClient, folders: dict[str, Path], tmp_path: Path
) -> None:
    marker = tmp_path / "p"
    inline = json.dumps(shell_config(marker))
    thread = (await client.threads.create())["thread_id"]
    # A run's context, a configurable value (the server copies it into the context), a stateless run, an
    # assistant's context: each answered 422 naming the setting, and no run is queued.
    detail = await refused(client.runs.stream(thread, "planwerk", input=QUESTION, context={"mcp_config": inline}))
    assert detail.startswith("context.mcp_config: the server takes no inline MCP config")
    config = {"configurable": {"mcp_config": inline}}
    assert "no inline MCP config" in await refused(
        client.runs.create(thread, "planwerk", input=QUESTION, config=config)
    )
    assert "no inline MCP config" in await refused(
        client.runs.wait(None, "planwerk", input=QUESTION, context={"mcp_config": inline})
    )
    assert "no inline MCP config" in await refused(client.assistants.create("planwerk", context={"mcp_config": inline}))
    outside = folders["outside"] / "shell.json"
    outside.write_text(inline, encoding="utf-8")
    detail = await refused(client.runs.create(thread, "planwerk", input=QUESTION, context={"mcp_config": str(outside)}))
    assert "is not an MCP config file in the operator's folder" in detail
    assert await client.runs.list(thread) == []
    assert not marker.exists()
    # The control: the same config in the operator's folder does start (no MCP server: the run goes on without it).
    (folders["configs"] / "shell.json").write_text(inline, encoding="utf-8")
    context = {"mcp_config": "shell.json", "model": answering(tmp_path), "profile": "generic-en"}
    with contextlib.suppress(Exception):  # how the run ends is beside the point: the server was started
        await client.runs.wait(thread, "planwerk", input=QUESTION, context=context)
    assert marker.exists()


async def test_the_operators_key_goes_to_no_server_a_request_names(
    client: LangGraphClient, recorder: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, seen = recorder
    detail = await refused(client.runs.wait(None, "planwerk", input=QUESTION, context={"model": f"endpoint:{url}"}))
    assert "is not a model server this server may use" in detail
    # A profile file (in the operator's folders) naming that server as its model, through an assistant without a
    # model: accepted when sent, the merged context is refused by the graph factory when the run starts.
    profile = tmp_path / "leaky.toml"
    profile.write_text(f'persona = "You help."\nmodel = "endpoint:{url}"\n', encoding="utf-8")
    assistant = await client.assistants.create("planwerk", context={"profile": str(profile)})
    errors = await run_errors(client, assistant["assistant_id"])
    assert errors and "the model of profile 'leaky': endpoint" in errors[0]
    assert seen == [] and KEY not in "".join(errors)


async def test_aegra_graph_refuses_an_inline_config_before_starting_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planwerk.serving.aegra import graph

    monkeypatch.setenv("PLANWERK_MCP_CONFIGS", str(tmp_path / "configs"))
    marker = tmp_path / "p"
    runnable = graph.copy(update={"checkpointer": InMemorySaver(), "store": None})  # what Aegra does per access
    config = {"configurable": {"thread_id": "t1"}}
    question = {"messages": [{"role": "user", "content": "1+1?"}]}
    with pytest.raises(ValueError, match="the server takes no inline MCP config"):
        async for _ in runnable.astream(question, config, context={"mcp_config": json.dumps(shell_config(marker))}):
            pass
    assert not marker.exists()

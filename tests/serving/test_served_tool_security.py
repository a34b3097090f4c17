"""MCP server auth, secrets and paths against the real ``langgraph dev`` server (issue 28, items 5, 6 and 7).

One dev server (auth on, a user's token) serves every test. The operator's MCP config file lies in the allowed
folder and names three real servers: the careless ``leaky`` server (stdio; the secret in its ``env``, echoed in a
result, a progress message, an error and on stderr, in several forms), the naive ``files`` server (stdio, with
``roots``; a profile file in the allowed folder says ``enforce_roots = true``) and the bearer-token ``auth`` server
(streamable HTTP; the token comes from a ``token_file`` supplier and is rotated by a test). The plans come from the
project's replay model; everything is checked through langgraph-sdk and the server's log file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from tests.reliability.test_secret_forms import LEAKY, SECRET, leaked_forms
from tests.serving.conftest import DevServer, sdk_client, write_replay
from tests.tools.test_roots_enforced import FILES, NOTES_TEXT, SECRET_TEXT
from tests.tools.third_party.test_mcp_auth import ROTATED
from tests.tools.third_party.test_server_errors_http import TOKEN, auth_server

REFUSED = "tok-nobody-has-this-one"
"""What the auth server accepts once the supplier has nothing newer: every request gets 401."""
ANSWER = "Fertig."


@dataclass(frozen=True)
class Served:
    """The dev server and the files the tests use."""

    server: DevServer
    folder: Path
    config: Path
    profile: Path
    accepted: Path
    """The token the auth server accepts (it reads the file on every request)."""
    supplied: Path
    """The ``token_file`` planwerk's supplier reads."""


@dataclass(frozen=True)
class SecurityFiles:
    """What :func:`security_files` wrote: the operator's MCP config, the profile file and the two token files."""

    config: Path
    profile: Path
    accepted: Path
    """The token the auth server accepts (it reads the file on every request)."""
    supplied: Path
    """The ``token_file`` planwerk's supplier reads."""


def security_files(folder: Path, stack: ExitStack) -> SecurityFiles:
    """In ``folder`` (where the operator allows files): a root with ``notes.txt``, ``secret.txt`` beside it, a
    profile file with ``enforce_roots = true`` and an MCP config naming the leaky server, the naive file server (with
    roots) and the bearer-token HTTP server (started on ``stack``, its token read from a ``token_file``)."""
    work = folder / "work"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES_TEXT)
    (folder / "secret.txt").write_text(SECRET_TEXT)
    accepted, supplied = folder / "accepted", folder / "supplied"
    accepted.write_text(TOKEN)
    supplied.write_text(TOKEN + "\n")
    profile = folder / "files.toml"
    profile.write_text('persona = "You use the tools for the user."\nenforce_roots = true\n')
    auth = stack.enter_context(auth_server(accepted))
    servers = {
        "leaky": {"command": sys.executable, "args": [LEAKY, "stdio"], "env": {"LEAKY_SECRET": SECRET}, "timeout": 30},
        "files": {"command": sys.executable, "args": [FILES, "stdio"], "cwd": str(work), "roots": [str(work)],
                  "timeout": 30},
        "auth": {"url": f"http://127.0.0.1:{auth.port}/mcp", "timeout": 20,
                 "auth": {"type": "token_file", "path": str(supplied)}},
    }  # fmt: skip
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return SecurityFiles(config, profile, accepted, supplied)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("served-security")  # in the temp folder: the operator allows its files
    (folder / "server").mkdir()
    with ExitStack() as stack:
        files = security_files(folder, stack)
        server = DevServer(folder / "server").start()
        stack.callback(server.kill)
        yield Served(server, folder, files.config, files.profile, files.accepted, files.supplied)


async def run(
    served: Served, client: LangGraphClient, thread_id: str, name: str, *calls: dict[str, Any]
) -> list[tuple[str, Any]]:
    """One run of the planned ``calls``, all in one step (one replay file per run: the model is cached per spec),
    streamed with the custom, values and updates modes; the stream's parts as ``(event, data)``."""
    one_step = json.dumps({"steps": [{"description": name, "tools": list(calls)}], "final": None})
    model = write_replay(served.folder / f"{name}.json", [one_step, ANSWER, ANSWER, ANSWER])
    context = {
        "model": model,
        "profile": str(served.profile),
        "mcp_config": str(served.config),
        "today": "2026-11-22",
        "max_plan_attempts": 1,
    }
    parts = [
        (part.event, part.data)
        async for part in client.runs.stream(
            thread_id,
            "planwerk",
            input={"messages": [{"role": "user", "content": f"Bitte {name}."}]},
            context=context,
            stream_mode=["custom", "values", "updates"],
        )
    ]
    errors = [data for event, data in parts if event == "error"]
    assert errors == [], f"{errors}\n{served.server.tail()}"
    return parts


async def calls_of(client: LangGraphClient, thread_id: str) -> dict[str, dict[str, Any]]:
    """The thread state's calls of its last run, by id."""
    state = await client.threads.get_state(thread_id)
    return {call["id"]: call for call in state["values"]["calls"]}


def echo(call_id: str, text: str) -> dict[str, Any]:
    return {"id": call_id, "name": "echo_text", "arguments": {"text": text}}


async def test_a_rotated_token_is_fetched_again_and_a_refusing_server_is_unauthorized(served: Served) -> None:
    client = sdk_client(served.server.url)
    thread = (await client.threads.create())["thread_id"]
    await run(served, client, thread, "rotation-1", echo("a", "hi"))
    first = (await calls_of(client, thread))["a"]
    assert first["result"] == {"result": "hi"}, json.dumps(first)
    # The token rotates while the pooled session holds the old one: its next request gets 401, the supplier's file
    # is read again and the call goes through.
    served.accepted.write_text(ROTATED)
    served.supplied.write_text(ROTATED)
    await run(served, client, thread, "rotation-2", echo("b", "after"))
    after = (await calls_of(client, thread))["b"]
    assert after["status"] == "ok" and after["result"] == {"result": "after"}, after
    # The server now refuses every token the supplier has: its own kind, not a service that cannot be reached.
    served.accepted.write_text(REFUSED)
    await run(served, client, thread, "rotation-3", echo("c", "refused"))
    refused = (await calls_of(client, thread))["c"]
    assert refused["status"] != "ok" and refused["kind"] == "unauthorized", refused
    assert "401" in refused["error"] and ROTATED not in refused["error"]


async def test_no_form_of_a_secret_leaves_the_server(served: Served) -> None:
    client = sdk_client(served.server.url)
    thread = (await client.threads.create())["thread_id"]
    calls = [
        {"id": name, "name": f"leak_{name}", "arguments": {}} for name in ("result", "progress", "stderr", "error")
    ]
    parts = await run(served, client, thread, "leaks", *calls)
    # The test sees what it means to: every leak happened, redacted.
    done = await calls_of(client, thread)
    assert set(done) >= {"result", "progress", "stderr", "error"}, done
    assert done["result"]["result"]["plain"] == "your key is ***.", done["result"]
    assert "bad credentials ***" in done["error"]["error"], done["error"]
    progress = [data["message"] for event, data in parts if event == "custom" and data.get("event") == "tool_progress"]
    assert progress == ["using token ***", "token b64 ***"], progress
    state = await client.threads.get_state(thread)
    history = await client.threads.get_history(thread, limit=100)
    log = served.server.log.read_text(errors="replace")
    assert "debug: connecting with *** / ***" in log  # the stdio server's stderr, redacted
    places = {
        "stream": json.dumps(parts, default=repr),
        "state": json.dumps(state, default=repr),
        "history": json.dumps(history, default=repr),
        "server log": log,
    }
    forms = leaked_forms(SECRET) | leaked_forms(TOKEN) | leaked_forms(ROTATED)
    leaks = [(where, form) for where, text in places.items() for form in forms if form in text]
    assert leaks == [], f"leaked: {leaks}"


async def test_a_file_beside_the_root_is_refused_and_its_content_appears_nowhere(served: Served) -> None:
    client = sdk_client(served.server.url)
    thread = (await client.threads.create())["thread_id"]
    read = "read_file"
    parts = await run(
        served,
        client,
        thread,
        "files",
        {"id": "s", "name": read, "arguments": {"path": "../secret.txt"}},
        {"id": "n", "name": read, "arguments": {"path": "notes.txt"}},
    )
    done = await calls_of(client, thread)
    assert done["s"]["kind"] == "forbidden" and "outside the roots of server files" in done["s"]["error"], done["s"]
    assert done["n"]["status"] == "ok" and done["n"]["result"] == {"result": NOTES_TEXT}, done["n"]
    history = await client.threads.get_history(thread, limit=100)
    seen = json.dumps([parts, await client.threads.get_state(thread), history], default=repr)
    assert SECRET_TEXT not in seen and SECRET_TEXT not in served.server.log.read_text(errors="replace")

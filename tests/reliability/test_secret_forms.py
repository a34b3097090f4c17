"""Secrets never leave, in any form: a careless server that echoes its configured secret (in a result, a progress
message, an error, a tool description, base64-encoded, upper-cased, URL-encoded, spaced, on stderr) and a server URL
with ``?api_key=...`` that fails to start leave no form of either in the events, the SQLite checkpoint, the state, the
model's prompts, the logs or planwerk's stderr.

Real MCP servers over real transports (``leaky_server.py`` over stdio, a loopback HTTP server that answers 500);
the model is the project's replay model, which records its prompts.
"""

from __future__ import annotations

import base64
import json
import logging
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from planwerk.tools.redaction import Redactor, secret_forms

LEAKY = str(Path(__file__).with_name("leaky_server.py"))
SECRET = "sk/Live+9f3a=QX7b2Zt"
"""Configured in the stdio server's env; has characters that URL-encoding and base64 change."""
API_KEY = "ak-5e1d9c0b7a3f"
"""In the HTTP server's URL query."""


def leaked_forms(secret: str) -> set[str]:
    """Every form of ``secret`` the leaky server (or a library) may show."""
    return {
        secret,
        secret.upper(),
        secret.lower(),
        quote(secret, safe=""),
        quote_plus(secret),
        base64.b64encode(secret.encode()).decode(),
        base64.b64encode(f"user:{secret}".encode()).decode(),
        base64.urlsafe_b64encode(f"x{secret}".encode()).decode(),
        " ".join(secret),
    }


class _Refusing(BaseHTTPRequestHandler):
    """Answers every request with 500 (a server that cannot start a session)."""

    def do_POST(self) -> None:
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def refusing_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _checkpoint_text(db: Path) -> str:
    """Every byte the SQLite checkpointer wrote, as text (msgpack keeps strings as they are)."""
    with sqlite3.connect(db) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        parts: list[str] = []
        for table in tables:
            for row in connection.execute(f"SELECT * FROM {table}"):
                for cell in row:
                    parts.append(cell.decode("utf-8", "replace") if isinstance(cell, bytes) else str(cell))
    return "\n".join(parts)


async def test_no_form_of_a_secret_reaches_events_checkpoints_state_prompts_logs_or_stderr(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    calls = [
        {"id": "r", "name": "leak_result", "arguments": {}},
        {"id": "p", "name": "leak_progress", "arguments": {}},
        {"id": "s", "name": "leak_stderr", "arguments": {}},
        {"id": "e", "name": "leak_error", "arguments": {}},
    ]
    plan = json.dumps({"steps": [{"description": "", "tools": calls}], "final": None})
    answer = "Ein Aufruf ist fehlgeschlagen."
    with refusing_server() as port:
        config = tmp_path / "mcp.json"
        servers = {
            "leaky": {"command": sys.executable, "args": [LEAKY, "stdio"], "env": {"LEAKY_SECRET": SECRET}},
            "remote": {"url": f"http://127.0.0.1:{port}/mcp?api_key={API_KEY}&v=2", "timeout": 10},
        }
        config.write_text(json.dumps({"mcpServers": servers}))
        model = ReplayChatModel.of([plan, answer, answer, answer])
        context = Context(today="2026-11-22", max_plan_attempts=1)
        db = tmp_path / "threads.sqlite"
        async with Agent(model=model, mcp_config=config, retriever=False, context=context, db=db) as agent:
            reply = await agent.ask("Was ist mein Schlüssel?", thread_id="leak")
            state = await agent.state("leak")
            history = [snapshot async for snapshot in agent.graph.aget_state_history(agent._config("leak"))]
    stderr = capfd.readouterr().err

    events = _dump(reply.events)
    # The test sees what it means to: every leak happened, redacted.
    results = {e["id"]: e for e in reply.events if e["event"] in ("tool_result", "tool_error")}
    assert set(results) == {"r", "p", "s", "e"}, results
    assert results["r"]["result"]["plain"] == "your key is ***."
    assert "bad credentials ***" in results["e"]["error"]
    progress = [e["message"] for e in reply.events if e["event"] == "tool_progress"]
    assert progress == ["using token ***", "token b64 ***"]
    server_errors = [e["error"] for e in reply.events if e["event"] == "server_error"]
    assert any("api_key=***" in error for error in server_errors), server_errors
    assert "debug: connecting with *** / ***" in stderr

    places = {
        "events": events,
        "state": _dump(state),
        "checkpoints (history)": _dump([(s.values, s.metadata, s.tasks) for s in history]),
        "checkpoints (SQLite file)": _checkpoint_text(db),
        "prompts": _dump([[m.content for m in prompt] for prompt in model.prompts]),
        "logs": "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records),
        "stderr": stderr,
    }
    assert "Uses the key ***" in places["prompts"]  # the tool's description, in the planner's catalog
    forms = leaked_forms(SECRET) | leaked_forms(API_KEY)
    leaks = [(where, form) for where, text in places.items() for form in forms if form in text]
    assert leaks == [], f"leaked: {leaks}"


def test_the_redactor_catches_every_form_and_keeps_short_settings() -> None:
    redactor = Redactor(frozenset({SECRET, "4711"}))
    for form in leaked_forms(SECRET):
        redacted = redactor.text(f"<{form}>")
        assert form not in redacted and "***" in redacted, form
    # A base64 text in which the secret sits at any offset, in the middle or at the end: what is left decodes to
    # no more than a character or two of it.
    for prefix in ("", "a", "ab", "abc"):
        for tail in ("", "-tail"):
            encoded = base64.b64encode(f"{prefix}{SECRET}{tail}".encode()).decode()
            left = redactor.text(encoded).replace("***", "")
            assert len(left) <= len(prefix + tail) * 4 // 3 + 6, (prefix, tail, left)
    assert redactor.text("PIN 4711, region eu, debug 1") == "PIN ***, region eu, debug 1"
    assert secret_forms("eu") == frozenset()  # too short to be redacted at all
    assert redactor.value({"k": [SECRET, 1, None], SECRET: "v"}) == {"k": ["***", 1, None], "***": "v"}


async def test_a_sampling_request_reaches_the_model_and_the_events_redacted() -> None:
    # A sampling request's messages become the run's model's prompt and a sampling_request event.
    from planwerk.tools.client_features import call_with_client_features, channel_for_call

    model = ReplayChatModel.of(["a summary"])
    events: list[dict[str, Any]] = []

    async def the_model() -> ReplayChatModel:
        return model

    def no_person(request: Any) -> Any:
        raise AssertionError(f"unexpected elicitation: {request}")

    channel = channel_for_call("c", "leak_sampling", model=the_model, emit=events.append, run_key="secret-forms")
    server = {"command": sys.executable, "args": [LEAKY, "stdio"], "env": {"LEAKY_SECRET": SECRET}, "timeout": 20}
    async with open_tools({"mcpServers": {"leaky": server}}) as tools:
        result = await call_with_client_features(lambda: tools.call("leak_sampling", {}), channel, no_person)
    assert result == {"result": "a summary"}
    prompts = _dump([[m.content for m in prompt] for prompt in model.prompts])
    assert "summarise ***" in prompts and "summarise ***" in _dump(events)
    leaks = [form for form in leaked_forms(SECRET) if form in prompts or form in _dump(events)]
    assert leaks == []


def test_a_logged_traceback_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    from planwerk.tools.redaction import secrets_redacted

    log = logging.getLogger("tests.secret_forms")
    with secrets_redacted([API_KEY]):
        try:
            raise ValueError(f"GET http://h/mcp?api_key={API_KEY} failed")
        except ValueError:
            log.exception("the request failed")
    assert "ValueError: GET http://h/mcp?api_key=*** failed" in caplog.text and API_KEY not in caplog.text

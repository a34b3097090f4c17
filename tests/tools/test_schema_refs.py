"""Tool schemas with a remote or dangling ``$ref`` are refused when listed: the tool is left out with a
``server_error`` event, the others are used, and nothing is fetched (issue 31)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from planwerk.tools.schema_refs import schema_problem

SERVER = Path(__file__).with_name("bad_schema_server.py")


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves a schema and records every request it gets."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = json.dumps({"type": "integer"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/x.json", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"properties": {"n": {"$ref": "#/$defs/N"}}, "$defs": {"N": {"type": "integer"}}}, None),
        ({"properties": {"n": {"$ref": "#"}}}, None),
        ({"items": [{"type": "string"}, {"$ref": "#/items/0"}]}, None),
        ({"properties": {"n": {"$ref": "#/$defs/Missing"}}}, "'#/$defs/Missing' at /properties/n, which is not in"),
        ({"properties": {"n": {"$ref": "https://example.org/s.json"}}}, "only references inside the schema"),
        ({"properties": {"n": {"$ref": "other.json#/a"}}}, "only references inside the schema"),
        ({"anyOf": [{"$dynamicRef": "http://x/y"}]}, "only references inside the schema"),
        ({"properties": {"n": {"$ref": 3}}}, "not a string"),
    ],
)
def test_schema_problem(schema: dict, problem: str | None) -> None:
    found = schema_problem(schema)
    assert (found is None) if problem is None else (found is not None and problem in found), found


async def test_tools_with_bad_references_are_left_out_and_nothing_is_fetched(
    schema_host: tuple[str, list[str]],
) -> None:
    url, hits = schema_host
    config = {"mcpServers": {"bad": {"command": sys.executable, "args": [str(SERVER), url], "timeout": 30}}}
    async with open_tools(config) as tools:
        assert sorted(tools.specs) == ["good"]
        assert "bad" in tools.refused and "dangling" in tools.refused["bad"] and url in tools.refused["bad"]
        model = ReplayChatModel.of(
            [json.dumps({"steps": [{"tools": [{"id": "g", "name": "good", "arguments": {"n": 2}}]}]}), "2"]
        )
        async with Agent(model=model, tools=tools, retriever=False, context=Context(today="2026-11-22")) as agent:
            reply = await agent.ask("Gib 2 zurück.", thread_id="t")
    errors = [e for e in reply.events if e["event"] == "server_error"]
    assert [e["server"] for e in errors] == ["bad"]
    assert "tool dangling left out" in errors[0]["error"] and "tool remote left out" in errors[0]["error"]
    assert reply.answer == "2"
    assert hits == []  # the remote schema was never requested

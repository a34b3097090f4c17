"""The context check at the door (:mod:`planwerk.serving.context_check`), in-process on the ``http.app`` that
``langgraph.json`` mounts: payloads whose context the operator does not allow get 422, everything else passes on
(to this app's empty router here: 404; under the server, to its routes). The dev-server test is
``tests/serving/test_hostile_context.py``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from planwerk.serving.server import app

INLINE = json.dumps({"mcpServers": {"x": {"command": "/bin/sh", "args": ["-c", "id"]}}})


@pytest.fixture
async def client(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    for name in (
        "PLANWERK_MCP_CONFIGS",
        "PLANWERK_ALLOWED_ENDPOINTS",
        "PLANWERK_MODEL_DIRS",
        "PLANWERK_PROFILE_DIRS",
        "PLANWERK_LEARN_EXAMPLES",
    ):
        monkeypatch.delenv(name, raising=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://server") as out:
        yield out


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/threads/t1/runs", {"context": {"mcp_config": INLINE}}),
        ("POST", "/threads/t1/runs/stream", {"config": {"configurable": {"mcp_config": INLINE}}}),
        ("POST", "/runs/wait", {"context": {"model": "endpoint:http://evil.example/v1"}}),
        ("POST", "/runs/batch", [{"context": {}}, {"context": {"embedding_model": "/"}}]),
        ("POST", "/threads/t1/runs/crons", {"context": {"model": "replay:/etc/passwd"}}),
        ("POST", "/assistants", {"graph_id": "planwerk", "context": {"profile": "/etc/x.toml"}}),
        ("PATCH", "/assistants/a1", {"context": {"mcp_config": INLINE}}),
        ("POST", "/threads/t1/runs/stream", {"context": {"learn_examples": True}}),
    ],
)
async def test_a_context_the_operator_does_not_allow_is_answered_422(
    client: httpx.AsyncClient, method: str, path: str, body: Any
) -> None:
    answer = await client.request(method, path, json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("context.")


@pytest.mark.parametrize(
    ("method", "path", "content"),
    [
        ("POST", "/threads/t1/runs", json.dumps({"context": {"profile": "math", "model": "default"}})),
        ("POST", "/threads/t1/runs", json.dumps({"input": {}})),
        # Malformed, not refused by the operator's policy: the run fails with its message (the factory's check).
        ("POST", "/threads/t1/runs", json.dumps({"context": {"profile": "astrology"}})),
        ("POST", "/threads/t1/runs", "not json"),
        ("POST", "/threads/search", json.dumps({"context": {"mcp_config": INLINE}})),  # no run payload
        ("GET", "/assistants/a1", ""),
    ],
)
async def test_anything_else_passes_on_unchanged(
    client: httpx.AsyncClient, method: str, path: str, content: str
) -> None:
    answer = await client.request(method, path, content=content)
    assert answer.status_code == 404  # this app has no routes: the request reached them


@pytest.mark.parametrize(
    "key", ["langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions", "user_id"]
)
@pytest.mark.parametrize("where", ["configurable", "context", "checkpoint"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/threads/t1/runs/stream"), ("POST", "/runs/wait"), ("POST", "/assistants"), ("PATCH", "/assistants/a1")],
)
async def test_a_client_cannot_claim_the_servers_user_keys(
    client: httpx.AsyncClient, method: str, path: str, where: str, key: str
) -> None:
    # Aegra fills these only when the client did not: sent by a client, they would name another user's identity.
    claim: Any = {"identity": "alice"} if key == "langgraph_auth_user" else "alice"
    sent = {key: claim, "profile": "math"}
    body = {"config": {"configurable": sent}} if where == "configurable" else {where: sent}
    answer = await client.request(method, path, json=body)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert key in detail and "the server sets these from the authenticated user" in detail

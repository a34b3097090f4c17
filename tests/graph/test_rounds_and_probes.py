"""Planning in rounds and probing calls, with real MCP servers over stdio and a replay model.

Rounds: a plan that reads first and says ``"next_round": true`` is followed by a second planner call that sees a
typed, clipped summary of the results: the bill's planted instruction and attacker's IBAN (free text) never reach
the planner unless the profile lets rounds see raw text. Probes: a read-only tool without an output schema and
without arguments is called once, and the catalog shows its result fields; tools that act or need arguments are
not probed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bank_server import ATTACKER_IBAN, PLANTED
from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from tests.helpers import bank_server, make_agent

HERE = Path(__file__).resolve().parent
PROBE = HERE / "probe_server.py"
READ_BILL = {"id": "bill", "name": "read_file", "arguments": {"file_path": "bill-december-2026.txt"}}


def config(script: Path) -> dict[str, Any]:
    return {"mcpServers": {"s": {"command": sys.executable, "args": [str(script), "stdio"], "timeout": 30}}}


@pytest.fixture
async def bank() -> AsyncIterator[Any]:
    async with open_tools({"mcpServers": {"s": bank_server()}}) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


@pytest.fixture
async def probe_tools() -> AsyncIterator[Any]:
    async with open_tools(config(PROBE)) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


def profile_file(tmp_path: Path, **settings: Any) -> str:
    lines = ['persona = "You help with the loaded tools."', 'language = "en"', "uses_dates = false"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    path = tmp_path / "p.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def agent(model: ReplayChatModel, tools: Any, profile: str) -> Agent:
    return make_agent(
        model,
        tools=tools,
        profile=profile,
        today=None,
        plan_examples=1,
        embedding_model="none",
        approve_destructive=False,
    )


def plan(*calls: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"steps": [{"description": "", "tools": [c]} for c in calls], "final": None, **extra})


EMPTY = json.dumps({"steps": [], "final": None})


async def test_a_later_round_sees_typed_summaries_never_the_planted_text(bank: Any, tmp_path: Path) -> None:
    model = ReplayChatModel.of([plan(READ_BILL, next_round=True), EMPTY, "The bill asks for 98.70.", "x", "x"])
    async with agent(model, bank, profile_file(tmp_path, plan_rounds=1)) as planwerk:
        reply = await planwerk.ask("Pay the bill in bill-december-2026.txt.")
    planner_prompts = [p for p in model.prompts if "next_round" in str(p[0].content)]
    assert '"next_round": true' in str(model.prompts[0][0].content)  # the protocol says how to ask for a round
    assert any(e["event"] == "replan" and e["decision"] == "next_round" for e in reply.events)
    second = "\n".join(str(m.content) for m in model.prompts[1])
    assert "Results so far" in second and "- bill (read_file):" in second
    assert "<text," in second  # the bill's text is shown as text of some length, typed
    assert ATTACKER_IBAN not in second and PLANTED not in second
    assert len(planner_prompts) >= 1 and reply.metadata["tool_calls"] == 1


async def test_rounds_see_raw_text_only_where_the_profile_says_so(bank: Any, tmp_path: Path) -> None:
    model = ReplayChatModel.of([plan(READ_BILL, next_round=True), EMPTY, "The bill asks for 98.70.", "x", "x"])
    profile = profile_file(tmp_path, plan_rounds=1, rounds_raw_text=True)
    async with agent(model, bank, profile) as planwerk:
        await planwerk.ask("Pay the bill in bill-december-2026.txt.")
    assert ATTACKER_IBAN in "\n".join(str(m.content) for m in model.prompts[1])


async def test_without_rounds_a_next_round_request_plans_nothing_more(bank: Any, tmp_path: Path) -> None:
    model = ReplayChatModel.of([plan(READ_BILL, next_round=True), "The bill asks for 98.70.", "x", "x"])
    async with agent(model, bank, profile_file(tmp_path)) as planwerk:
        reply = await planwerk.ask("Pay the bill in bill-december-2026.txt.")
    assert "next_round" not in str(model.prompts[0][0].content)
    assert not any(e["event"] == "replan" for e in reply.events)
    assert all("Results so far" not in str(m.content) for p in model.prompts for m in p)


async def test_a_probe_shows_the_result_fields_of_a_read_only_tool(probe_tools: Any, tmp_path: Path) -> None:
    model = ReplayChatModel.of([EMPTY, "Nothing to do.", "x", "x"])
    async with agent(model, probe_tools, profile_file(tmp_path, probe_results=True)) as planwerk:
        await planwerk.ask("Hello?")
    catalog = str(model.prompts[0][0].content)
    assert "get_status(): The service's status. → result fields (seen in one result): state, queue_length, resets" in (
        catalog
    )
    # Neither the tool that acts nor the one that needs an argument was called.
    for name in ("reset_counter", "get_ticket"):
        line = next(line for line in catalog.splitlines() if line.startswith(f"- {name}("))
        assert "fields not described" in line
    assert (await probe_tools.call("get_status", {}))["resets"] == 0


async def test_without_probes_the_catalog_says_the_fields_are_unknown(probe_tools: Any, tmp_path: Path) -> None:
    model = ReplayChatModel.of([EMPTY, "Nothing to do.", "x", "x"])
    async with agent(model, probe_tools, profile_file(tmp_path)) as planwerk:
        await planwerk.ask("Hello?")
    line = next(x for x in str(model.prompts[0][0].content).splitlines() if x.startswith("- get_status("))
    assert "fields not described" in line

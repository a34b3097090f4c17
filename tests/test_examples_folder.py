"""The files in examples/ (the README's "Your own MCP servers") load, and the MCP config starts its real server."""

from __future__ import annotations

from pathlib import Path

from planwerk.profiles import load_profile_file
from planwerk.prompts.examples import library
from planwerk.tools.config import load_config
from planwerk.tools.mcp import open_tools

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_the_clock_profile_and_its_examples_load() -> None:
    profile = load_profile_file(EXAMPLES / "clock.toml")
    assert profile.name == "clock" and profile.language == "en"
    assert profile.allowed_tools == frozenset({"get_current_time", "convert_time"})
    assert profile.refusals["de"].startswith("Ich kenne mich nur mit Uhrzeiten")
    examples = library(profile.examples)
    assert len(examples) == 2 and all(e.tools <= profile.allowed_tools for e in examples)


async def test_the_time_config_starts_mcp_server_time_with_the_profiles_tools() -> None:
    profile = load_profile_file(EXAMPLES / "clock.toml")
    async with open_tools(load_config(EXAMPLES / "time.json")) as tools:
        assert profile.allowed_tools is not None and profile.allowed_tools <= set(tools.specs)
        now = await tools.call("get_current_time", {"timezone": "Asia/Tokyo"})
    assert now["timezone"] == "Asia/Tokyo"

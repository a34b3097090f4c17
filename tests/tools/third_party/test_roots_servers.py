"""Roots are configured per server and offered as MCP roots: server-everything lists them, server-filesystem works
in them and nowhere else; a server without roots is not told the client has any (its roots tools stay hidden)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.config import ConfigError, Root, load_config
from planwerk.tools.mcp import open_tools
from tests.third_party import npm_server


async def until(make: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], within_s: float = 20.0) -> Any:
    """The first result of ``make()`` that is ``done``, polling; a clear failure when none is within ``within_s``."""
    async with asyncio.timeout(within_s):
        while not done(result := await make()):
            await asyncio.sleep(0.05)
    return result


def everything(**extra: Any) -> dict[str, Any]:
    """server-everything over stdio, with ``extra`` keys in its config."""
    return {"mcpServers": {"everything": {"command": npm_server("mcp-server-everything"), "timeout": 30, **extra}}}


async def test_server_everything_lists_the_configured_roots(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    config = everything(roots=[str(tmp_path), {"path": str(docs), "name": "Dokumente"}])
    async with open_tools(config) as tools:
        assert "get-roots-list" in tools.specs  # offered only to a client that advertises roots
        text = await tools.call("get-roots-list", {})
    assert "Current MCP Roots (2 total)" in text
    assert f"URI: {tmp_path.as_uri()}" in text and f"Dokumente\n   URI: {docs.as_uri()}" in text


async def test_without_roots_the_server_is_not_told_of_any_and_hides_its_roots_tool() -> None:
    async with open_tools(everything()) as tools:
        assert not tools.unavailable
        assert "echo" in tools.specs and "get-roots-list" not in tools.specs


async def test_server_filesystem_works_in_its_roots_only(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "note.txt").write_text("hallo", encoding="utf-8")
    (outside / "secret.txt").write_text("geheim", encoding="utf-8")
    # No directory on the command line: the server takes its allowed directories from the client's roots.
    config = {
        "mcpServers": {"fs": {"command": npm_server("mcp-server-filesystem"), "timeout": 30, "roots": [str(inside)]}}
    }
    async with open_tools(config) as tools:
        assert not tools.unavailable, tools.unavailable
        # The server asks for the roots after the session starts, in the background: wait until it has them.
        allowed = await until(lambda: tools.call("list_allowed_directories", {}), lambda r: str(inside) in str(r))
        assert str(outside) not in str(allowed)
        note = await tools.call("read_text_file", {"path": str(inside / "note.txt")})
        assert "hallo" in str(note)
        with pytest.raises(ToolError, match=r"(?i)access denied.*outside allowed directories"):
            await tools.call("read_text_file", {"path": str(outside / "secret.txt")})


def test_roots_are_paths_or_file_uris_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(
        {
            "mcpServers": {
                "s": {"command": "x", "roots": ["data", "file:///srv/shared", {"uri": "file:///a", "name": "A"}]}
            }
        }
    )
    assert config.servers["s"].roots == (
        Root(uri=(tmp_path / "data").as_uri()),
        Root(uri="file:///srv/shared"),
        Root(uri="file:///a", name="A"),
    )


@pytest.mark.parametrize(
    ("roots", "message"),
    [
        ("/data", r"mcpServers\.s\.roots: expected a list of paths or file:// URIs"),
        (["https://example.org/x"], r"roots\[0\]: MCP roots are file:// URIs or paths, got 'https://example.org/x'"),
        ([{"uri": "file:///a", "path": "/a"}], r'roots\[0\]: expected exactly one of "uri" and "path"'),
        ([{"path": "/a", "title": "A"}], r"roots\[0\]: unknown key\(s\) title"),
        ([""], r"roots\[0\]: expected a list of paths"),
    ],
)
def test_bad_roots_get_one_clear_error(roots: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config({"mcpServers": {"s": {"command": "x", "roots": roots}}})


async def test_a_tool_that_requires_tasks_is_not_offered_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="planwerk.tools.client_features")
    async with open_tools(everything()) as tools:
        assert "echo" in tools.specs and "simulate-research-query" not in tools.specs
    [line] = [r.getMessage() for r in caplog.records if "simulate-research-query" in r.getMessage()]
    assert 'requires task-augmented execution (execution.taskSupport "required")' in line

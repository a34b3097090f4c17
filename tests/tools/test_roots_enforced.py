"""Paths are planwerk's business too: with ``enforce_roots = true`` a call whose arguments name a file outside the
server's roots is refused before it is sent (kind ``forbidden``), and the file's content appears nowhere.

A real naive file server (``file_server.py``, stdio) that reads any path it is given; the plans come from the
project's replay model.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Agent
from planwerk.core.tools import ToolError
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.call_options import call_options
from planwerk.tools.mcp import open_tools
from planwerk.tools.paths import outside_roots, path_arguments

FILES = str(Path(__file__).with_name("file_server.py"))
SECRET_TEXT = "the-launch-code-is-0000"
NOTES_TEXT = "milk, bread and honey"


def layout(tmp_path: Path) -> tuple[Path, Path]:
    """``work/notes.txt`` (inside the root), ``secret.txt`` beside the root, and ``work/link`` pointing at it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES_TEXT)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TEXT)
    (work / "link.txt").symlink_to(secret)
    return work, secret


def server_config(work: Path, secret: Path) -> dict[str, Any]:
    env = {"FILES_RESOURCES": f"{work / 'notes.txt'}:{secret}"}
    server = {"command": sys.executable, "args": [FILES, "stdio"], "cwd": str(work), "roots": [str(work)]}
    return {"mcpServers": {"files": {**server, "env": env, "timeout": 20}}}


async def test_a_question_for_a_file_beside_the_root_is_refused_and_its_content_appears_nowhere(
    tmp_path: Path,
) -> None:
    work, secret = layout(tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(server_config(work, secret)))
    profile = tmp_path / "files.toml"
    profile.write_text('persona = "You read files for the user."\nenforce_roots = true\n')
    plan = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "s", "name": "read_file", "arguments": {"path": "../secret.txt"}},
        {"id": "n", "name": "read_file", "arguments": {"path": "notes.txt"}}]}], "final": None})  # fmt: skip
    answer = "The file is not allowed; the notes say milk, bread and honey."
    model = ReplayChatModel.of([plan, answer, answer, answer])
    context = Context(today="2026-11-22", max_plan_attempts=1)
    async with Agent(model=model, mcp_config=config, profile=str(profile), retriever=False, context=context) as agent:
        reply = await agent.ask("What is in ../secret.txt and in my notes?", thread_id="paths")
        state = await agent.state("paths")
    calls = {c["id"]: c for c in state["calls"]}
    assert calls["s"]["kind"] == "forbidden" and "outside the roots of server files" in calls["s"]["error"]
    assert calls["n"]["status"] == "ok" and calls["n"]["result"] == {"result": NOTES_TEXT}
    seen = json.dumps([reply.events, state, [[m.content for m in p] for p in model.prompts]], default=repr)
    assert SECRET_TEXT not in seen


async def test_file_arguments_and_resource_uris_are_checked_and_other_arguments_pass(tmp_path: Path) -> None:
    work, secret = layout(tmp_path)
    async with open_tools(server_config(work, secret)) as tools:
        # Without enforcement the naive server reads anything: the check below is what stops it.
        assert await tools.call("read_file", {"path": "../secret.txt"}) == {"result": SECRET_TEXT}
        with call_options(enforce_roots=True):
            for path in ("../secret.txt", str(secret), secret.as_uri(), "link.txt", "~/../../etc/passwd"):
                with pytest.raises(ToolError) as caught:
                    await tools.call("read_file", {"path": path})
                assert caught.value.kind == "forbidden", path
                assert SECRET_TEXT not in str(caught.value)
            assert await tools.call("read_file", {"path": "notes.txt"}) == {"result": NOTES_TEXT}
            assert await tools.call("read_file", {"path": str(work / "notes.txt")}) == {"result": NOTES_TEXT}
            assert await tools.call("count_words", {"text": "a b .. c"}) == {"result": 4}
            with pytest.raises(ToolError) as resource:
                await tools.call("read_resource", {"uri": secret.as_uri()})
            assert resource.value.kind == "forbidden"
            notes = await tools.call("read_resource", {"uri": (work / "notes.txt").as_uri()})
            assert NOTES_TEXT in json.dumps(notes)


def test_what_counts_as_a_file_argument() -> None:
    schema = {"properties": {"target": {"type": "string", "format": "uri"}, "q": {"type": "string"}}}
    found = path_arguments(
        schema,
        {
            "target": "docs/a.md",  # the schema says it is a URI
            "q": "how are you?",  # plain text
            "source_path": "x.txt",  # the name says it is a path
            "url": "https://example.org/a/../b",  # another scheme
            "nested": {"items": ["/etc/shadow", "ok"], "dir": "sub"},
            "up": "a/../../b",
        },
    )
    assert {(f.where, f.value) for f in found} == {
        ("target", "docs/a.md"),
        ("source_path", "x.txt"),
        ("nested.items[0]", "/etc/shadow"),
        ("nested.dir", "sub"),
        ("up", "a/../../b"),
    }
    root = "file:///srv/data"
    assert outside_roots(None, {"path": "x/y.txt"}, [root]) == []  # relative to the first root
    assert [o.where for o in outside_roots(None, {"path": "../y.txt"}, [root])] == ["path"]
    assert [o.where for o in outside_roots(None, {"path": "/srv/data2/y"}, [root])] == ["path"]  # not a prefix
    assert [o.where for o in outside_roots(None, {"path": "y"}, [])] == ["path"]  # no roots: nothing is inside
    assert os.path.realpath("/srv/data") == "/srv/data"

"""``read_resource`` with several servers offering resources (two real server-everything instances): the server
is chosen by the URI where the servers' lists or templates tell, named by the plan where they do not; and the
choice itself, as a pure function."""

from __future__ import annotations

import base64
import gzip
import re

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.mcp import open_tools
from planwerk.tools.resources import READ_RESOURCE, ResourceCatalog, choose_server, read_resource_spec
from tests.tools.third_party.content_servers import everything_stdio

SESSION_FILE = "demo://resource/session/only-a.gz"


async def test_two_servers_one_read_resource_that_names_the_server_when_the_uri_does_not_tell() -> None:
    # b offers only resources (allowed_tools), so the two instances' tool names do not collide.
    config = {"mcpServers": {"a": everything_stdio(), "b": {**everything_stdio(), "allowed_tools": [READ_RESOURCE]}}}
    async with open_tools(config) as tools:
        assert not tools.unavailable, tools.unavailable
        spec = tools.specs[READ_RESOURCE]
        assert spec.input_schema["properties"]["server"]["enum"] == ["a", "b"]
        assert spec.input_schema["required"] == ["uri"]
        # A URI under both servers' templates: the first of them reads it.
        dynamic = await tools.call(READ_RESOURCE, {"uri": "demo://resource/dynamic/text/3"})
        assert "Resource 3: This is a plaintext resource" in dynamic["text"]
        # A session resource exists on a only, and appeared after the lists were read: the plan must name a.
        data = "data:text/plain;base64," + base64.b64encode(b"only on a").decode()
        await tools.call("gzip-file-as-resource", {"name": "only-a.gz", "data": data})
        with pytest.raises(ToolError) as unnamed:
            await tools.call(READ_RESOURCE, {"uri": SESSION_FILE})
        assert unnamed.value.kind == "invalid_arguments" and "name the server (one of: a, b)" in str(unnamed.value)
        on_a = await tools.call(READ_RESOURCE, {"uri": SESSION_FILE, "server": "a"})
        assert gzip.decompress(base64.b64decode(on_a["content"][0]["blob"])) == b"only on a"
        with pytest.raises(ToolError) as elsewhere:
            await tools.call(READ_RESOURCE, {"uri": SESSION_FILE, "server": "b"})
        assert elsewhere.value.kind == "invalid_arguments" and "only-a.gz" in str(elsewhere.value)
        with pytest.raises(ToolError) as unknown:
            await tools.call(READ_RESOURCE, {"uri": SESSION_FILE, "server": "c"})
        assert unknown.value.kind == "invalid_arguments"


CATALOGS = [
    ResourceCatalog("docs", uris=("file:///docs/a.md",)),
    ResourceCatalog("demo", templates=("demo://item/{id}",)),
]


@pytest.mark.parametrize(
    ("arguments", "server"),
    [
        ({"uri": "file:///docs/a.md"}, "docs"),
        ({"uri": "demo://item/7"}, "demo"),
        ({"uri": "file:///docs/a.md", "server": "demo"}, "demo"),
    ],
)
def test_the_server_is_the_named_one_else_the_one_that_lists_the_uri(arguments: dict[str, str], server: str) -> None:
    assert choose_server(arguments, CATALOGS) == (server, arguments["uri"])


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"uri": "  "}, "uri is empty"),
        ({"uri": "x://y", "server": "nope"}, "server 'nope' offers no resources; expected one of: docs, demo"),
        ({"uri": "x://y"}, "no server lists 'x://y'; name the server (one of: docs, demo)"),
    ],
)
def test_what_cannot_be_chosen_is_named(arguments: dict[str, str], says: str) -> None:
    with pytest.raises(ToolError, match=re.escape(says)) as error:
        choose_server(arguments, CATALOGS)
    assert error.value.kind == "invalid_arguments"


def test_one_server_needs_no_server_argument() -> None:
    [only] = CATALOGS[:1]
    spec = read_resource_spec([only], timeout_s=12)
    assert "server" not in spec.input_schema["properties"] and spec.timeout_s == 12 and spec.server == "docs"
    assert choose_server({"uri": "anything:/x"}, [only]) == ("docs", "anything:/x")
    assert "file:///docs/a.md" in spec.description


def test_read_resource_only_reads() -> None:
    """MCP ``resources/read`` changes nothing: the tool is read-only, so a failed read asks no answer to say that an
    action was not done, and its text is one the extract step may read."""
    spec = read_resource_spec(CATALOGS)
    assert spec.read_only and not spec.acts

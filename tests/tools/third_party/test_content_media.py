"""Audio and large binary content, from a real FastMCP server over stdio (server-everything sends neither), and
the shapes of every content type built from the MCP SDK's own types."""

from __future__ import annotations

import base64
import json

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from planwerk.execution import ExecutionPolicy
from planwerk.tools.content import MAX_INLINE_BINARY_CHARS, elide_binary, resource_value, tool_result_value
from planwerk.tools.mcp import open_tools
from tests.tools.third_party.content_media_server import PNG_SIGNATURE, WAV_HEADER
from tests.tools.third_party.content_servers import media_stdio


async def test_audio_is_data_and_a_5_mb_image_keeps_its_size_but_not_its_bytes() -> None:
    async with open_tools({"mcpServers": {"media": media_stdio()}}) as tools:
        assert not tools.unavailable, tools.unavailable
        audio = await tools.call("get_audio", {})  # before: NotImplementedError in the MCP adapter
        big = await tools.call("get_image", {"size_bytes": 5_000_000})
        small = await tools.call("get_image", {"size_bytes": 1000})
    clip = audio["content"][1]
    assert clip["type"] == "audio" and clip["mimeType"] == "audio/wav"
    assert base64.b64decode(clip["data"]).startswith(WAV_HEADER) and audio["text"] == "a clip"
    image = big["content"][1]
    assert image["type"] == "image" and image["mimeType"] == "image/png" and image["size_bytes"] == 5_000_000
    assert "data" not in image and "not kept" in image["omitted"] and big["text"] == "an image of 5000000 bytes"
    # The whole result stays far below the result cap, so nothing else of it is truncated.
    assert len(json.dumps(big)) < ExecutionPolicy.max_result_chars // 100
    assert base64.b64decode(small["content"][1]["data"]).startswith(PNG_SIGNATURE)


def test_every_content_type_has_its_documented_shape() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="intro"),
            ImageContent(type="image", data="aW1n", mimeType="image/png"),
            AudioContent(type="audio", data="YXVk", mimeType="audio/mpeg"),
            ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt", mimeType="text/plain"),
            EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///b.txt", text="bee")),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///c.bin", blob="Yw==", mimeType="application/octet-stream"),
            ),
        ]
    )
    assert tool_result_value(result) == {
        "text": "intro\nbee",
        "content": [
            {"type": "text", "text": "intro"},
            {"type": "image", "mimeType": "image/png", "data": "aW1n"},
            {"type": "audio", "mimeType": "audio/mpeg", "data": "YXVk"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
            {"type": "resource", "uri": "file:///b.txt", "text": "bee"},
            {"type": "resource", "uri": "file:///c.bin", "mimeType": "application/octet-stream", "blob": "Yw=="},
        ],
    }
    read = ReadResourceResult(contents=[TextResourceContents(uri="file:///b.txt", text="bee", mimeType="text/plain")])
    assert resource_value(read) == {
        "text": "bee",
        "content": [{"type": "resource", "uri": "file:///b.txt", "mimeType": "text/plain", "text": "bee"}],
    }


def test_text_only_results_are_as_before() -> None:
    def text(*parts: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=p) for p in parts])

    assert tool_result_value(text('{"a": 1}')) == {"a": 1}
    assert tool_result_value(text("1", "[2]")) == [1, [2]]
    assert tool_result_value(text("one", "two")) == "one\ntwo"
    assert tool_result_value(CallToolResult(content=[])) == ""
    assert tool_result_value(CallToolResult(content=[], structuredContent={"x": 1})) == {"x": 1}


def test_binary_over_the_limit_is_omitted_and_prompts_never_show_base64() -> None:
    blob = "A" * (MAX_INLINE_BINARY_CHARS + 4)
    embedded = EmbeddedResource(type="resource", resource=BlobResourceContents(uri="x:/b", blob=blob))
    result = tool_result_value(CallToolResult(content=[embedded]))
    [item] = result["content"]
    assert "blob" not in item and item["size_bytes"] == (MAX_INLINE_BINARY_CHARS + 4) * 3 // 4
    small = tool_result_value(CallToolResult(content=[ImageContent(type="image", data="aW1n", mimeType="image/png")]))
    assert elide_binary(small)["content"][0] == {"type": "image", "mimeType": "image/png", "data": "<base64, 3 bytes>"}
    assert elide_binary({"data": "kept: not a content item"}) == {"data": "kept: not a content item"}

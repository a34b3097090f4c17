"""Every MCP content type of the real server-everything becomes data a later call can ``$ref`` (over stdio and
streamable HTTP): images, resource links, embedded text and blob resources, structured content; and the built-in
``read_resource`` reads what a resource link points to."""

from __future__ import annotations

import base64
import gzip
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.core.tools import ToolError
from planwerk.execution import execute_plan
from planwerk.tools.mcp import MCPToolSource, open_tools
from planwerk.tools.resources import READ_RESOURCE
from tests.tools.third_party.content_servers import everything_config

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HELLO = "hello, planwerk"
HELLO_URI = "data:text/plain;base64," + base64.b64encode(HELLO.encode()).decode()
"""A data: URI, so server-everything's gzip tool needs no network."""
LINK_URI = "gz.content.0.uri"
"""The path of the first content item's URI in the result of the call ``gz``."""


@pytest.fixture(params=["stdio", "http"])
async def everything(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MCPToolSource]:
    """A tool source on a fresh server-everything, over each transport."""
    with everything_config(request.param, tmp_path) as config:
        async with open_tools(config) as tools:
            assert not tools.unavailable, tools.unavailable
            yield tools


async def test_an_image_is_its_mime_type_and_base64_data_beside_the_text(everything: MCPToolSource) -> None:
    result = await everything.call("get-tiny-image", {})
    assert result["text"] == "Here's the image you requested:\nThe image above is the MCP logo."
    text, image, after = result["content"]
    assert text == {"type": "text", "text": "Here's the image you requested:"}
    assert image["type"] == "image" and image["mimeType"] == "image/png" and set(image) == {"type", "mimeType", "data"}
    assert base64.b64decode(image["data"]).startswith(PNG_SIGNATURE)
    assert after["text"] == "The image above is the MCP logo."


async def test_resource_links_keep_uri_name_and_mime_type(everything: MCPToolSource) -> None:
    result = await everything.call("get-resource-links", {"count": 2})
    links = [item for item in result["content"] if item["type"] == "resource_link"]
    assert [(link["uri"], link["name"], link["mimeType"]) for link in links] == [
        ("demo://resource/dynamic/blob/1", "Blob Resource 1", "text/plain"),
        ("demo://resource/dynamic/text/2", "Text Resource 2", "text/plain"),
    ]
    assert links[0]["description"].startswith("Resource 1")


async def test_embedded_blob_and_text_resources_keep_their_uri_and_content(everything: MCPToolSource) -> None:
    blob = await everything.call("get-resource-reference", {"resourceType": "Blob", "resourceId": 1})
    [resource] = [item for item in blob["content"] if item["type"] == "resource"]
    assert resource["uri"] == "demo://resource/dynamic/blob/1" and resource["mimeType"] == "text/plain"
    assert base64.b64decode(resource["blob"]).decode().startswith("Resource 1: This is a base64 blob")
    text = await everything.call("get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    [resource] = [item for item in text["content"] if item["type"] == "resource"]
    assert resource["uri"] == "demo://resource/dynamic/text/2" and "Resource 2: This is a plaintext" in resource["text"]
    assert "Resource 2: This is a plaintext" in text["text"]  # text resources join the text blocks in "text"


async def test_an_inline_gzip_resource_is_its_blob(everything: MCPToolSource) -> None:
    result = await everything.call(
        "gzip-file-as-resource", {"name": "inline.gz", "data": HELLO_URI, "outputType": "resource"}
    )
    [resource] = result["content"]
    assert resource["uri"] == "demo://resource/session/inline.gz" and resource["mimeType"] == "application/gzip"
    assert gzip.decompress(base64.b64decode(resource["blob"])).decode() == HELLO
    assert result["text"] == ""  # before: "" was the whole result, with status ok


async def test_structured_content_is_the_result_as_before(everything: MCPToolSource) -> None:
    result = await everything.call("get-structured-content", {"location": "Chicago"})
    assert set(result) == {"temperature", "conditions", "humidity"}


async def test_a_plan_reads_the_resource_a_link_points_to_through_a_ref(everything: MCPToolSource) -> None:
    plan = Plan.model_validate(
        {
            "steps": [
                {
                    "description": "compress",
                    "tools": [
                        {"id": "gz", "name": "gzip-file-as-resource", "arguments": {"name": "a.gz", "data": HELLO_URI}}
                    ],
                },
                {
                    "description": "read what the link points to",
                    "tools": [{"id": "file", "name": READ_RESOURCE, "arguments": {"uri": {"$ref": LINK_URI}}}],
                },
            ],
            "final": None,
        }
    )
    assert check_plan(plan, everything.specs) == []  # read_resource is a tool like any other for the plan check
    records = await execute_plan(plan, everything)
    assert records["gz"]["result"]["content"][0]["type"] == "resource_link"
    assert records["file"]["status"] == "ok", records["file"]
    [part] = records["file"]["result"]["content"]
    assert part["uri"] == "demo://resource/session/a.gz" and part["mimeType"] == "application/gzip"
    assert gzip.decompress(base64.b64decode(part["blob"])).decode() == HELLO


async def test_read_resource_reads_a_listed_document_and_names_what_is_wrong(everything: MCPToolSource) -> None:
    spec = everything.specs[READ_RESOURCE]
    assert spec.input_schema["required"] == ["uri"] and "server" not in spec.input_schema["properties"]
    assert "demo://resource/static/document/architecture.md" in spec.description
    doc = await everything.call(READ_RESOURCE, {"uri": "demo://resource/static/document/features.md"})
    assert doc["text"].startswith("# Everything Server - Features")
    assert doc["content"][0]["mimeType"] == "text/markdown"
    with pytest.raises(ToolError) as missing:
        await everything.call(READ_RESOURCE, {"uri": "demo://resource/static/document/nope.md"})
    # server-everything answers an unknown URI with JSON-RPC -32602 (invalid params), not the spec's -32002.
    assert missing.value.kind == "invalid_arguments" and "nope.md" in str(missing.value)
    with pytest.raises(ToolError) as no_uri:
        await everything.call(READ_RESOURCE, {})
    assert no_uri.value.kind == "invalid_arguments" and "uri" in str(no_uri.value)

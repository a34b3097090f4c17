"""What the planner's catalog shows of real third-party tools: argument types, descriptions, enums, array item
types, required and optional arguments, the fields of object arguments; and results without base64 in prompts."""

from __future__ import annotations

from planwerk.core.tools import ToolSpec
from planwerk.prompts.render import render_result, render_tool
from planwerk.prompts.texts import texts_for
from planwerk.tools.mcp import open_tools
from tests.third_party import npm_server
from tests.tools.third_party.content_servers import everything_stdio

ENGLISH = texts_for("en")


async def test_the_catalog_shows_what_a_planner_needs_to_fill_in_the_arguments() -> None:
    config = {
        "mcpServers": {
            "everything": everything_stdio(),
            "memory": {"command": npm_server("mcp-server-memory"), "timeout": 30},
        }
    }
    async with open_tools(config) as tools:
        assert not tools.unavailable, tools.unavailable
        specs = tools.specs
        image = await tools.call("get-tiny-image", {})
    # Enums, a required argument (no default) beside optional ones (with theirs), descriptions.
    assert render_tool(specs["get-resource-reference"], ENGLISH).startswith(
        '- get-resource-reference(resourceType: "Text"|"Blob" = "Text", resourceId: number = 1): '
    )
    annotated = render_tool(specs["get-annotated-message"], ENGLISH)
    assert annotated.startswith('- get-annotated-message(messageType: "error"|"success"|"debug", includeImage: ')
    assert "messageType: Type of message to demonstrate different annotation patterns" in annotated
    # Array item types, and the fields of objects inside arrays (before: array[object]).
    assert render_tool(specs["create_entities"], ENGLISH).startswith(
        "- create_entities(entities: array[{name: string, entityType: string, observations: array[string]}]): "
    )
    assert "names: array[string]" in render_tool(specs["open_nodes"], ENGLISH)
    # The output fields a $ref may use.
    assert render_tool(specs["get-structured-content"], ENGLISH).endswith(
        "→ result fields: temperature, conditions, humidity"
    )
    # Results reach prompts without their base64.
    rendered = render_result(image, ENGLISH)
    assert '"data":"<base64, ' in rendered and image["content"][1]["data"][:40] not in rendered


def test_optional_object_fields_are_marked_and_deep_objects_stay_short() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {
                    "tag": {"type": "string"},
                    "range": {"type": "object", "properties": {"low": {"type": "object", "properties": {}}}},
                },
                "required": ["tag"],
            }
        },
        "required": ["filter"],
    }
    assert render_tool(ToolSpec("find", input_schema=schema), ENGLISH, unknown_results=False) == (
        "- find(filter: {tag: string, range?: {low?: object}})"
    )

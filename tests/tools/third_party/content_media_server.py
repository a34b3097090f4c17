"""A FastMCP server (stdio) for content server-everything does not send: audio, and an image of a given size."""

from __future__ import annotations

import base64

from mcp.server.fastmcp import FastMCP
from mcp.types import AudioContent, ImageContent, TextContent

WAV_HEADER = b"RIFF\x24\x00\x00\x00WAVEfmt "
"""The start of a WAV file: enough for the test to recognise what it got back."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

server = FastMCP("media")


@server.tool(structured_output=False)
def get_audio() -> list[TextContent | AudioContent]:
    """A short text and a (truncated) WAV clip."""
    clip = base64.b64encode(WAV_HEADER + bytes(64)).decode()
    return [TextContent(type="text", text="a clip"), AudioContent(type="audio", data=clip, mimeType="audio/wav")]


@server.tool(structured_output=False)
def get_image(size_bytes: int) -> list[TextContent | ImageContent]:
    """A text and a PNG of ``size_bytes`` bytes (a signature, then zeros)."""
    data = PNG_SIGNATURE + bytes(max(0, size_bytes - len(PNG_SIGNATURE)))
    image = ImageContent(type="image", data=base64.b64encode(data).decode(), mimeType="image/png")
    return [TextContent(type="text", text=f"an image of {size_bytes} bytes"), image]


if __name__ == "__main__":
    server.run("stdio")

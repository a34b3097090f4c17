"""Every kind of MCP content as plain data a plan can ``$ref``: the shapes are documented in ``docs/tools.md``.

A tool result (``CallToolResult``) becomes:

- its **structured content** when the server sent one (``structuredContent`` is the result; ``content`` is only
  its backwards-compatible rendering);
- else, when every block is text: the text parsed as JSON if it is JSON, else the text (several text blocks that
  are each JSON become a list of the parsed values; otherwise the texts joined by newlines), as before;
- else (any image, audio, resource link or embedded resource): ``{"text": <the text blocks and text resources,
  joined by newlines>, "content": [<one item per block, in order>]}``.

The items (:func:`content_item`), named as in MCP:

- ``{"type": "text", "text"}``
- ``{"type": "image" | "audio", "mimeType", "data"}`` (``data`` is base64)
- ``{"type": "resource_link", "uri", "name", "mimeType", "description"}`` (``mimeType``, ``description`` when sent)
- ``{"type": "resource", "uri", "mimeType", "text"}`` or ``{"type": "resource", "uri", "mimeType", "blob"}``
  (an embedded text or blob resource; ``blob`` is base64)

A resource read (``ReadResourceResult``, :func:`resource_value`) has the same ``{"text", "content"}`` shape, one
``resource`` item per part of the resource.

**Binary data is bounded.** Base64 ``data`` or ``blob`` longer than :data:`MAX_INLINE_BINARY_CHARS` is not kept:
the item keeps its type, MIME type, URI and ``size_bytes``, gets ``"omitted": "<why>"`` and no data. A result must
stay small enough for the checkpoint and the call log (``ExecutionPolicy.max_result_chars``, 200,000 characters,
truncates a whole result to a useless preview; this keeps the rest of the result intact instead). A 5 MB PNG
(6.7 MB as base64: under the transport's 8 MB message limit, so it arrives) becomes ``{"type": "image",
"mimeType": "image/png", "size_bytes": 5000000, "omitted": "..."}``; a message over the transport's limit is not
read at all and the call fails (``planwerk.tools.transport``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

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

from planwerk.core.sanitize import sanitize_value

MAX_INLINE_BINARY_CHARS = 100_000
"""The longest base64 ``data``/``blob`` kept in a result (about 73 KB of binary data); longer ones are omitted."""

ContentType = Literal["text", "image", "audio", "resource_link", "resource"]
"""The ``type`` of a content item."""

BINARY_KEYS = ("data", "blob")
"""The keys of a content item that hold base64 data."""


def tool_result_value(result: CallToolResult) -> Any:
    """The plain value of a (successful) tool result; see the module docstring. Sanitized (depth cap, surrogates)."""
    if result.structuredContent is not None:
        return sanitize_value(result.structuredContent)
    blocks = list(result.content)
    if all(isinstance(block, TextContent) for block in blocks):
        return sanitize_value(_text_value([block.text for block in blocks if isinstance(block, TextContent)]))
    return sanitize_value(_mixed([content_item(block) for block in blocks]))


def resource_value(result: ReadResourceResult) -> dict[str, Any]:
    """The plain value of a resource read: ``{"text", "content"}`` with one ``resource`` item per part."""
    return sanitize_value(_mixed([_resource_item(part) for part in result.contents]))


def content_item(block: Any) -> dict[str, Any]:
    """One MCP content block as a plain dict (see the module docstring); unknown kinds keep their dump."""
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageContent | AudioContent):
        return _bounded({"type": block.type, "mimeType": block.mimeType, "data": block.data}, "data")
    if isinstance(block, ResourceLink):
        item: dict[str, Any] = {"type": "resource_link", "uri": str(block.uri), "name": block.name}
        if block.mimeType:
            item["mimeType"] = block.mimeType
        if block.description:
            item["description"] = block.description
        return item
    if isinstance(block, EmbeddedResource):
        return _resource_item(block.resource)
    # A content type newer than this SDK: keep what it says rather than drop it.
    dumped = block.model_dump(mode="json", exclude_none=True) if hasattr(block, "model_dump") else {"value": block}
    return dumped if isinstance(dumped, dict) else {"value": dumped}


def _resource_item(part: TextResourceContents | BlobResourceContents | Any) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "resource", "uri": str(part.uri)}
    if part.mimeType:
        item["mimeType"] = part.mimeType
    if isinstance(part, TextResourceContents):
        item["text"] = part.text
        return item
    if isinstance(part, BlobResourceContents):
        item["blob"] = part.blob
        return _bounded(item, "blob")
    return item


def _bounded(item: dict[str, Any], key: str) -> dict[str, Any]:
    """``item`` without its base64 ``key`` when that is longer than :data:`MAX_INLINE_BINARY_CHARS`."""
    encoded = item[key]
    if len(encoded) <= MAX_INLINE_BINARY_CHARS:
        return item
    kept = {k: v for k, v in item.items() if k != key}
    kept["size_bytes"] = _decoded_size(encoded)
    kept["omitted"] = (
        f"{len(encoded):,} characters of base64 over the limit of {MAX_INLINE_BINARY_CHARS:,}: the data is not kept"
    )
    return kept


def _decoded_size(encoded: str) -> int:
    """The size in bytes of the data base64 ``encoded`` holds (from its length, without decoding it)."""
    padding = len(encoded) - len(encoded.rstrip("="))
    return max(0, len(encoded) * 3 // 4 - padding)


def _mixed(items: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [item["text"] for item in items if isinstance(item.get("text"), str)]
    return {"text": "\n".join(texts), "content": items}


def _text_value(texts: Sequence[str]) -> Any:
    if len(texts) > 1:
        parsed = [_json_or_none(text) for text in texts]
        if all(value is not None for value in parsed):
            return parsed
    text = "\n".join(texts)
    value = _json_or_none(text)
    return text if value is None else value


def _json_or_none(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["-0123456789tfn':
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):  # deeper than json can parse: it stays text
        return None


def elide_binary(value: Any) -> Any:
    """``value`` with the base64 of every content item replaced by a short note (for prompts: a model reads
    nothing in base64, and it would fill a small model's window)."""
    if isinstance(value, list):
        return [elide_binary(item) for item in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") in ("image", "audio", "resource"):
        return {
            key: (f"<base64, {_decoded_size(item):,} bytes>" if key in BINARY_KEYS and isinstance(item, str) else item)
            for key, item in value.items()
        }
    return {key: elide_binary(item) for key, item in value.items()}

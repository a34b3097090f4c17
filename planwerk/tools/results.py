"""Turning an MCP tool result (a LangChain ToolMessage) into the plain value the plan works with.

The value is sanitized on receipt (:mod:`planwerk.core.sanitize`): nesting is capped and lone surrogates are
replaced, so whatever a server sends can be checkpointed, printed and passed on to another call.
"""

from __future__ import annotations

import json
from typing import Any

from planwerk.core.sanitize import sanitize_value


def content_text(content: Any) -> str:
    """The text of a ToolMessage's content: the string, or the text blocks of a block list, joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(parts)
    return "" if content is None else str(content)


def normalise(content: Any, artifact: Any) -> Any:
    """Structured content when the server gave it; else the text parsed as JSON if it is JSON; else the text.

    Several text blocks that are each JSON become a list of the parsed values. The value is sanitized (depth cap,
    no lone surrogates).
    """
    return sanitize_value(_plain(content, artifact))


def _plain(content: Any, artifact: Any) -> Any:
    if isinstance(artifact, dict) and artifact.get("structured_content") is not None:
        return artifact["structured_content"]
    if isinstance(content, list) and len(content) > 1:
        texts = [content_text([block]) for block in content]
        parsed = [_json_or_none(t) for t in texts]
        if all(p is not None for p in parsed):
            return parsed
    text = content_text(content)
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

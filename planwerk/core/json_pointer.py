"""Local JSON-schema references (``#/$defs/Name``), as pydantic writes models and enums into output schemas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pointer_target(root: Any, ref: Any) -> Any | None:
    """What the local reference ``ref`` (``#/a/b``) points to inside ``root``; ``None`` when ``ref`` is not a local
    reference or a step of it is missing."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
        if target is None:
            return None
    return target

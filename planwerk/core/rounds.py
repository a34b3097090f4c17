"""Planning in rounds: what the planner of a later round sees of the results of the earlier ones.

A plan whose later calls need values only a read can tell may end its first round with ``"next_round": true``:
its calls run, and the planner plans the rest with a summary of their results. Plans are made before results are
read, and that is what keeps text a third party planted in a result from changing which tools are called; a round
would break it if the planner read the results. So by default the summary is *typed and clipped*: numbers,
booleans, nulls and short single-token strings (ids, codes, dates, amounts written as text) are shown; any string
with spaces or longer than :data:`MAX_TOKEN_CHARS` shows only as ``<text, N characters>``, and a later call takes
values out of it with the ``extract`` step (the planner still never reads it). A profile may let rounds see raw
text (``Profile.rounds_raw_text``); then strings are shown clipped. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

MAX_TOKEN_CHARS = 64
"""A string longer than this is text, not a typed value (an international account code has 34 characters at most,
an ISO time 30)."""
MAX_RAW_CHARS = 300
"""A string shown raw (profiles whose rounds may see raw text) is cut to this many characters."""
MAX_ITEMS = 5
"""The first items of a list are shown; the rest is counted."""
MAX_FIELDS = 20
"""The first fields of an object are shown; the rest is counted."""
MAX_DEPTH = 4
"""Deeper values show as their kind only."""
MAX_SUMMARY_CHARS = 1500
"""One result's summary is cut to this many characters."""

_TOKEN = re.compile(r"^[^\s]+$")


def summarize_value(value: Any, *, raw_text: bool = False, depth: int = 0) -> Any:
    """``value`` with every string that is text (spaces, or longer than :data:`MAX_TOKEN_CHARS`) replaced by
    ``"<text, N characters>"`` (or clipped to :data:`MAX_RAW_CHARS` when ``raw_text``), lists and objects cut."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        if raw_text:
            return value if len(value) <= MAX_RAW_CHARS else value[:MAX_RAW_CHARS] + f"… ({len(value)} characters)"
        if len(value) <= MAX_TOKEN_CHARS and _TOKEN.match(value):
            return value
        return f"<text, {len(value)} characters>"
    if depth >= MAX_DEPTH:
        return f"<{type(value).__name__}>"
    if isinstance(value, Mapping):
        keys = list(value)
        shown = {str(k): summarize_value(value[k], raw_text=raw_text, depth=depth + 1) for k in keys[:MAX_FIELDS]}
        if len(keys) > MAX_FIELDS:
            shown["…"] = f"{len(keys) - MAX_FIELDS} more fields"
        return shown
    if isinstance(value, list | tuple):
        items = [summarize_value(item, raw_text=raw_text, depth=depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… {len(value) - MAX_ITEMS} more items")
        return items
    return f"<{type(value).__name__}>"


def summarize_results(results: Mapping[str, Any], tools: Mapping[str, str], *, raw_text: bool = False) -> str:
    """One line per result: ``- <id> (<tool>): <summary as JSON>``, in the order of ``results``; ``tools`` names
    each id's tool. Each line's JSON is cut to :data:`MAX_SUMMARY_CHARS`."""
    lines = []
    for call_id, value in results.items():
        summary = json.dumps(summarize_value(value, raw_text=raw_text), ensure_ascii=False)
        if len(summary) > MAX_SUMMARY_CHARS:
            summary = summary[:MAX_SUMMARY_CHARS] + " …"
        lines.append(f"- {call_id} ({tools.get(call_id, '?')}): {summary}")
    return "\n".join(lines)

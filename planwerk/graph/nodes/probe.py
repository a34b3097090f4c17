"""Probing calls: the result fields of tools that declare no output schema, seen in one real result.

Where the profile allows it (``Profile.probe_results``), before a plan is made each loaded tool that

- only reads (MCP ``readOnlyHint``: a probe must change nothing),
- declares no output schema, and
- needs no argument (a probe must not invent one)

is called once (per :class:`~planwerk.graph.deps.Deps`, so once per process and tool set), and the planner's catalog
shows the fields of its result (:func:`planwerk.core.observed.observed_schema`). A tool whose probe fails, times
out or returns text keeps the catalog's "fields not described". Only field names and types reach the prompt,
never the result's values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from planwerk.core.observed import observed_schema
from planwerk.core.tools import ToolError, ToolSpec
from planwerk.tools.call_options import call_options

PROBE_TIMEOUT_S = 10.0
"""A probe waits at most this long (a tool's own shorter timeout still applies)."""


def probe_candidates(specs: Mapping[str, ToolSpec]) -> list[str]:
    """The tools a probing call may be made to: read-only, no output schema, no required argument."""
    return [
        name
        for name, spec in sorted(specs.items())
        if spec.read_only and not spec.output_schema and not (spec.input_schema or {}).get("required")
    ]


async def probed_specs(
    tools: Any, specs: Mapping[str, ToolSpec], seen: dict[str, dict[str, Any] | None], *, enforce_roots: bool = False
) -> dict[str, ToolSpec]:
    """``specs`` with an output schema seen in one result for each :func:`probe_candidates` tool; ``seen`` caches
    the schemas (``None``: probed, nothing to show) so each tool is probed once."""
    todo = [name for name in probe_candidates(specs) if name not in seen]

    async def probe(name: str) -> None:
        try:
            with call_options(timeout_s=specs[name].timeout_s or PROBE_TIMEOUT_S, enforce_roots=enforce_roots):
                result = await asyncio.wait_for(tools.call(name, {}), PROBE_TIMEOUT_S)
        except (ToolError, TimeoutError):
            seen[name] = None
            return
        seen[name] = observed_schema(result)

    await asyncio.gather(*(probe(name) for name in todo))
    return {
        name: replace(spec, output_schema=seen[name]) if not spec.output_schema and seen.get(name) else spec
        for name, spec in specs.items()
    }

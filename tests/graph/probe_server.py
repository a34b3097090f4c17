"""A small MCP server for the probing-call tests: tools without output schemas, one that reads and needs no
argument (a probe may call it), one that acts and one that needs an argument (a probe must call neither).

Run as ``python tests/graph/probe_server.py stdio``.
"""

from __future__ import annotations

import json

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

from planwerk.tools.servers._run import serve

READS = ToolAnnotations(readOnlyHint=True)


def build(host: str, port: int) -> FastMCP:
    """The server; ``resets`` counts calls of ``reset_counter`` (a probe of it would show)."""
    server = FastMCP("probe", host=host, port=port)
    state = {"resets": 0}

    @server.tool(annotations=READS, structured_output=False)
    async def get_status() -> str:
        """The service's status."""
        return json.dumps({"state": "open", "queue_length": 3, "resets": state["resets"]})

    @server.tool(structured_output=False)
    async def reset_counter() -> str:
        """Resets the counter."""
        state["resets"] += 1
        return json.dumps({"reset": True, "resets": state["resets"]})

    @server.tool(annotations=READS, structured_output=False)
    async def get_ticket(ticket_id: str) -> str:
        """One ticket by its id."""
        return json.dumps({"id": ticket_id, "title": "printer jam"})

    return server


if __name__ == "__main__":
    serve(build)

"""A naive file server for the path tests: it reads whatever path it is given, relative to its working directory,
and lists two files as ``file://`` resources (``$FILES_RESOURCES``, paths separated by ``:``). MCP roots are
advisory; it ignores them, as a careless third-party server does.

Run as ``python tests/tools/file_server.py stdio``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from mcp.server.fastmcp import FastMCP

from planwerk.tools.servers._run import serve


def build(host: str, port: int) -> FastMCP:
    """The naive file server."""
    server = FastMCP("files", host=host, port=port)

    @server.tool()
    async def read_file(path: str) -> str:
        """The text of the file at ``path`` (relative to the server's working directory)."""
        return Path(path).expanduser().read_text(encoding="utf-8")

    @server.tool()
    async def count_words(text: str) -> int:
        """How many words ``text`` has (takes no file)."""
        return len(text.split())

    for index, name in enumerate(p for p in os.environ.get("FILES_RESOURCES", "").split(":") if p):
        file = Path(name)

        def reader(file: Path = file) -> Callable[[], str]:
            return lambda: file.read_text(encoding="utf-8")

        server.resource(file.as_uri(), name=f"file{index}", mime_type="text/plain")(reader())
    return server


if __name__ == "__main__":
    serve(build)

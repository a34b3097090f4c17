"""Command line of the bundled MCP servers: ``python -m <server> [stdio|http] [--host H] [--port N]``."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any


def serve(build: Callable[[str, int], Any], argv: list[str] | None = None) -> None:
    """Parse the command line; run the server ``build(host, port)`` returns over stdio or streamable HTTP."""
    parser = argparse.ArgumentParser(description="Run a planwerk MCP server.")
    parser.add_argument("transport", nargs="?", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    # stdout belongs to the protocol on stdio: logs go to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server = build(args.host, args.port)
    server.run(transport="stdio" if args.transport == "stdio" else "streamable-http")

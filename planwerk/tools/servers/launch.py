"""Starting a bundled (or any ``python -m``) MCP server over streamable HTTP as a subprocess: benchmarks, tests,
and local setups that want HTTP instead of stdio."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve_http(
    args: Sequence[str], *, env: dict[str, str] | None = None, timeout_s: float = 30.0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``python <args> http --port N`` on a free port; yield its MCP URL and process; kill it at the end.

    ``args`` is e.g. ``["-m", "planwerk.tools.servers.math"]``. Raises if the server exits or does not listen
    within ``timeout_s``.
    """
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, *args, "http", "--port", str(port)],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"MCP server {' '.join(args)} exited with {proc.returncode} before listening")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"MCP server {' '.join(args)} did not listen on {port} within {timeout_s:g} s"
                    ) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)

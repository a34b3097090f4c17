"""Servers that tests start on a free loopback port, and the check that the server answering there is ours.

A port is picked (bound and released again) before the server binds it: another process may take it in between,
and its answers would pass for our server's while ours exited. A cluster crash test once waited 90 s in CI for calls
to a counter that was never up. So a server counts as started only when

* our process, or one it started, holds every listening socket that a connection to ``127.0.0.1:port`` can reach
  (:func:`listens`, read from Linux ``/proc``), and
* its answer names the expected server (a probe: :func:`mcp_named` for MCP servers, the fixture's own otherwise).

When the port turned out to be taken, the server is started again on another one (:data:`START_ATTEMPTS`); when
starting fails for good, the error names the ports tried, how each try ended (the exit code) and the log's tail.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from planwerk.models.llama_server import free_loopback_port

START_ATTEMPTS = 5
"""Tries on different ports before a start that keeps colliding fails."""
IN_USE = ("address already in use", "eaddrinuse", "is already in use")
"""How servers word a port that another process holds (uvicorn, PostgreSQL, node, langgraph dev), lower case."""
IN_USE_EXIT_S = 2.0
"""How long a server that said its port is taken gets to exit (for its exit code) before it is stopped."""
LOOPBACK_LISTEN_ADDRESSES = {
    "/proc/net/tcp": {"0100007F", "00000000"},  # 127.0.0.1, 0.0.0.0
    "/proc/net/tcp6": {"0" * 32, "0000000000000000FFFF00000100007F"},  # ::, ::ffff:127.0.0.1
}
"""Local addresses (as ``/proc/net/tcp*`` writes them) of listening sockets that a connection to 127.0.0.1 reaches."""

Probe = Callable[[int], str | None]
"""Asks the server on a port who it is: ``None`` once the expected server answers, else what it saw instead."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (it may be taken before the server binds it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def loopback_listeners(port: int) -> set[str]:
    """The sockets (``socket:[inode]``) that listen on ``port`` and answer a connection to 127.0.0.1."""
    inodes = set()
    for table, addresses in LOOPBACK_LISTEN_ADDRESSES.items():
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if fields[3] == "0A" and int(hex_port, 16) == port and address in addresses:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    return inodes


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process it started (and they started), from the parent links in ``/proc/*/stat``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # "pid (comm) state ppid ...": comm may hold spaces
        children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def held_sockets(pid: int) -> set[str]:
    """The sockets among process ``pid``'s open files (empty when it is gone or not ours to read)."""
    held = set()
    with contextlib.suppress(OSError):
        for handle in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{handle}")
                if target.startswith("socket:"):
                    held.add(target)
    return held


def listens(pid: int, port: int, *, tree: bool = True) -> bool:
    """Whether process ``pid`` (with ``tree``: or a process it started) holds every listening socket that a
    connection to 127.0.0.1:``port`` reaches, and there is one: then the server on that port is ours.
    Linux only (``/proc``)."""
    listeners = loopback_listeners(port)
    if not listeners:
        return False
    held = held_sockets(pid)
    if tree and not listeners <= held:
        for other in process_tree(pid)[1:]:
            held |= held_sockets(other)
    return listeners <= held


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


def served_name(url: str, headers: dict[str, str] | None = None) -> str | None:
    """What the MCP endpoint at ``url`` answers ``initialize`` with: its ``serverInfo.name`` (read from JSON or from
    the SSE stream's ``data:`` lines), ``(not an MCP server: HTTP n)`` for another answer, ``None`` while nothing
    answers there. The session the probe opened is closed again (stateful servers keep one per initialize)."""
    try:
        reply = httpx.post(
            url,
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", **(headers or {})},
            timeout=5.0,
        )
    except httpx.TransportError:
        return None
    session = reply.headers.get("mcp-session-id")
    if session:
        with contextlib.suppress(httpx.HTTPError):
            httpx.delete(url, headers={**(headers or {}), "mcp-session-id": session}, timeout=5.0)
    bodies = [line[5:] for line in reply.text.splitlines() if line.startswith("data:")] or [reply.text]
    for body in bodies:
        try:
            return str(json.loads(body)["result"]["serverInfo"]["name"])
        except (ValueError, KeyError, TypeError):
            continue
    return f"(not an MCP server: HTTP {reply.status_code})"


def mcp_named(name: str | None, path: str = "/mcp", headers: dict[str, str] | None = None) -> Probe:
    """A probe for an MCP server over streamable HTTP at ``path`` whose ``initialize`` answer names ``name``
    (``None``: any MCP server, for callers that do not know the name)."""

    def probe(port: int) -> str | None:
        served = served_name(f"http://127.0.0.1:{port}{path}", headers)
        if served is None:
            return "no answer"
        if served.startswith("(not an MCP server") or (name is not None and served != name):
            return f"initialize answered {served!r}, expected {name or 'an MCP server'!r}"
        return None

    return probe


@dataclass(frozen=True)
class Started:
    """A server that :func:`start_server` saw answering on ``port`` from a listening socket of its own."""

    port: int
    process: subprocess.Popen[bytes]
    seconds: float
    """From spawning the process (the successful try) until it answered."""


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL and reap ``process`` (the default way to stop a try that did not start)."""
    if process.poll() is None:
        process.kill()
    process.wait(timeout=20)


def log_tail(log: Path, chars: int = 2000, since: int = 0) -> str:
    """The end of a server's log (from byte ``since`` on), for failure messages."""
    if not log.exists():
        return "(no log)"
    with log.open("rb") as read:
        read.seek(since)
        text = read.read().decode(errors="replace")
    return text[-chars:] or "(empty)"


def says_in_use(log: Path, since: int = 0) -> bool:
    """Whether the server wrote to ``log`` (from byte ``since`` on) that its port is taken (:data:`IN_USE`)."""
    written = log_tail(log, chars=1_000_000, since=since).lower()
    return any(words in written for words in IN_USE)


def start_server(
    spawn: Callable[[int], subprocess.Popen[bytes]],
    probe: Probe,
    *,
    what: str,
    log: Path,
    timeout_s: float,
    port: int | None = None,
    stop: Callable[[subprocess.Popen[bytes]], None] = kill,
) -> Started:
    """Start a server with ``spawn(port)`` (its output goes to ``log``) and wait until it is ours and answers.

    It counts as started once the process (or one it started) holds the port's listening socket (:func:`listens`)
    and ``probe(port)`` finds the expected server. When its try ended because another process holds the port (the
    server said so in its log, or a foreign listener holds it), it is started again on a fresh port, up to
    :data:`START_ATTEMPTS` tries. A given ``port`` is kept (a restart on the same address): taken, it fails.
    A try that fails otherwise fails the test at once; ``stop`` ends a try that did not come up."""
    tries: list[str] = []
    for _attempt in range(1 if port is not None else START_ATTEMPTS):
        chosen = port if port is not None else free_port()
        since = log.stat().st_size if log.exists() else 0
        spawned = time.monotonic()
        process = spawn(chosen)
        deadline = spawned + timeout_s
        seen = "no listening socket yet"
        while process.poll() is None and time.monotonic() < deadline:
            if listens(process.pid, chosen):
                seen = probe(chosen) or ""
                if not seen:
                    return Started(port=chosen, process=process, seconds=time.monotonic() - spawned)
            elif loopback_listeners(chosen):
                seen = "another process listens on the port"
                if says_in_use(log, since):  # and ours said so: it exits, or runs on elsewhere (langgraph dev)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.wait(timeout=IN_USE_EXIT_S)
                    break
            time.sleep(0.1)
        if process.poll() is None:
            stop(process)
            ended = f"no answer within {timeout_s:g} s ({seen}), stopped"
            if says_in_use(log, since) and loopback_listeners(chosen):
                ended = "said the port is in use, stopped"
        else:
            ended = f"exited with {process.returncode}"
        taken = says_in_use(log, since) or bool(loopback_listeners(chosen))
        tries.append(f"port {chosen}: {ended}{' (port taken by another process)' if taken else ''}")
        if not taken:
            break
    pytest.fail(f"{what} did not start; tried {'; '.join(tries)}\n--- the end of {log}:\n{log_tail(log)}")


@contextlib.contextmanager
def mcp_http_server(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    timeout_s: float = 30.0,
    name: str | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python <args> http --port N`` on a free loopback port, counted as started by :func:`start_server` (an
    MCP server named ``name``; ``None``: any); yields its MCP URL and process; killed at the end."""
    with tempfile.TemporaryDirectory(prefix="planwerk-mcp-http-") as folder:
        log = Path(folder) / "server.log"

        def spawn(port: int) -> subprocess.Popen[bytes]:
            with log.open("ab") as out:
                return subprocess.Popen(
                    [sys.executable, *args, "http", "--port", str(port)],
                    env={**os.environ, **(env or {})},
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )

        server = start_server(spawn, mcp_named(name), what=f"MCP server {' '.join(args)}", log=log, timeout_s=timeout_s)
        try:
            yield f"http://127.0.0.1:{server.port}/mcp", server.process
        finally:
            kill(server.process)


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """An ASGI ``app`` served by uvicorn on a free loopback port in a thread; yields ``http://127.0.0.1:<port>``."""
    port = free_loopback_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)

"""Helpers for the MCP tests: recorded upstream responses, a local stub of the upstream APIs, and MCP servers
started as subprocesses on free 127.0.0.1 ports."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.ports import mcp_http_server

CACHE = Path(__file__).parents[1] / "fixtures" / "upstream-cache"
HERE = Path(__file__).parent
ECHO_SCRIPT = str(HERE / "echo_server.py")

BARCELONA = (41.3825802, 2.177073)
JUNE_POINT = (41.441124, 2.2014387)
FORECAST_FILE = "open-meteo_41.4375_2.1875_2026-01-16_2026-01-23_ad021ed8.json"
BEACH_FILE = "overpass_10el_2026-01-16T152158_fbe39af2.json"
SIGHTSEEING_FILE = "overpass_80el_2026-01-15T155550_bc85a7ff.json"
PARKS_FILE = "overpass_80el_2026-01-16T151956_8f979496.json"
RUNNING_FILE = "overpass_80el_2026-01-15T155654_0fd3bf5d.json"
UNKNOWN_PLACE = "Atlantis"
"""The one place the upstream stub's Nominatim does not know (it answers ``[]``, as Nominatim does)."""


def recorded(name: str) -> Any:
    """A recorded response body (the recorder's ``_cached_at`` bookkeeping removed)."""
    body = json.loads((CACHE / name).read_text(encoding="utf-8"))
    if isinstance(body, dict):
        body.pop("_cached_at", None)
    return body


def nominatim_body(lat: float, lon: float, name: str) -> list[dict[str, str]]:
    """A Nominatim ``/search`` answer around recorded coordinates (Nominatim sends lat/lon as strings)."""
    return [{"lat": str(lat), "lon": str(lon), "display_name": name}]


def archive_for_year(year: int) -> Any:
    """The recorded June 10-17 archive response of ``year`` (2016..2025)."""
    matches = sorted(CACHE.glob(f"open-meteo_41.441124_2.2014387_{year}-06-10_*.json"))
    return recorded(matches[0].name)


def overpass_for(query: str) -> Any:
    """The recorded Overpass response that matches the activity of ``query``."""
    if '"natural"="beach"' in query:
        return recorded(BEACH_FILE)
    if '"highway"="pedestrian"' in query:
        return recorded(RUNNING_FILE)
    if '"leisure"="park"' in query:
        return recorded(PARKS_FILE)
    return recorded(SIGHTSEEING_FILE)


class _UpstreamStub(BaseHTTPRequestHandler):
    """Nominatim, Open-Meteo and Overpass on one local port, answering with the recorded bodies."""

    def _send(self, body: Any, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/search" and query.get("q") == UNKNOWN_PLACE:
            self._send([])
        elif url.path == "/search":
            self._send(nominatim_body(*BARCELONA, "Barcelona, Catalunya, España"))
        elif url.path == "/v1/forecast":
            self._send(recorded(FORECAST_FILE))
        elif url.path == "/v1/archive":
            self._send(archive_for_year(int(query["start_date"][:4])))
        else:
            self._send({"error": True, "reason": f"no such path {url.path}"}, status=404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        form = parse_qs(self.rfile.read(length).decode())
        self._send(overpass_for(form["data"][0]))

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


@pytest.fixture(scope="session")
def upstream_stub() -> Iterator[str]:
    """Base URL of a local stub of the upstream APIs, serving the recorded responses."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _UpstreamStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def upstream_env(base: str, cache_dir: Path) -> dict[str, str]:
    """Environment that points the travel server at ``base`` with a private cache and a pinned today."""
    return {
        "NOMINATIM_URL": f"{base}/search",
        "OPEN_METEO_FORECAST_URL": f"{base}/v1/forecast",
        "OPEN_METEO_ARCHIVE_URL": f"{base}/v1/archive",
        "OVERPASS_URL": f"{base}/api/interpreter",
        "PLANWERK_CACHE_DIR": str(cache_dir),
        "PLANWERK_TODAY": "2026-01-16",
        "PLANWERK_HTTP_RETRIES": "0",
    }


def http_server(
    args: list[str], env: dict[str, str] | None = None, timeout_s: float = 30
) -> AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    """Start ``python <args> http --port N`` and yield its MCP URL and process; killed at the end. It counts as
    started when its process holds the listening socket and answers ``initialize``; a port taken by another
    process first is given up for another (:func:`tests.ports.mcp_http_server`)."""
    return mcp_http_server(args, env=env, timeout_s=timeout_s)


@contextmanager
def silent_tcp_server() -> Iterator[str]:
    """A TCP server that accepts connections and never answers; yields its MCP-looking URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)  # read nothing, answer nothing
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        sock.close()


def child_pids(marker: str) -> list[int]:
    """PIDs of this process's children whose command line contains ``marker`` (Linux /proc)."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and marker in cmdline:
            found.append(int(entry.name))
    return found

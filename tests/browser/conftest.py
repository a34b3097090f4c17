"""The real-browser test's servers: agent-chat-ui's production build (``next start``), ``langgraph dev`` and Debian's
Chromium driven by Playwright (``executable_path``: no browser is downloaded).

``scripts/setup.d/60-chat-ui.sh`` installs Chromium and builds the app into ``~/.cache/planwerk/chat-ui/app``
(``PLANWERK_CHAT_UI``). Without them the tests skip and say how to get them, except in CI (``CI`` set), where a
missing piece fails them: a green CI must not hide a setup step that did not run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.ports import start_server
from tests.serving.conftest import DevServer

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
APP = Path(os.environ.get("PLANWERK_CHAT_UI") or CACHE / "planwerk" / "chat-ui") / "app"
"""Where the setup script built agent-chat-ui (outside the clone: CI's fresh clones reuse the build)."""
SCREENSHOTS_ENV = "PLANWERK_SCREENSHOTS"
"""A folder to keep each step's screenshot in (docs/chat-ui refreshes the docs); unset: the test's temp folder."""
START_TIMEOUT_S = 60.0


def missing(what: str) -> None:
    """Skip (fail in CI) because ``what`` is not installed."""
    message = f"{what}; run scripts/setup.d/60-chat-ui.sh (as root: it installs Debian's chromium)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, for Playwright's ``executable_path``."""
    path = shutil.which("chromium")
    if path is None:
        missing("Debian's chromium is not installed")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing("the Python package playwright is not installed (pip install -e '.[dev]')")
    return str(path)


@pytest.fixture(scope="session")
def chat_ui_app() -> Path:
    """The built app's folder (its ``.next`` holds the production build)."""
    if not (APP / ".next" / "BUILD_ID").is_file():
        missing(f"agent-chat-ui is not built in {APP}")
    if shutil.which("node") is None:
        missing("node is not installed")
    return APP


def serves_chat_ui(port: int) -> str | None:
    """The probe of ``next start``: the page answers 200 and is agent-chat-ui's."""
    try:
        reply = httpx.get(f"http://127.0.0.1:{port}/", timeout=5.0)
    except httpx.TransportError:
        return "no answer"
    ok = reply.status_code == 200 and "Agent Chat" in reply.text
    return None if ok else f"GET / answered HTTP {reply.status_code} {reply.text[:200]!r}"


@pytest.fixture(scope="module")
def chat_ui(chat_ui_app: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-chat-ui's production build served on a free loopback port; its URL."""
    log = tmp_path_factory.mktemp("chat-ui") / "next.log"
    next_bin = chat_ui_app / "node_modules" / "next" / "dist" / "bin" / "next"

    def spawn(port: int) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                ["node", str(next_bin), "start", "--hostname", "127.0.0.1", "--port", str(port)],
                cwd=chat_ui_app,
                env={**os.environ, "NEXT_TELEMETRY_DISABLED": "1"},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    started = start_server(spawn, serves_chat_ui, what="agent-chat-ui (next start)", log=log, timeout_s=START_TIMEOUT_S)
    try:
        yield f"http://127.0.0.1:{started.port}"
    finally:
        started.process.terminate()
        try:
            started.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            started.process.kill()
            started.process.wait(timeout=20)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """``langgraph dev`` on the repo's langgraph.json. Auth is off, as on a developer's own machine: the chat UI
    sends no bearer token (it knows only an ``X-Api-Key``)."""
    dev = DevServer(tmp_path_factory.mktemp("browser-api"), extra_env={"PLANWERK_AUTH": "off"})
    try:
        yield dev.start()
    finally:
        dev.kill()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where the test keeps each step's screenshot."""
    folder = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder

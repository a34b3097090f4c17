"""llama.cpp's OpenAI-compatible server (llama-cpp-python's ``llama_cpp.server``) as a child process on loopback.

The server lives in its own virtualenv, ``.llama-venv/`` at the project root (``scripts/setup.d/30-llama-server.sh``
builds it; ``PLANWERK_LLAMA_PYTHON`` names another interpreter that has ``llama-cpp-python[server]``). It serves one
GGUF file, by default the packaged model planwerk runs in-process, so ``endpoint:<base url>`` and ``default`` are
the same weights. Used by the tests and ``python -m benchmarks.model_server``; in production run the same
command line yourself (:meth:`LlamaServer.command`, docs/serving.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LLAMA_PYTHON_ENV = "PLANWERK_LLAMA_PYTHON"
DEFAULT_LLAMA_PYTHON = PROJECT_ROOT / ".llama-venv" / "bin" / "python"
INSTALL_HINT = "bash scripts/setup.d/30-llama-server.sh builds it into .llama-venv/"
READY_TIMEOUT_S = 300.0
"""Bound on the server's start (imports plus mapping the GGUF: seconds on an idle machine, more on a busy one)."""
STOP_TIMEOUT_S = 15.0


class LlamaServerError(RuntimeError):
    """The llama.cpp server is not installed, did not start, or died while starting (one line, with its log's end)."""


@dataclass(frozen=True)
class LlamaServerSettings:
    """How the server runs the model."""

    n_ctx: int = 8192
    """Context window in tokens (the server's default, 2048, is shorter than a plan prompt with examples)."""
    n_threads: int | None = None
    """CPU threads for generation; ``None``: the number of CPUs this process may use."""
    model_alias: str = "planwerk-default"
    """The model name the server answers to (``endpoint:<url>#<alias>``)."""


def llama_server_python() -> Path | None:
    """The interpreter that has ``llama-cpp-python[server]``: ``$PLANWERK_LLAMA_PYTHON`` or ``.llama-venv``'s;
    ``None`` when there is none (the package is not installed)."""
    configured = os.environ.get(LLAMA_PYTHON_ENV)
    path = Path(configured).expanduser() if configured else DEFAULT_LLAMA_PYTHON
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None
    probe = subprocess.run(
        [str(path), "-c", "import llama_cpp.server.app"], capture_output=True, timeout=120, check=False
    )
    return path if probe.returncode == 0 else None


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """One llama.cpp server process serving ``gguf`` on ``127.0.0.1:<port>``; a context manager that starts it,
    waits until ``/v1/models`` answers, and stops it (SIGTERM, then SIGKILL) on exit."""

    def __init__(
        self,
        gguf: Path,
        *,
        python: Path | None = None,
        port: int | None = None,
        settings: LlamaServerSettings | None = None,
        log_file: Path | None = None,
    ) -> None:
        self.gguf = Path(gguf)
        self.python = python
        self.port = port or free_loopback_port()
        self.settings = settings or LlamaServerSettings()
        self.log_file = log_file
        self.process: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``endpoint:<base_url>`` is the spec)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def spec(self) -> str:
        """planwerk's model spec for this server."""
        return f"endpoint:{self.base_url}#{self.settings.model_alias}"

    def command(self, python: Path) -> list[str]:
        """The server's command line."""
        threads = self.settings.n_threads or len(os.sched_getaffinity(0))
        return [
            str(python), "-m", "llama_cpp.server",
            "--model", str(self.gguf),
            "--model_alias", self.settings.model_alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.settings.n_ctx),
            "--n_threads", str(threads),
            "--n_threads_batch", str(threads),
            # Its default ends the running reply early, as if complete, whenever another request arrives: two
            # concurrent runs got each other's plans cut (empty or half replies). Queued requests wait instead.
            "--interrupt_requests", "False",
        ]  # fmt: skip

    def start(self, ready_timeout_s: float = READY_TIMEOUT_S) -> LlamaServer:
        """Start the process and wait until it serves; raises :class:`LlamaServerError` if it cannot."""
        python = self.python or llama_server_python()
        if python is None:
            raise LlamaServerError(f"llama-cpp-python[server] is not installed ({INSTALL_HINT})")
        if not self.gguf.is_file():
            raise LlamaServerError(f"no GGUF file at {self.gguf}")
        log_path = self.log_file or Path(os.environ.get("TMPDIR", "/tmp")) / f"planwerk-llama-{self.port}.log"
        self.log_file = log_path
        handle = open(log_path, "wb")  # noqa: SIM115 (closed in stop)
        self._log_handle = handle
        self.process = subprocess.Popen(
            self.command(python), stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopping it reaches nothing else
        )  # fmt: skip
        try:
            self._wait_ready(ready_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=5.0) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise LlamaServerError(
                        f"the llama.cpp server exited with code {self.process.returncode} while starting: "
                        f"{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                time.sleep(0.2)
        raise LlamaServerError(f"the llama.cpp server did not answer within {timeout_s:g} s: {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        """The end of the server's log, on one line."""
        if self.log_file is None or not self.log_file.is_file():
            return "(no log)"
        tail = self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
        return " | ".join(line.strip() for line in tail if line.strip()) or "(empty log)"

    def kill(self) -> None:
        """SIGKILL the server at once (what a crash looks like to its clients)."""
        if self.process is not None and self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT_S`); idempotent."""
        if self.process is not None and self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
        handle = self._log_handle
        if handle is not None:
            handle.close()
            self._log_handle = None

    def __enter__(self) -> LlamaServer:
        return self.start() if self.process is None else self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _signal_group(pid: int, signum: int) -> None:
    """Signal the server's process group (it may have ended a moment ago)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signum)

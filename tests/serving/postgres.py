"""A private PostgreSQL cluster for tests: ``initdb`` in a temp folder, a free port, stopped and removed after.

The port is picked before the server binds it: when another process took it in between, the server is started
again on another port, and a started server counts only when its postmaster holds the listening socket
(:mod:`tests.ports`)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.ports import START_ATTEMPTS, free_port, listens, log_tail, says_in_use

TIMEOUT_S = 60
INSTALL_HINT = "apt-get install postgresql (listed in .ci/apt-packages.txt)"


class PostgresUnavailable(RuntimeError):
    """This machine cannot run a private PostgreSQL server; the message says why."""


def _bindir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not candidates:
        raise PostgresUnavailable(f"the PostgreSQL server binaries (initdb) are not installed: {INSTALL_HINT}")
    return Path(candidates[-1]).parent


def _as_owner() -> tuple[list[str], int | None, int | None]:
    """How to run the server programs: initdb and postgres refuse to run as root, so root uses ``postgres``."""
    if os.geteuid() != 0:
        return [], None, None
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no 'postgres' user to run the server: {INSTALL_HINT}"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and 'runuser' is missing, so the server cannot drop root")
    return [runuser, "-u", "postgres", "--"], account.pw_uid, account.pw_gid


@contextmanager
def private_postgres() -> Iterator[str]:
    """Start a throwaway cluster (trust auth on 127.0.0.1) and yield its connection URI."""
    bindir = _bindir()
    prefix, uid, gid = _as_owner()
    folder = Path(tempfile.mkdtemp(prefix="planwerk-pg-"))
    data = folder / "data"
    if uid is not None and gid is not None:
        os.chown(folder, uid, gid)

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-2000:]}")

    def start() -> int:
        """``pg_ctl start`` on a free port (waits until the server accepts connections); the port."""
        log, tries = folder / "server.log", []
        for _attempt in range(START_ATTEMPTS):
            port = free_port()
            since = log.stat().st_size if log.exists() else 0
            options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
            command = [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(log),
                "-w",
                "-t",
                str(TIMEOUT_S),
            ]
            done = subprocess.run(
                [*prefix, *command, "start"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
            if done.returncode == 0:
                postmaster = int((data / "postmaster.pid").read_text().split()[0])
                if listens(postmaster, port, tree=False):
                    return port
                run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", str(TIMEOUT_S), "stop")
                tries.append(f"port {port}: started, but another process holds the port's listening socket")
                continue
            taken = says_in_use(log, since)
            tries.append(f"port {port}: pg_ctl start exited with {done.returncode}")
            if not taken:
                raise PostgresUnavailable(
                    f"pg_ctl start failed ({done.returncode}) on port {port}: {done.stderr[-2000:]}\n"
                    f"--- the end of {log}:\n{log_tail(log, since=since)}"
                )
            tries[-1] += " (port taken by another process)"
        raise RuntimeError(
            f"PostgreSQL did not start; tried {'; '.join(tries)}\n--- the end of {log}:\n{log_tail(log)}"
        )

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "planwerk", "-A", "trust", "-E", "UTF8", "--no-sync")
        port = start()
        try:
            yield f"postgresql://planwerk@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", str(TIMEOUT_S), "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)

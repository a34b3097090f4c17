"""A private PostgreSQL cluster for tests: ``initdb`` in a temp folder, a free port, stopped and removed after."""

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

from tests.serving.conftest import free_port

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
    port = free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-2000:]}")

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "planwerk", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "server.log"),
            "-w",
            "-t",
            str(TIMEOUT_S),
            "start",
        )
        try:
            yield f"postgresql://planwerk@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", str(TIMEOUT_S), "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)

"""A full disk says so, and committed threads stay readable on a full disk and on a read-only mount (issue 31).

A real small file system (tmpfs, mounted for the test; skipped where mounting is not allowed) holds the threads
file: it is filled to the last byte, then remounted read-only.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from planwerk.agent import read_state
from planwerk.serving.threads_file import ThreadsFileError
from planwerk.tools.base import FunctionToolSource
from tests.helpers import make_agent


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> None:
    """Write until the file system has no byte left."""
    with (folder / "filler").open("wb", buffering=0) as file:
        try:
            while True:
                file.write(b"\0" * 65536)
                file.flush()
        except OSError:
            pass
        try:
            while True:
                file.write(b"\0")
                file.flush()
        except OSError:
            pass


async def echo(text: str) -> dict:
    """Returns the text."""
    return {"text": text}


PLAN = json.dumps({"steps": [{"tools": [{"id": "e", "name": "echo", "arguments": {"text": "hallo " * 2000}}]}]})


async def test_a_full_disk_says_so_and_committed_threads_stay_readable(small_disk: Path) -> None:
    db = small_disk / "threads.sqlite"
    async with make_agent([PLAN, "fertig"], tools=FunctionToolSource([echo]), db=db) as planwerk:
        assert (await planwerk.ask("Sag hallo.", thread_id="kept")).answer == "fertig"
    fill(small_disk)
    with pytest.raises(ThreadsFileError, match="the disk is full"):
        async with make_agent([PLAN, "fertig"], tools=FunctionToolSource([echo]), db=db) as planwerk:
            await planwerk.ask("Sag noch mal hallo.", thread_id="new")
    assert (await read_state("kept", db=db))["answer"] == "fertig"  # readable on the full disk

    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    assert (await read_state("kept", db=db))["answer"] == "fertig"  # and on a read-only mount

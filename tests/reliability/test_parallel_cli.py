"""Parallel ``planwerk ask`` processes on one threads file lose no thread and no message (issue 13, item 1).

Real CLI processes, as users start them from shells or scripts: N = 20 at once with different threads, then 5 at
once on one thread. The replay model answers (no model loads) and the tool set is empty (no MCP server starts),
so the processes spend their time where the bug was: opening the SQLite file and writing checkpoints.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planwerk.agent import read_state
from planwerk.serving.locking import lock_file
from tests.helpers import conversation

PROCESSES = 20
"""The issue's N: 20 processes with different threads on one database."""
SAME_THREAD = 5
"""Processes asking on one thread at once."""
NO_PLAN = json.dumps({"steps": [], "final": None})
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Finished:
    """One CLI process after it ended."""

    thread: str
    question: str
    answer: str
    returncode: int
    stderr: str


def start(tmp: Path, db: Path, thread: str, question: str, answer: str, *extra: str) -> subprocess.Popen[str]:
    """A ``planwerk ask`` process whose replay model plans nothing and answers ``answer``."""
    replay = tmp / f"replay-{thread}-{abs(hash(question))}.json"
    replay.write_text(json.dumps([NO_PLAN, answer]), encoding="utf-8")
    mcp = tmp / "no-servers.json"
    if not mcp.exists():
        mcp.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    args = ["ask", question, "--json", "--thread", thread, "--db", str(db), "--model", f"replay:{replay}"]
    args += ["--profile", "math", "--mcp-config", str(mcp), "--no-retrieval", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "planwerk.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PLANWERK_HOME": str(tmp / "home"), "COLUMNS": "200"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_all(jobs: list[tuple[str, str, str, subprocess.Popen[str]]]) -> list[Finished]:
    """Wait for every process; what each left behind."""
    done = []
    for thread, question, answer, process in jobs:
        _, stderr = process.communicate(timeout=240)
        done.append(Finished(thread, question, answer, process.returncode, stderr))
    return done


def messages_of(db: Path, thread: str) -> list[tuple[str, str]] | None:
    """The thread's conversation as (role, text) pairs, read from its checkpoints; None when it has none."""
    try:
        values = asyncio.run(read_state(thread, db=db))
    except KeyError:
        return None
    return [(m.type, m.content) for m in conversation(values.get("messages", []))]


def peak_child_rss_mb() -> float:
    """The largest resident set of any child process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def test_parallel_processes_on_different_threads_lose_nothing(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "threads.sqlite"
    begin = time.monotonic()
    jobs = []
    for n in range(PROCESSES):
        thread, question, answer = f"p-{n:02d}", f"Frage {n}?", f"Antwort {n}."
        jobs.append((thread, question, answer, start(tmp_path, db, thread, question, answer)))
    done = run_all(jobs)
    wall = time.monotonic() - begin
    failed = [f"{d.thread}: exit {d.returncode}: {d.stderr.strip()[-300:]}" for d in done if d.returncode != 0]
    kept = {d.thread: messages_of(db, d.thread) for d in done}
    lost = [thread for thread, messages in kept.items() if messages is None]
    figures.record(
        "parallel CLI, different threads",
        processes=PROCESSES,
        exit_nonzero=len(failed),
        threads_lost=len(lost),
        wall_s=round(wall, 1),
        peak_process_rss_mb=round(peak_child_rss_mb()),
    )
    assert not failed, "\n".join(failed)
    assert not lost, f"threads without a checkpoint: {lost}"
    for d in done:
        assert kept[d.thread] == [("human", d.question), ("ai", d.answer)], d.thread


def test_parallel_processes_on_one_thread_keep_every_turn(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "threads.sqlite"
    begin = time.monotonic()
    jobs = []
    for n in range(SAME_THREAD):
        question, answer = f"Geteilte Frage {n}?", f"Geteilte Antwort {n}."
        jobs.append(("shared", question, answer, start(tmp_path, db, "shared", question, answer)))
    done = run_all(jobs)
    wall = time.monotonic() - begin
    failed = [f"exit {d.returncode}: {d.stderr.strip()[-300:]}" for d in done if d.returncode != 0]
    messages = messages_of(db, "shared") or []
    questions = [text for role, text in messages if role == "human"]
    answers = [text for role, text in messages if role == "ai"]
    figures.record(
        "parallel CLI, one thread",
        processes=SAME_THREAD,
        exit_nonzero=len(failed),
        questions_kept=len(questions),
        answers_kept=len(answers),
        wall_s=round(wall, 1),
    )
    assert not failed, "\n".join(failed)
    # Every turn is kept whole and in one piece: each question directly followed by its own answer.
    assert sorted(questions) == sorted(d.question for d in done)
    pairs = dict(zip(messages[0::2], messages[1::2], strict=True))
    assert {q: a for (_, q), (_, a) in pairs.items()} == {d.question: d.answer for d in done}


def test_a_busy_thread_gets_one_line_and_exit_code_2_and_writes_nothing(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "threads.sqlite"
    path = lock_file(db, "busy")
    path.parent.mkdir(parents=True)
    with path.open("w") as held:  # another process's turn on the thread, as the CLI would hold it
        fcntl.flock(held, fcntl.LOCK_EX)
        process = start(tmp_path, db, "busy", "Frage?", "Antwort.", "--wait", "0.5")
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stderr
    assert "thread 'busy' is busy" in stderr and "--wait" in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 2  # one line (wrapped at most once)
    assert messages_of(db, "busy") is None  # it gave up before writing anything
    figures.record("parallel CLI, busy thread", processes=1, exit_code=process.returncode, checkpoints_written=0)

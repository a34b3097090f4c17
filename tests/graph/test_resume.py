"""A run killed with SIGKILL mid-step resumes on its thread without repeating finished tool calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# Step 1 holds the slow call b beside c; the kill comes while b runs, after a (step 0) and c finished.
PLAN = {
    "steps": [
        {"description": "first", "tools": [{"id": "a", "name": "fast", "arguments": {"name": "a"}}]},
        {
            "description": "b and, after a, c",
            "tools": [
                {"id": "b", "name": "slow", "arguments": {"name": "b"}},
                {"id": "c", "name": "fast", "arguments": {"name": "c", "value": {"$ref": "a.value"}}},
            ],
        },
        {
            "description": "after b and c",
            "tools": [
                {"id": "d", "name": "fast", "arguments": {"name": "d", "value": {"$ref": "b.value"}}},
                {"id": "e", "name": "fast", "arguments": {"name": "e", "value": {"$ref": "c.value"}}},
            ],
        },
    ],
    "final": None,
}
ROOT = Path(__file__).resolve().parents[2]


def worker(mode: str, tmp: Path, replay: list[str], slow_seconds: float, thread: str = "crash") -> subprocess.Popen:
    replay_file = tmp / f"replay-{mode}.json"
    replay_file.write_text(json.dumps(replay), encoding="utf-8")
    env = {**os.environ, "SLOW_SECONDS": str(slow_seconds)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.graph.resume_worker",
            mode,
            str(tmp / "threads.sqlite"),
            str(tmp / "calls.log"),
            str(replay_file),
            thread,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(log: Path, lines: set[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = {" ".join(line.split()[:2]) for line in log.read_text().splitlines()} if log.exists() else set()
        if lines <= seen:
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {lines} in {log}")


def test_killed_run_resumes_without_repeating_finished_calls(tmp_path: Path) -> None:
    answer = "a und c waren fertig, b, d und e auch."
    first = worker("start", tmp_path, [json.dumps(PLAN), answer], slow_seconds=60)
    try:
        wait_for(tmp_path / "calls.log", {"end a", "end c", "start b"})
        time.sleep(0.3)  # let the checkpointer write the finished tasks
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    before = (tmp_path / "calls.log").read_text().splitlines()
    assert not any(line.startswith(("start d", "start e")) for line in before)  # step 2 waits for all of step 1

    # What the checkpoint holds after the kill: step 0's result, and c's (its node run finished), not b's.
    peek = worker("peek", tmp_path, [], slow_seconds=0)
    out, err = peek.communicate(timeout=120)
    assert peek.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["results"] == {"a": {"value": 1}, "c": {"value": 2}}

    # The resumed process gets only the answer reply: the plan was checkpointed, it is not asked again.
    second = worker("resume", tmp_path, [answer], slow_seconds=0.05)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    resumed = [line for line in (tmp_path / "calls.log").read_text().splitlines() if line not in before]
    started_again = sorted(line.split()[1] for line in resumed if line.startswith("start"))
    print(f"crash test: killed after {len(before)} log lines; resumed calls: {started_again}")
    assert started_again == ["b", "d", "e"]  # a and c finished before the kill and were not repeated
    result = json.loads(out.strip().splitlines()[-1])
    assert result["answer"] == answer
    # The same results as an uninterrupted run.
    assert result["results"] == {
        "a": {"value": 1},
        "b": {"value": 10},
        "c": {"value": 2},
        "d": {"value": 11},
        "e": {"value": 3},
    }


def test_uninterrupted_run_gives_the_same_results(tmp_path: Path) -> None:
    run = worker("start", tmp_path, [json.dumps(PLAN), "fertig"], slow_seconds=0.05, thread="clean")
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["results"] == {
        "a": {"value": 1},
        "b": {"value": 10},
        "c": {"value": 2},
        "d": {"value": 11},
        "e": {"value": 3},
    }

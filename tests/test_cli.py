"""The command line, run as a real process (as users run it), against the real bundled MCP servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Runner:
    """Runs ``planwerk`` in a subprocess with the test's environment."""

    def invoke(self, args: list[str]) -> Result:
        done = subprocess.run(
            [sys.executable, "-m", "planwerk.cli", *args],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "COLUMNS": "200"},
        )
        return Result(done.returncode, done.stdout, done.stderr)


runner = Runner()
MATH_PLAN = {
    "steps": [
        {"description": "add", "tools": [{"id": "var_1", "name": "add", "arguments": {"arg_0": 12, "arg_1": 30}}]},
        {
            "description": "multiply",
            "tools": [
                {"id": "var_2", "name": "multiply", "arguments": {"arg_0": {"$ref": "var_1.result"}, "arg_1": 3}}
            ],
        },
    ],
    "final": None,
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def math_config(tmp_path: Path) -> Path:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "math": {
                        "command": "${PYTHON}",
                        "args": ["-m", "planwerk.tools.servers.math", "stdio"],
                        "timeout": 30,
                    }
                }
            }
        )
    )
    return config


def replay(tmp_path: Path, *replies: str) -> str:
    file = tmp_path / f"replay-{len(list(tmp_path.glob('replay-*')))}.json"
    file.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"replay:{file}"


def test_ask_json_prints_one_event_per_line(home: Path, math_config: Path) -> None:
    model = replay(home, json.dumps(MATH_PLAN), "Das Ergebnis ist 126.")
    result = runner.invoke(
        [
            "ask",
            "Was ist (12 + 30) * 3?",
            "--json",
            "--model",
            model,
            "--profile",
            "math",
            "--mcp-config",
            str(math_config),
            "--thread",
            "cli-1",
        ]
    )
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["event"] for e in events] == [
        "start",
        "retrieval",
        "plan",
        "step",
        "tool_call",
        "tool_result",
        "step",
        "tool_call",
        "tool_result",
        "final_answer",
    ]
    assert events[5]["result"] == {"result": 42}
    assert events[7]["args"] == {"arg_0": 42, "arg_1": 3}
    assert events[8]["result"] == {"result": 126}
    assert events[-1]["answer"] == "Das Ergebnis ist 126." and events[-1]["metadata"]["llm_calls"] == 2
    assert all(e["thread_id"] == "cli-1" for e in events)

    # The thread lives in the SQLite file: another process (invocation) reads it back.
    state = runner.invoke(["state", "--thread", "cli-1"])
    assert state.exit_code == 0, state.output
    values = json.loads(state.stdout)
    # The question, the progress text, the plan (its tool calls), one tool message per call, the answer.
    assert [m["role"] for m in values["messages"]] == ["human", "ai", "ai", "tool", "tool", "ai"]
    assert [c["name"] for c in values["messages"][2]["tool_calls"]] == ["add", "multiply"]
    assert values["results"]["var_2"] == {"result": 126}


def test_ask_prints_readable_progress_and_answer(home: Path, math_config: Path) -> None:
    model = replay(home, json.dumps(MATH_PLAN), "Das Ergebnis ist 126.")
    result = runner.invoke(
        ["ask", "Was ist (12 + 30) * 3?", "--model", model, "--profile", "math", "--mcp-config", str(math_config)]
    )
    assert result.exit_code == 0, result.output
    assert "→ var_1 add" in result.stdout and "✓ var_2" in result.stdout
    assert "Antwort" in result.stdout and "Das Ergebnis ist 126." in result.stdout
    assert "2 model calls" in result.stdout


@pytest.mark.parametrize("plan_format", ["expression", "profile"])
def test_plan_format_sets_how_the_planner_writes(home: Path, math_config: Path, plan_format: str) -> None:
    """generic-en plans in JSON; with --plan-format expression the same reply is a calculation that runs."""
    expression_replies = ["(12 + 30) * 3", "The result is 126."]
    model = replay(home, *(expression_replies if plan_format == "expression" else ["(12 + 30) * 3"] * 4))
    args = ["ask", "What is (12 + 30) * 3?", "--json", "--model", model, "--profile", "generic-en"]
    args += ["--mcp-config", str(math_config), "--no-retrieval", "--plan-format", plan_format]
    result = runner.invoke(args)
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    results = [e["result"] for e in events if e["event"] == "tool_result"]
    if plan_format == "expression":
        assert results == [{"result": 42}, {"result": 126}]
        assert events[-1]["answer"] == "The result is 126."
    else:  # a JSON planner cannot read an expression: three rejected plans, no call
        assert results == [] and any(e["event"] == "replan" for e in events)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "gpt:4"], "model spec"),
        (["--model", "replay:/nonexistent.json"], "replay file not found: /nonexistent.json"),
        (["--mcp-config", "/nonexistent.json"], "MCP config file not found"),
        (["--profile", "poetry"], "unknown profile 'poetry'; known profiles: auto, generic, generic-en, math, travel"),
        (["--plan-format", "yaml"], "--plan-format 'yaml': expected profile, json or expression"),
    ],
)
def test_bad_input_gets_a_one_line_error(home: Path, args: list[str], message: str) -> None:
    result = runner.invoke(["ask", "Hallo?", "--no-retrieval", *args])
    assert result.exit_code == 2
    assert message in result.stderr.replace("\n", " ")
    assert "Traceback" not in result.stderr


def hostile_paths(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Threads files a user may name by mistake: (path, what the error says)."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just text\n" * 10)
    return {
        "folder": (str(folder), "is a folder"),
        "text file": (str(text), "is not a SQLite database"),
        "below a file": (str(text / "threads.sqlite"), "is a file, not a folder"),
        "unwritable place": ("/proc/planwerk/threads.sqlite", "cannot be created"),
        "empty": ("", "the threads file path is empty"),
    }


@pytest.mark.parametrize("case", ["folder", "text file", "below a file", "unwritable place", "empty"])
@pytest.mark.parametrize("command", ["ask", "state"])
def test_a_junk_db_path_gets_one_line_and_exit_code_2(home: Path, tmp_path: Path, case: str, command: str) -> None:
    path, message = hostile_paths(tmp_path)[case]
    if command == "state" and case in ("below a file", "unwritable place"):
        message = "unknown thread id"  # reading never creates anything: there is simply no thread there
    if command == "state":
        args = ["state", "--thread", "t", "--db", path]
    else:
        args = ["ask", "Hallo?", "--no-retrieval", "--db", path, "--model", replay(tmp_path, "{}")]
    result = runner.invoke(args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    if case == "text file":
        assert Path(path).read_text().startswith("not a database")  # left as it was


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--thread", ""], "the thread id is empty"),
        (["--thread", "a\nb"], "control characters"),
        (["--thread", "x" * 300], "at most 256"),
        (["--today", "gestern"], "--today 'gestern' is no date"),
        (["--model", ""], "the model spec is empty"),
        (["--profile", ""], "unknown profile ''"),
    ],
)
def test_hostile_options_get_one_line_and_exit_code_2(home: Path, args: list[str], message: str) -> None:
    # A replay model unless the model is the point: a regression must not load the real one.
    model = [] if "--model" in args else ["--model", replay(home, "{}")]
    result = runner.invoke(["ask", "Hallo?", "--no-retrieval", *model, *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_malformed_mcp_config_is_named(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text('{"mcpServers": {"x": {"command": 5}}}')
    result = runner.invoke(
        ["ask", "Hallo?", "--no-retrieval", "--mcp-config", str(config), "--model", replay(tmp_path, "{}")]
    )
    assert result.exit_code == 2
    assert "mcpServers.x" in result.stderr


def test_resume_of_an_unknown_thread(home: Path, math_config: Path) -> None:
    result = runner.invoke(
        [
            "resume",
            "--thread",
            "does-not-exist",
            "--no-retrieval",
            "--mcp-config",
            str(math_config),
            "--model",
            replay(home),
        ]
    )
    assert result.exit_code == 2
    assert "unknown thread id 'does-not-exist'" in result.stderr


def test_chat_keeps_one_thread_and_asks_back(home: Path, math_config: Path) -> None:
    ask_back = json.dumps({"ask_user": "Womit soll ich 42 multiplizieren?"})
    times = {
        "steps": [
            {
                "description": "",
                "tools": [
                    {"id": "m", "name": "multiply", "arguments": {"arg_0": 42, "arg_1": {"$ref": "user.answer"}}}
                ],
            }
        ],
        "final": None,
    }
    model = replay(home, json.dumps(MATH_PLAN), "126.", ask_back, json.dumps(times), "84.")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "planwerk.cli",
            "chat",
            "--model",
            model,
            "--profile",
            "math",
            "--thread",
            "c1",
            "--mcp-config",
            str(math_config),
        ],
        input="Was ist (12 + 30) * 3?\nUnd mal etwas anderes?\n2\n\n",
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "thread c1" in done.stdout
    assert "126." in done.stdout and "Womit soll ich 42 multiplizieren?" in done.stdout and "84." in done.stdout
    state = json.loads(runner.invoke(["state", "--thread", "c1"]).stdout)
    talk = [m for m in state["messages"] if m["role"] != "tool" and "tool_calls" not in m]
    assert [m["role"] for m in talk] == ["human", "ai", "ai", "human", "ai", "ai", "human", "ai"]  # with progress


def test_ask_json_shows_the_retrieval_of_the_razepato_question(home: Path, math_config: Path) -> None:
    # Whatever model answers, the retrieval event comes from the packaged corpus (a real FAISS + BM25 index).
    model = replay(
        home, json.dumps({"steps": [], "final": None}), "Im Ebro-Becken südlich von Tarragona (Razepato.txt)."
    )
    result = runner.invoke(
        [
            "ask",
            "Wo kann man das Razepato am besten beobachten?",
            "--json",
            "--model",
            model,
            "--profile",
            "travel",  # with an MCP config of one's own the default is generic, which has no corpus
            "--mcp-config",
            str(math_config),
        ]
    )
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    retrieval = next(e for e in events if e["event"] == "retrieval")
    first = retrieval["hits"][0]
    assert first["source"].startswith("Razepato.txt#")
    assert "Ebro-Becken südlich von Tarragona" in first["text"] or "Parks Barcelonas" in first["text"]
    assert 0 < first["score"] <= 1
    assert events[-1]["answer"] == "Im Ebro-Becken südlich von Tarragona (Razepato.txt)."

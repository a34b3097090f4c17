"""planwerk on Aegra with PostgreSQL, two instances (``scripts/cluster.sh``), driven with langgraph-sdk.

Every run uses the replay model (its own file per run: each instance loads a spec afresh) and real MCP servers over
streamable HTTP (the security test adds the operator's stdio servers of tests/serving/test_served_tool_security.py).
The crash test is last: it kills one instance for good.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient

from planwerk.serving.tokens import mint_token
from tests.cluster.conftest import (
    ANSWER,
    Cluster,
    Tools,
    call,
    cluster_up,
    context,
    plan,
    question,
    write_replay,
)
from tests.helpers import conversation
from tests.models.test_endpoint_key import recording_server  # noqa: F401  (a fixture, used by name)
from tests.reliability.test_secret_forms import SECRET, leaked_forms
from tests.serving.test_hostile_context import shell_config
from tests.serving.test_served_tool_security import REFUSED, calls_of, echo, security_files
from tests.tools.test_roots_enforced import NOTES_TEXT, SECRET_TEXT
from tests.tools.third_party.test_mcp_auth import ROTATED
from tests.tools.third_party.test_server_errors_http import TOKEN

pytestmark = pytest.mark.timeout(180)
GRAPH = "planwerk"
ASK = json.dumps({"ask_user": "Welche zwei Zahlen soll ich addieren?"})
CRASH_WAIT_S = 90.0
"""Bounds a hang only: how long the crash test waits for the doomed call to start."""


def clients(cluster: Cluster) -> tuple[LangGraphClient, LangGraphClient]:
    """One langgraph-sdk client per instance (no special client logic: plain base URLs and a bearer token)."""
    first, second = cluster.instances
    return cluster.client(first), cluster.client(second)


async def wait(cluster: Cluster, client: LangGraphClient, thread: str, **kwargs: Any) -> dict[str, Any]:
    """``runs.wait`` on ``thread``; a run that ended without an answer or interrupt fails with its error and logs."""
    out = await client.runs.wait(thread, GRAPH, **kwargs)
    if "answer" not in out and "__interrupt__" not in out:
        runs = await client.runs.list(thread)
        logs = "\n".join(cluster.log_tail(index) for index in range(len(cluster.instances)))
        pytest.fail(f"the run ended without an answer: {out}\nruns: {runs}\n{logs}")
    return out


def add_plan(call_id: str, a: float, b: float) -> str:
    """A plan of one ``add`` call on the math server."""
    return plan(call(call_id, "add", arg_0=a, arg_1=b))


def test_up_again_prints_the_running_cluster(cluster: Cluster) -> None:
    assert len(cluster.instances) == 2 and len(set(cluster.instances)) == 2
    assert all(url.startswith("http://127.0.0.1:") for url in cluster.instances)
    again = cluster_up(cluster.state)  # idempotent: nothing new is started
    assert again == cluster


async def test_a_thread_from_one_instance_is_read_and_continued_on_the_other(
    cluster: Cluster, tools: Tools, tmp_path: Path
) -> None:
    first, second = clients(cluster)
    thread = (await first.threads.create(metadata={"test": "cross-instance"}))["thread_id"]
    model = write_replay(tmp_path / "one.json", [add_plan("s", 2, 3), ANSWER])
    out = await wait(cluster, first, thread, input=question("Was ist 2 + 3?"), context=context(tools, model))
    assert out["answer"] == ANSWER

    # The other instance sees the thread, its state and its history (all in PostgreSQL).
    record = await second.threads.get(thread)
    assert record["status"] == "idle" and record["metadata"]["test"] == "cross-instance"
    state = await second.threads.get_state(thread)
    assert state["values"]["results"] == {"s": {"result": 5.0}}

    # ... and continues the conversation: the model is shown the first turn.
    model = write_replay(tmp_path / "two.json", [add_plan("t", 5, 4), "5 + 4 = 9."])
    out = await wait(cluster, second, thread, input=question("Und 5 + 4?"), context=context(tools, model))
    assert out["answer"] == "5 + 4 = 9."
    values = (await first.threads.get_state(thread))["values"]
    assert [m["content"] for m in conversation(values["messages"])] == [
        "Was ist 2 + 3?",
        ANSWER,
        "Und 5 + 4?",
        "5 + 4 = 9.",
    ]
    history = await first.threads.get_history(thread, limit=200)
    assert sum(1 for h in history if h["metadata"]["source"] == "input") == 2  # one per question, both instances


async def test_twenty_concurrent_threads_over_both_instances_all_finish(
    cluster: Cluster, tools: Tools, tmp_path: Path
) -> None:
    first, second = clients(cluster)
    count = 20

    async def one(index: int) -> tuple[str, dict[str, Any]]:
        client = (first, second)[index % 2]
        thread = (await client.threads.create())["thread_id"]
        model = write_replay(tmp_path / f"t{index}.json", [add_plan("s", index, 1), f"{index} + 1 = {index + 1}."])
        out = await wait(cluster, client, thread, input=question(f"{index} + 1?"), context=context(tools, model))
        return thread, out

    started = time.monotonic()
    finished = await asyncio.gather(*(one(index) for index in range(count)))
    print(f"\n{count} concurrent threads over 2 instances: {time.monotonic() - started:.1f} s")
    for index, (thread, out) in enumerate(finished):
        assert out["answer"] == f"{index} + 1 = {index + 1}.", (index, out)
        assert out["results"] == {"s": {"result": float(index + 1)}}
        other = (second, first)[index % 2]  # every thread reads the same through the instance that did not run it
        assert (await other.threads.get(thread))["status"] == "idle"
        [run] = await other.runs.list(thread)
        assert run["status"] == "success"


async def test_an_ask_user_interrupt_is_resumed_through_the_other_instance(
    cluster: Cluster, tools: Tools, tmp_path: Path
) -> None:
    first, second = clients(cluster)
    thread = (await first.threads.create())["thread_id"]
    asking = write_replay(tmp_path / "ask.json", [ASK])
    out = await wait(cluster, first, thread, input=question("Rechne was aus."), context=context(tools, asking))
    value = out["__interrupt__"][0]["value"]  # planwerk's keys beside the HITL schema's action_requests
    assert (value["kind"], value["question"]) == ("ask_user", "Welche zwei Zahlen soll ich addieren?")
    assert (await second.threads.get(thread))["status"] == "interrupted"
    assert (await second.threads.get_state(thread))["next"] == ["ask_user"]

    answering = write_replay(tmp_path / "answer.json", [add_plan("t", 7, 8), "7 + 8 = 15."])
    out = await wait(cluster, second, thread, command={"resume": "7 und 8"}, context=context(tools, answering))
    assert out["answer"] == "7 + 8 = 15."
    values = (await first.threads.get_state(thread))["values"]
    assert values["user"]["answer"] == "7 und 8" and values["results"] == {"t": {"result": 15.0}}
    assert (await first.threads.get(thread))["status"] == "idle"


def test_aegra_refuses_a_request_without_a_valid_token(cluster: Cluster) -> None:
    for url in cluster.instances:
        answer = httpx.post(f"{url}/threads/search", json={}, timeout=30)
        assert answer.status_code == 401, answer.text
        assert "Authorization: Bearer" in answer.text
        forged = mint_token(cluster.jwt_secret + "-not", "mallory")
        answer = httpx.post(f"{url}/threads/search", json={}, headers={"Authorization": f"Bearer {forged}"}, timeout=30)
        assert answer.status_code == 401 and "signature does not verify" in answer.text, answer.text
        expired = mint_token(cluster.jwt_secret, "mallory", ttl_s=-3600)
        answer = httpx.post(
            f"{url}/threads/search", json={}, headers={"Authorization": f"Bearer {expired}"}, timeout=30
        )
        assert answer.status_code == 401 and "expired" in answer.text, answer.text


async def test_aegra_keeps_each_users_threads_and_runs_to_themselves(
    cluster: Cluster, tools: Tools, tmp_path: Path
) -> None:
    alice = cluster.client(cluster.instances[0], user="alice")
    bob = cluster.client(cluster.instances[1], user="bob")  # the other instance: the records are in PostgreSQL
    thread = (await alice.threads.create(metadata={"test": "owned"}))["thread_id"]
    model = write_replay(tmp_path / "alice.json", [add_plan("s", 2, 3), ANSWER])
    out = await wait(cluster, alice, thread, input=question("Was ist 2 + 3?"), context=context(tools, model))
    assert out["answer"] == ANSWER
    [run] = await alice.runs.list(thread)

    assert thread not in {t["thread_id"] for t in await bob.threads.search(limit=100)}
    for call_ in (
        bob.threads.get(thread),
        bob.threads.get_state(thread),
        bob.runs.get(thread, run["run_id"]),
        bob.threads.update(thread, metadata={"answer": "B was here"}),
        bob.threads.delete(thread),
    ):
        with pytest.raises(httpx.HTTPStatusError) as failure:
            await call_
        assert failure.value.response.status_code == 404
    try:
        assert await bob.runs.list(thread) == []
    except httpx.HTTPStatusError as error:
        assert error.response.status_code == 404
    record = await alice.threads.get(thread)
    assert record["metadata"]["test"] == "owned" and "answer" not in record["metadata"]


async def test_aegra_refuses_a_claimed_identity_and_unshared_learning_at_the_door(cluster: Cluster) -> None:
    # Aegra 0.6.0 keeps a client's configurable.langgraph_auth_user (it only fills it when absent): bob naming alice
    # there would share alice's pooled MCP sessions. And learn_examples writes the examples every user's planner
    # reads. Both are answered 422 before a run is queued (aegra.json's http.app).
    bob = cluster.client(cluster.instances[1], user="bob")
    thread = (await bob.threads.create())["thread_id"]
    headers = {"Authorization": f"Bearer {mint_token(cluster.jwt_secret, 'bob')}"}
    ctx = {"profile": "math", "model": "default"}
    for body in (
        {
            "assistant_id": GRAPH,
            "input": question("2 + 3?"),
            # Aegra takes either configurable or context (both: 400), and copies configurable into the context.
            "config": {"configurable": {**ctx, "langgraph_auth_user": {"identity": "alice"}}},
        },
        {"assistant_id": GRAPH, "input": question("2 + 3?"), "context": {**ctx, "langgraph_auth_user_id": "alice"}},
        # Aegra merges a run's checkpoint object into configurable before it adds the user.
        {
            "assistant_id": GRAPH,
            "input": question("2 + 3?"),
            "context": ctx,
            "checkpoint": {"langgraph_auth_user_id": "alice"},
        },
        {"assistant_id": GRAPH, "input": question("2 + 3?"), "context": {**ctx, "learn_examples": True}},
    ):
        answer = httpx.post(f"{cluster.instances[1]}/threads/{thread}/runs", json=body, headers=headers, timeout=30)
        assert answer.status_code == 422, answer.text
    assert await bob.runs.list(thread) == []


async def test_aegra_starts_no_command_and_sends_no_key_a_request_names(
    cluster: Cluster,
    tmp_path: Path,
    recording_server: tuple[str, list[str]],  # noqa: F811
) -> None:
    # The inline MCP config (a shell) and an endpoint model on a server the operator did not list: 422 at the
    # door, no run queued, no shell started, and the named server hears nothing.
    marker = tmp_path / "pwned"
    bob = cluster.client(cluster.instances[1], user="bob")
    thread = (await bob.threads.create())["thread_id"]
    headers = {"Authorization": f"Bearer {mint_token(cluster.jwt_secret, 'bob')}"}
    url, seen = recording_server
    for run_context in (
        {"mcp_config": json.dumps(shell_config(marker))},
        {"profile": "math", "model": f"endpoint:{url}"},
    ):
        body = {"assistant_id": GRAPH, "input": question("2 + 3?"), "context": run_context}
        answer = httpx.post(f"{cluster.instances[1]}/threads/{thread}/runs", json=body, headers=headers, timeout=30)
        assert answer.status_code == 422, answer.text
    assert await bob.runs.list(thread) == []
    assert not marker.exists() and seen == []


def test_postgres_refuses_a_connection_without_the_password(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    psycopg = pytest.importorskip("psycopg")
    for name in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)
    assert stat.S_IMODE(cluster.postgres_password_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((cluster.state / "jwt-secret").stat().st_mode) == 0o600
    socket_folder = cluster.state / "postgres"
    for where in ({}, {"host": str(socket_folder)}):  # over TCP and over the socket
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(cluster.postgres, passfile=os.devnull, connect_timeout=10, **where).close()
    password = cluster.postgres_password_file.read_text(encoding="utf-8").strip()
    with psycopg.connect(cluster.postgres, password=password, connect_timeout=10) as connection:
        assert connection.execute("SELECT 1").fetchone() == (1,)


async def test_aegra_redacts_every_form_of_a_secret_refuses_paths_outside_the_roots_and_refreshes_tokens(
    cluster: Cluster, tmp_path: Path
) -> None:
    # Issue 28, items 5-7, as tests/serving/test_served_tool_security.py checks them on langgraph dev: the operator's
    # MCP config (in the temp folder the cluster allows) names the leaky server (its secret in env), the naive file
    # server (with roots; the profile file says enforce_roots = true) and the bearer-token server (a token_file).
    client = cluster.client(cluster.instances[1])  # not the instance the crash test kills
    with ExitStack() as stack:
        files = security_files(tmp_path, stack)
        config, profile, accepted, supplied = files.config, files.profile, files.accepted, files.supplied
        thread = (await client.threads.create())["thread_id"]

        async def run(name: str, *calls: dict[str, Any]) -> list[tuple[str, Any]]:
            """One run of ``calls`` in one step on the thread, streamed; the parts as ``(event, data)``."""
            one_step = json.dumps({"steps": [{"description": name, "tools": list(calls)}], "final": None})
            model = write_replay(tmp_path / f"{name}.json", [one_step, ANSWER, ANSWER, ANSWER])
            ctx = {"model": model, "profile": str(profile), "mcp_config": str(config), "today": "2026-11-22",
                   "max_plan_attempts": 1}  # fmt: skip
            parts = [
                (part.event, part.data)
                async for part in client.runs.stream(
                    thread,
                    GRAPH,
                    input=question(f"Bitte {name}."),
                    context=ctx,
                    stream_mode=["custom", "values", "updates"],
                )
            ]
            assert [data for event, data in parts if event == "error"] == [], cluster.log_tail(1)
            return parts

        leaks = [{"id": n, "name": f"leak_{n}", "arguments": {}} for n in ("result", "progress", "stderr", "error")]
        outside = {"id": "s", "name": "read_file", "arguments": {"path": "../secret.txt"}}
        inside = {"id": "n", "name": "read_file", "arguments": {"path": "notes.txt"}}
        parts = await run("all", *leaks, outside, inside, echo("a", "hi"))
        done = await calls_of(client, thread)
        # Every leak happened, redacted.
        assert done["result"]["result"]["plain"] == "your key is ***.", done["result"]
        assert "bad credentials ***" in done["error"]["error"], done["error"]
        progress = [d["message"] for e, d in parts if e == "custom" and d.get("event") == "tool_progress"]
        assert progress == ["using token ***", "token b64 ***"], progress
        # The file beside the root is refused before it is sent; the one inside is read.
        assert done["s"]["kind"] == "forbidden" and "outside the roots of server files" in done["s"]["error"], done["s"]
        assert done["n"]["status"] == "ok" and done["n"]["result"] == {"result": NOTES_TEXT}, done["n"]
        assert done["a"]["result"] == {"result": "hi"}, done["a"]

        # The token rotates while the instance's pooled session holds the old one: the 401 makes the supplier's file
        # be read again. Then the server refuses every token: kind unauthorized, not an unreachable service.
        accepted.write_text(ROTATED)
        supplied.write_text(ROTATED)
        parts += await run("rotated", echo("b", "after"))
        after = (await calls_of(client, thread))["b"]
        assert after["status"] == "ok" and after["result"] == {"result": "after"}, after
        accepted.write_text(REFUSED)
        parts += await run("refused", echo("c", "refused"))
        refused = (await calls_of(client, thread))["c"]
        assert refused["status"] != "ok" and refused["kind"] == "unauthorized", refused
        assert "401" in refused["error"], refused

    log = (cluster.state / "aegra-2.log").read_text(errors="replace")
    assert "debug: connecting with *** / ***" in log  # the stdio server's stderr, redacted
    places = {
        "stream": json.dumps(parts, default=repr),
        "state": json.dumps(await client.threads.get_state(thread), default=repr),
        "history": json.dumps(await client.threads.get_history(thread, limit=100), default=repr),
        "instance log": log,
    }
    forms = leaked_forms(SECRET) | leaked_forms(TOKEN) | leaked_forms(ROTATED) | {SECRET_TEXT}
    leaked = [(where, form) for where, text in places.items() for form in forms if form in text]
    assert leaked == [], f"leaked: {leaked}"


async def test_kill_9_mid_run_recovers_through_the_other_instance_without_repeating_a_finished_call(
    cluster: Cluster, tools: Tools, tmp_path: Path
) -> None:
    first, second = clients(cluster)
    thread = (await first.threads.create())["thread_id"]
    # Step 0 records "a" (finishes); step 1 records "b" and holds it (the kill lands there); step 2 adds.
    steps = plan(
        call("a", "record", key=f"{thread}-a"),
        call("b", "record", key=f"{thread}-b", hold_s=600),
        call("s", "add", arg_0=2, arg_1=3),
    )
    model = write_replay(tmp_path / "doomed.json", [steps, ANSWER])
    run = await first.runs.create(
        thread, GRAPH, input=question("Zähle a, b, dann 2 + 3."), context=context(tools, model, tool_timeout_s=900)
    )
    started_b = f"start {thread}-b"
    deadline = time.monotonic() + CRASH_WAIT_S
    while tools.counts().get(started_b, 0) == 0:
        status = (await first.runs.get(thread, run["run_id"]))["status"]
        if status not in ("pending", "running") or time.monotonic() > deadline:
            state = await first.threads.get_state(thread)
            pytest.fail(
                f"the call b never started (run {status}, counts {tools.counts()}):\n{state['values']}\n"
                f"{cluster.log_tail(0)}"
            )
        await asyncio.sleep(0.05)
    # Checkpoints are saved beside the next step's work (durability "async"): wait until the one that sent b is in
    # PostgreSQL, so the kill lands mid-run at a known point, whatever the machine's speed.
    while (await second.threads.get_state(thread))["next"] != ["call_tool"]:
        assert time.monotonic() < deadline, "the checkpoint that sent b never reached PostgreSQL"
        await asyncio.sleep(0.05)
    os.killpg(cluster.pid(0), signal.SIGKILL)  # the instance running the run, with anything it spawned

    # The other instance reads the last checkpoint: a finished, b pending.
    state = await second.threads.get_state(thread)
    assert state["next"] == ["call_tool"]
    assert [(c["id"], c["status"]) for c in state["values"]["calls"]] == [("a", "ok")]
    # Aegra 0.6.0 has no lease reaper: the dead instance's run stays "running", its thread "busy".
    assert (await second.threads.get(thread))["status"] == "busy"
    assert [run["status"] for run in await second.runs.list(thread)] == ["running"]

    # A run on the thread through the other instance continues from that checkpoint (the model only answers). Aegra
    # 0.6.0 turns a run without input into an empty input (a fresh start that LangGraph refuses) and allows
    # ``resume`` only on an interrupted thread (this one is still "busy"): a Command with a no-op update is the run
    # that continues. b runs again (it never finished), a does not.
    answering = write_replay(tmp_path / "recover.json", [ANSWER])
    out = await wait(cluster, second, thread, command={"update": {"messages": []}}, context=context(tools, answering))
    assert out["answer"] == ANSWER
    assert out["results"]["s"] == {"result": 5.0}
    counts = tools.counts()
    assert counts[f"start {thread}-a"] == 1 and counts[f"end {thread}-a"] == 1  # the finished call did not repeat
    assert counts[f"start {thread}-b"] == 2 and counts[f"end {thread}-b"] == 1  # the interrupted one ran again
    assert (await second.threads.get(thread))["status"] == "idle"

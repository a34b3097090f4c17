"""Authentication and ownership under the real ``langgraph dev`` (``planwerk.serving.auth`` in ``langgraph.json``).

One server with a shared secret, a JWKS file (RS256) and an audience: requests without a valid token get 401 with
the reason; two users never see each other's threads, runs or assistants (404, left out of searches), the
operator sees both, everyone runs the graph's own assistant. Then ``PLANWERK_AUTH=off`` (a loud warning, no token
needed) and ``jwt`` with no keys (fail closed, saying what to configure).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from planwerk.serving.tokens import mint_token
from tests.serving.conftest import TEST_JWT_SECRET, DevServer, add, plan, write_math_config, write_replay

pytestmark = pytest.mark.timeout(180)

AUDIENCE = "planwerk-auth-tests"
KID = "test-key-1"


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, rsa_key: rsa.RSAPrivateKey) -> Iterator[DevServer]:
    """A server checking HS256 tokens (the tests' secret) and RS256 tokens (a JWKS file), both for AUDIENCE."""
    folder = tmp_path_factory.mktemp("auth-server")
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key()))
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]}), encoding="utf-8")
    dev = DevServer(folder, extra_env={"PLANWERK_JWKS": str(jwks), "PLANWERK_JWT_AUDIENCE": AUDIENCE})
    try:
        dev.start()
        yield dev
    finally:
        dev.kill()


def bearer(user: str, *, operator: bool = False, **claims: Any) -> dict[str, str]:
    """The header of a valid HS256 token for the server's audience."""
    return {
        "Authorization": f"Bearer {mint_token(TEST_JWT_SECRET, user, operator=operator, audience=AUDIENCE, **claims)}"
    }


def as_user(server: DevServer, user: str, *, operator: bool = False) -> LangGraphClient:
    return get_client(url=server.url, timeout=60, headers=bearer(user, operator=operator))


def refused(server: DevServer, headers: dict[str, str]) -> httpx.Response:
    """``POST /threads/search`` with ``headers``; the answer."""
    return httpx.post(f"{server.url}/threads/search", json={}, headers=headers, timeout=30)


def test_a_request_without_a_token_gets_401_saying_what_to_send(server: DevServer) -> None:
    answer = refused(server, {})
    assert answer.status_code == 401, answer.text
    assert "Authorization: Bearer" in answer.json()["detail"]
    # Studio's header does not open a side door in local development either.
    assert refused(server, {"x-auth-scheme": "langsmith"}).status_code == 401
    assert httpx.get(f"{server.url}/assistants/search", timeout=30).status_code in (401, 405)
    assert httpx.post(f"{server.url}/assistants/search", json={}, timeout=30).status_code == 401


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("bad signature", "signature does not verify"),
        ("expired", "expired"),
        ("wrong audience", "audience"),
        ("no audience", "lacks the 'aud' claim"),
        ("unsigned", "algorithm 'none' is not accepted"),
        ("not a jwt", "not a JWT"),
        ("no exp", "'exp'"),
        ("reserved identity", "reserved"),
        ("unknown key", "does not know"),
    ],
)
def test_a_bad_token_gets_401_with_the_reason(
    server: DevServer, rsa_key: rsa.RSAPrivateKey, case: str, reason: str
) -> None:
    now = int(time.time())
    claims = {"sub": "mallory", "exp": now + 600, "aud": AUDIENCE}
    tokens = {
        "bad signature": jwt.encode(claims, TEST_JWT_SECRET + "-not", algorithm="HS256"),
        "expired": jwt.encode({**claims, "exp": now - 3600}, TEST_JWT_SECRET, algorithm="HS256"),
        "wrong audience": jwt.encode({**claims, "aud": "some-other-service"}, TEST_JWT_SECRET, algorithm="HS256"),
        "no audience": jwt.encode({"sub": "mallory", "exp": now + 600}, TEST_JWT_SECRET, algorithm="HS256"),
        "unsigned": jwt.encode(claims, None, algorithm="none"),
        "not a jwt": "opensesame",
        "no exp": jwt.encode({"sub": "mallory", "aud": AUDIENCE}, TEST_JWT_SECRET, algorithm="HS256"),
        "reserved identity": jwt.encode({**claims, "sub": "system"}, TEST_JWT_SECRET, algorithm="HS256"),
        "unknown key": jwt.encode(claims, rsa_key, algorithm="RS256", headers={"kid": "another-key"}),
    }
    answer = refused(server, {"Authorization": f"Bearer {tokens[case]}"})
    assert answer.status_code == 401, answer.text
    assert reason in answer.json()["detail"]


def test_a_token_signed_with_a_key_of_the_jwks_file_is_accepted(server: DevServer, rsa_key: rsa.RSAPrivateKey) -> None:
    claims = {"sub": "rs-user", "exp": int(time.time()) + 600, "aud": AUDIENCE}
    token = jwt.encode(claims, rsa_key, algorithm="RS256", headers={"kid": KID})
    answer = httpx.post(f"{server.url}/threads", json={}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"]["owner"] == "rs-user"  # the token's sub


async def missing(call: Any) -> int:
    """The HTTP status a call failed with (it must fail)."""
    with pytest.raises(httpx.HTTPStatusError) as failure:
        await call
    return failure.value.response.status_code


async def test_another_user_can_neither_see_nor_change_a_thread_or_its_runs_the_operator_can(
    server: DevServer, tmp_path: Path
) -> None:
    alice, bob, operator = as_user(server, "alice"), as_user(server, "bob"), as_user(server, "ops", operator=True)
    thread = await alice.threads.create(metadata={"topic": "sums"})
    tid = thread["thread_id"]
    assert thread["metadata"]["owner"] == "alice"
    context = {
        "model": write_replay(tmp_path / "alice.json", [plan(add("s", 2, 3)), "2 + 3 = 5."]),
        "profile": "math",
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "today": "2026-11-22",
    }
    # Everyone runs the graph's own assistant ("planwerk").
    done = await alice.runs.wait(
        tid, "planwerk", input={"messages": [{"role": "user", "content": "2 + 3?"}]}, context=context
    )
    assert done["answer"] == "2 + 3 = 5."
    run = (await alice.runs.list(tid))[0]

    # Bob: the thread and its runs do not exist for him.
    assert [t["thread_id"] for t in await bob.threads.search()] == []
    assert await missing(bob.threads.get(tid)) == 404
    assert await missing(bob.threads.get_state(tid)) == 404
    assert await missing(bob.threads.get_history(tid)) == 404
    assert await missing(bob.runs.list(tid)) == 404
    assert await missing(bob.runs.get(tid, run["run_id"])) == 404
    assert await missing(bob.threads.update(tid, metadata={"answer": "B was here"})) == 404
    assert await missing(bob.threads.update_state(tid, {"answer": "B was here"})) == 404
    assert await missing(bob.threads.delete(tid)) == 404
    bob_run = bob.runs.wait(
        tid, "planwerk", input={"messages": [{"role": "user", "content": "1 + 1?"}]}, context=context
    )
    assert await missing(bob_run) == 404
    # Bob cannot take the thread over by naming himself the owner of his own one either: it stays his.
    own = await bob.threads.create(metadata={"owner": "alice"})
    assert own["metadata"]["owner"] == "bob"

    # Alice's thread is untouched, and hers only.
    mine = await alice.threads.get(tid)
    assert mine["metadata"]["topic"] == "sums" and "answer" not in mine["metadata"]
    assert (await alice.threads.get_state(tid))["values"]["answer"] == "2 + 3 = 5."
    assert [t["thread_id"] for t in await alice.threads.search()] == [tid]

    # The operator sees (and may change) both users' threads and runs.
    seen = {t["thread_id"] for t in await operator.threads.search(limit=100)}
    assert {tid, own["thread_id"]} <= seen
    assert (await operator.runs.get(tid, run["run_id"]))["run_id"] == run["run_id"]
    await operator.threads.delete(own["thread_id"])
    assert await missing(bob.threads.get(own["thread_id"])) == 404


async def test_a_users_assistant_is_invisible_to_others_and_the_graphs_own_one_is_shared(server: DevServer) -> None:
    alice, bob, operator = as_user(server, "alice2"), as_user(server, "bob2"), as_user(server, "ops2", operator=True)
    system = await bob.assistants.search(graph_id="planwerk")
    assert [a["metadata"].get("created_by") for a in system] == ["system"]
    assistant = await alice.assistants.create("planwerk", context={"profile": "math"}, name="alice-math")
    aid = assistant["assistant_id"]
    assert assistant["metadata"]["owner"] == "alice2"
    assert aid not in {a["assistant_id"] for a in await bob.assistants.search(limit=100)}
    assert await missing(bob.assistants.get(aid)) == 404
    assert await missing(bob.assistants.update(aid, name="bob's now")) == 404
    assert await missing(bob.assistants.delete(aid)) == 404
    # The graph's own assistant: everyone reads it, no user changes it.
    assert await missing(bob.assistants.update(system[0]["assistant_id"], name="mine")) == 404
    # No user's assistant can pass for the server's own.
    with pytest.raises(httpx.HTTPStatusError) as failure:
        await alice.assistants.create("planwerk", metadata={"created_by": "system"}, name="fake")
    assert failure.value.response.status_code == 403
    assert (await operator.assistants.get(aid))["name"] == "alice-math"
    assert (await alice.assistants.get(aid))["name"] == "alice-math"


def test_auth_off_logs_a_loud_warning_and_needs_no_token(dev_server_factory: type[DevServer], tmp_path: Path) -> None:
    dev = dev_server_factory(tmp_path, extra_env={"PLANWERK_AUTH": "off"}).start()
    answer = httpx.post(f"{dev.url}/threads", json={}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"]["owner"] == "local-dev"
    log = dev.log.read_text(errors="replace")
    assert "PLANWERK_AUTH=off: NO AUTHENTICATION" in log


def test_jwt_without_a_secret_or_jwks_refuses_every_request_saying_what_to_set(
    dev_server_factory: type[DevServer], tmp_path: Path
) -> None:
    dev = dev_server_factory(tmp_path, extra_env={"PLANWERK_JWT_SECRET": ""}).start()
    token = mint_token(TEST_JWT_SECRET, "alice")
    answer = httpx.post(f"{dev.url}/threads", json={}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 401, answer.text
    assert "PLANWERK_JWT_SECRET or PLANWERK_JWKS" in answer.json()["detail"]
    assert "every request is refused with 401 (fail closed)" in dev.log.read_text(errors="replace")


async def test_store_items_live_under_the_callers_own_namespace(server: DevServer) -> None:
    alice, bob = as_user(server, "alice3"), as_user(server, "bob3")
    await alice.store.put_item(["alice3", "notes"], "k", {"text": "mine"})
    assert (await alice.store.get_item(["alice3", "notes"], "k"))["value"] == {"text": "mine"}
    for call in (
        bob.store.get_item(["alice3", "notes"], "k"),
        bob.store.put_item(["alice3", "notes"], "k", {"text": "B was here"}),
        bob.store.delete_item(["alice3", "notes"], "k"),
        bob.store.search_items(["alice3"]),
    ):
        assert await missing(call) == 403
    assert (await alice.store.get_item(["alice3", "notes"], "k"))["value"] == {"text": "mine"}

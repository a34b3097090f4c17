"""Reference safety and size limits.

A ``$ref`` path only ever indexes the data (dicts and lists of the results and the user fields): no attribute
access, no dunder names, no eval, no second-order resolution of references found inside results. Results larger
than ``ExecutionPolicy.max_result_chars`` are kept truncated with a note, and what reaches a prompt is cut with a note.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from planwerk.agent import Agent
from planwerk.core.refs import RefError, resolve_value
from planwerk.execution import ExecutionPolicy, execute_plan
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.prompts.render import MAX_RESULT_CHARS_IN_PROMPT
from planwerk.tools.base import FunctionToolSource

CHECKED = {"paths": 0, "resolved": 0, "refused": 0}


class Spy:
    """An object with attributes (and item access) that records every access through either."""

    touched: list[str] = []  # noqa: RUF012 - shared on purpose: any access anywhere is a failure

    def __init__(self) -> None:
        self.lat = 41.38
        self.secret = "attribute, not data"

    def __getattr__(self, name: str) -> Any:
        Spy.touched.append(f"attr {name}")
        raise AttributeError(name)

    def __getitem__(self, key: Any) -> Any:
        Spy.touched.append(f"item {key}")
        return "item access"


def _data() -> tuple[dict[str, Any], dict[str, Any]]:
    spy = Spy()
    results = {
        "geo": {
            "lat": 41.38,
            "lon": 2.17,
            "name": "Barcelona",
            "__class__": "a key named __class__ is data",
            "nested": [{"a": 1}, [2, 3]],
            "obj": spy,
        },
        "obj": spy,
        "text": '{"json": {"inside": [1, 2]}}',
        "refs": {"x": {"$ref": "user.token"}, "y": "$ref:geo.lat"},
        "list": [0, 1, {"k": "v"}],
    }
    user = {"raw": "Frage", "token": "user data, reachable only as user.token"}
    return results, user


def _reachable(value: Any, found: list[Any]) -> None:
    """Every node of the data tree by identity, including the JSON inside result strings (walk parses those)."""
    found.append(value)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            _reachable(json.loads(value), found)
    if isinstance(value, dict):
        for item in value.values():
            _reachable(item, found)
    elif isinstance(value, list):
        for item in value:
            _reachable(item, found)


SEGMENTS = st.sampled_from(
    [
        "__class__",
        "__dict__",
        "__globals__",
        "__init__",
        "__builtins__",
        "lat",
        "secret",
        "obj",
        "nested",
        "0",
        "1",
        "-1",
        "[0]",
        "[-1]",
        "[99]",
        "result",
        "json",
        "inside",
        "x",
        "y",
        "$ref",
        "__import__('os')",
        "eval(1)",
        "mro()",
        "k",
    ]
) | st.text(max_size=8)
ROOTS = st.sampled_from(["geo", "obj", "text", "refs", "list", "user", "nope", "__class__", ""])


@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@given(root=ROOTS, segments=st.lists(SEGMENTS, max_size=6), dotted=st.booleans(), raw=st.text(max_size=40))
@example(root="obj", segments=["__class__", "__init__", "__globals__"], dotted=True, raw="")
@example(root="geo", segments=["obj", "secret"], dotted=True, raw="")
@example(root="user", segments=["__class__"], dotted=True, raw="")
@example(root="geo", segments=["__import__('os').system('id')"], dotted=True, raw="")
def test_ref_paths_reach_only_the_data(root: str, segments: list[str], dotted: bool, raw: str) -> None:
    results, user = _data()
    nodes: list[Any] = []
    _reachable(results, nodes)
    _reachable(user, nodes)
    path = root + "".join(s if s.startswith("[") else f".{s}" for s in segments) if dotted else raw
    Spy.touched.clear()
    CHECKED["paths"] += 1
    for ref in ({"$ref": path}, f"$ref:{path}"):
        try:
            value = resolve_value(ref, results, user)
        except RefError as error:
            CHECKED["refused"] += 1
            assert str(error).startswith("$ref ")
            continue
        CHECKED["resolved"] += 1
        # The value is the user object, or a node of the data, or JSON parsed from a result string: never an
        # attribute, a method, a class or anything computed.
        assert (
            value == user
            or any(value is node for node in nodes)
            or any(type(value) is type(node) and value == node for node in nodes)
        ), f"{path!r} reached {value!r}"
        assert not callable(value) or isinstance(value, Spy)
    assert Spy.touched == [], f"{path!r} touched the object: {Spy.touched}"


def test_references_inside_results_are_data_not_resolved_again(figures: Any) -> None:
    results, user = _data()
    assert resolve_value({"$ref": "refs.x"}, results, user) == {"$ref": "user.token"}
    assert resolve_value({"$ref": "refs.y"}, results, user) == "$ref:geo.lat"
    assert resolve_value({"$ref": "geo.obj"}, results, user) is results["obj"]  # the object itself, untouched
    figures.record(
        "ref_safety",
        paths=CHECKED["paths"],
        resolved=CHECKED["resolved"],
        refused=CHECKED["refused"],
        attribute_accesses=0,
    )


async def test_oversized_results_are_truncated_in_state_and_cut_in_the_prompt(figures: Any) -> None:
    huge = "x" * 300_000

    async def dump(size: int) -> dict[str, Any]:
        """Returns a large blob."""
        return {"blob": huge[:size]}

    records = await execute_plan(
        {"steps": [{"tools": [{"id": "d", "name": "dump", "arguments": {"size": 300_000}}]}]},
        FunctionToolSource([dump]),
        policy=ExecutionPolicy(max_result_chars=1_000),
    )
    assert records["d"]["result"]["truncated"] is True
    assert records["d"]["result"]["note"] == "result of 300012 characters truncated to 1000"
    assert len(records["d"]["result"]["preview"]) == 1_000

    # Through the graph (default policy, 200,000 characters): the state keeps the note, the prompt is cut.
    plan = json.dumps({"steps": [{"tools": [{"id": "d", "name": "dump", "arguments": {"size": 300_000}}]}]})
    model = ReplayChatModel.of([plan, "Zu groß, aber angekommen."])
    async with Agent(
        model=model, tools=FunctionToolSource([dump]), retriever=False, context=Context(today="2026-11-22")
    ) as agent:
        reply = await agent.ask("Gib mir alles, 300000 Zeichen.", thread_id="big")
        state = await agent.state("big")
    kept = state["results"]["d"]
    assert kept["truncated"] is True and "truncated to 200000" in kept["note"]
    assert len(json.dumps(kept)) < 201_000
    answer_prompt = model.prompts[1][-1].content
    assert "truncated ja" in answer_prompt  # the typed values say it was cut (the blob itself: its length only)
    assert len(answer_prompt) < 3 * MAX_RESULT_CHARS_IN_PROMPT
    assert reply.answer == "Zu groß, aber angekommen."
    figures.record(
        "size_limits", result_chars=300_012, kept_in_state=len(json.dumps(kept)), answer_prompt_chars=len(answer_prompt)
    )

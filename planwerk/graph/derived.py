"""The state's derived keys, added where the state is read from outside: a thread's snapshot, a run's stream.

The state keeps each datum once. A successful call's result lives in its record in ``calls``; the ``results`` a
program reads (results by call id, in the run's output, ``get_state``, the ``values``, ``updates``, ``checkpoints``
and ``debug`` stream modes) is derived from the records with :func:`planwerk.core.calls.results_of` when it is read,
never written by a node nor stored in a checkpoint. The views carry it where the former ``results`` channel was:
beside ``calls`` from ``prepare`` on, and in a node's update that wrote successful records (``None`` where the
update reset the call log). Likewise the ``question`` is derived from the thread's messages (the message it came
in, :func:`planwerk.graph.nodes.chat.question_index`) and ``user.raw`` from it, in the views of the whole state
(not in a node's update). The functions are pure; :class:`DerivedStateGraph` applies them to what
LangGraph reads from the checkpoints.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from planwerk.core.calls import results_of
from planwerk.core.refs import user_fields
from planwerk.graph.nodes.chat import question_text

RESULTS = "results"
"""The derived results by call id."""
QUESTION = "question"
"""The derived question."""


def with_results(values: Any) -> Any:
    """``values`` with ``results`` derived from its ``calls``, placed before them (the former channel's place), and,
    in a whole state (one with ``user``), the ``question`` from its messages (after them, the former channel's place)
    and ``user.raw`` from it; ``values`` unchanged when it holds no call log (a state before ``prepare``, a chosen
    subset of keys)."""
    if not isinstance(values, Mapping) or not isinstance(values.get("calls"), list):
        return values
    question = None
    if isinstance(values.get("user"), Mapping) and isinstance(values.get("messages"), list):
        question = question_text(values["messages"])
        values = {**values, "user": user_fields(values["user"], question)}
    derived: dict[str, Any] = {}
    for key, value in values.items():
        if key == "calls":
            derived[RESULTS] = results_of(value)
        if key not in (RESULTS, QUESTION):  # a value stored by an older version is replaced by the derived one
            derived[key] = value
        if key == "messages" and question is not None:
            derived[QUESTION] = question
    return derived


def update_with_results(update: Any) -> Any:
    """A node's update with the ``results`` the former channel received: ``None`` where it reset the call log,
    the successful records' results where it added any, nothing otherwise."""
    if not isinstance(update, Mapping) or "calls" not in update:
        return update
    calls = update["calls"]
    if calls is None:
        return {**update, RESULTS: None}
    if isinstance(calls, list) and (results := results_of(calls)):
        return {**update, RESULTS: results}
    return update


def snapshot_with_results(snapshot: StateSnapshot) -> StateSnapshot:
    """A thread's snapshot with the derived ``results`` in its values."""
    return snapshot._replace(values=with_results(snapshot.values))


def _payload_with_results(mode: str, data: Any) -> Any:
    """One stream chunk of ``mode`` with the derived keys."""
    if mode == "values":
        return with_results(data)
    if mode == "updates" and isinstance(data, Mapping):
        return {node: update_with_results(update) for node, update in data.items()}
    if mode == "checkpoints" and isinstance(data, Mapping) and "values" in data:
        return {**data, "values": with_results(data["values"])}
    if mode == "debug" and isinstance(data, Mapping) and data.get("type") == "checkpoint":
        payload = data.get("payload")
        if isinstance(payload, Mapping) and "values" in payload:
            return {**data, "payload": {**payload, "values": with_results(payload["values"])}}
    return data


def part_with_results(part: Any, stream_mode: str | list[str] | tuple[str, ...] | None) -> Any:
    """One item of a graph's ``stream``/``astream`` with the derived keys, in whichever shape LangGraph gives it:
    a ``version="v2"`` part (``{"type", "ns", "data"}``), ``(namespace, mode, chunk)`` with subgraphs and several
    modes, ``(mode, chunk)`` for several modes, ``(namespace, chunk)`` with subgraphs and one mode, or the bare
    chunk of the one ``stream_mode``."""
    if isinstance(part, dict) and isinstance(part.get("type"), str) and "data" in part and "ns" in part:
        return {**part, "data": _payload_with_results(part["type"], part["data"])}
    single = stream_mode if isinstance(stream_mode, str) else None
    if isinstance(part, tuple) and len(part) == 3 and isinstance(part[1], str):
        namespace, mode, chunk = part
        return (namespace, mode, _payload_with_results(mode, chunk))
    if isinstance(part, tuple) and len(part) == 2:
        first, chunk = part
        if isinstance(first, str) and single is None:
            return (first, _payload_with_results(first, chunk))
        if isinstance(first, tuple) and single is not None:
            return (first, _payload_with_results(single, chunk))
        return part
    if single is not None:
        return _payload_with_results(single, part)
    return part


class DerivedStateGraph(CompiledStateGraph):
    """A compiled graph whose thread snapshots (``get_state``, the state history) carry the derived keys: what the
    LangGraph server, Aegra and :class:`planwerk.agent.Agent` show of a thread. The streams are derived where a
    run streams (:class:`planwerk.graph.builder.DurableGraph`)."""

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """LangGraph's ``get_state`` with the derived keys."""
        return snapshot_with_results(super().get_state(config, subgraphs=subgraphs))

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """LangGraph's ``aget_state`` with the derived keys."""
        return snapshot_with_results(await super().aget_state(config, subgraphs=subgraphs))

    def get_state_history(self, config: RunnableConfig, **kwargs: Any) -> Iterator[StateSnapshot]:  # type: ignore[override]
        """LangGraph's ``get_state_history`` with the derived keys."""
        for snapshot in super().get_state_history(config, **kwargs):
            yield snapshot_with_results(snapshot)

    async def aget_state_history(  # type: ignore[override]
        self, config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[StateSnapshot]:
        """LangGraph's ``aget_state_history`` with the derived keys."""
        async for snapshot in super().aget_state_history(config, **kwargs):
            yield snapshot_with_results(snapshot)

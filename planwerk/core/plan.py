"""The plan model: what the planner writes and the executor runs.

A plan is ``{"steps": [{"description", "tools": [{"id", "name", "arguments"}]}], "final": null|str}`` as in the
workshop notebook, or ``{"ask_user": "<question>"}`` when required information is missing. Pure: no I/O.

A plan is validated once, where a reply becomes a :class:`Plan` (the graph's ``check`` node, or a public API that
takes a dict). The graph's state keeps it as :class:`PlanData`, the plain data :meth:`Plan.stored` writes: a
checkpoint stores no pydantic object (LangGraph's msgpack serializer admits only types on its allow-list, and the
servers create serializers of their own). Code that reads a stored plan reads it through :meth:`Plan.from_stored`
or :func:`planned_calls`, which trust it and validate nothing again.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal, NotRequired, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

PlanFormat = Literal["json", "expression"]
"""How the planner writes a plan: ``json`` (steps of calls passing results on with ``$ref``) or ``expression``
(one arithmetic expression whose operators and function calls become the calls, :mod:`planwerk.core.expressions`;
for calculation tools that return one number)."""

INT64_MAX = 2**63 - 1
"""The largest integer a checkpoint stores (msgpack): a model once wrote 4 followed by 48 zeros into a plan, and the
run crashed when its state was saved."""


class CallData(TypedDict):
    """A planned call as a state stores it (:class:`PlannedCall`'s fields)."""

    id: str
    name: str
    arguments: dict[str, Any]


class StepData(TypedDict):
    """A step as a state stores it (:class:`Step`'s fields)."""

    description: str
    tools: list[CallData]


class PlanData(TypedDict):
    """A plan as a state stores it: what :meth:`Plan.stored` writes, validated when it was stored."""

    steps: list[StepData]
    final: str | None
    ask_user: NotRequired[str | None]
    """Written by every stored plan; the planner's own shape (a few-shot example) leaves it out."""
    reason: NotRequired[str | None]
    """Written by every plan since plans carry a reason; a plan stored before lacks it (read as ``None``)."""
    next_round: NotRequired[bool]
    """Written by every plan since planning in rounds; a plan stored before lacks it (read as ``False``)."""


class PlannedCall(BaseModel):
    """One tool call of a plan."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=100)
    """Unique within the plan; later calls reference the result as ``{"$ref": "<id>.<path>"}``."""
    name: str = Field(min_length=1, max_length=200)
    """The tool's name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Literal values, ``{"$ref": ...}`` objects or ``"$ref:..."`` strings. An integer beyond 64 bits is kept as the
    float nearest to it (a checkpoint cannot store it; a tool taking an integer then refuses it, saying why)."""

    @field_validator("arguments")
    @classmethod
    def _storable_numbers(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        return {key: storable(value) for key, value in arguments.items()}


class Step(BaseModel):
    """Calls that may run in parallel; they may reference only calls of earlier steps."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    description: str = ""
    tools: list[PlannedCall] = Field(default_factory=list)


class Plan(BaseModel):
    """A whole plan. ``final`` is a ready answer (then ``steps`` is usually empty)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    steps: list[Step] = Field(default_factory=list)
    final: str | None = None
    ask_user: str | None = None
    """A question for the user when required information is missing; nothing runs then."""
    reason: str | None = None
    """Why a plan without calls calls nothing (the context answers it, no tool fits): an empty plan is a decision,
    and the check questions it once when loaded tools fit the question (:mod:`planwerk.core.question_fit`)."""

    next_round: bool = False
    """Plan again after these calls (profiles with ``plan_rounds``): the next round's planner sees a typed, clipped
    summary of their results (:mod:`planwerk.core.rounds`), never their raw text unless the profile allows it."""

    @field_validator("reason", mode="before")
    @classmethod
    def _reason_text(cls, value: Any) -> str | None:
        return None if value is None else str(value).strip() or None

    def calls(self) -> Iterator[tuple[int, PlannedCall]]:
        """Every call with the index of its step, in plan order."""
        for index, step in enumerate(self.steps):
            for call in step.tools:
                yield index, call

    @property
    def call_count(self) -> int:
        """How many tool calls the plan makes."""
        return sum(len(step.tools) for step in self.steps)

    def stored(self) -> PlanData:
        """The plan as a state keeps it: plain JSON-like data that any checkpoint serializer stores."""
        return cast(PlanData, self.model_dump())

    @classmethod
    def from_stored(cls, data: PlanData) -> Plan:
        """The plan that :meth:`stored` wrote ``data`` from, without validating it again (it was validated once,
        before it was stored): a cheap typed view of a state's plan. Fields a plan stored by an earlier version
        lacks take their defaults."""
        steps = [
            Step.model_construct(
                description=step.get("description", ""),
                tools=[
                    PlannedCall.model_construct(id=call["id"], name=call["name"], arguments=call.get("arguments", {}))
                    for call in step.get("tools", [])
                ],
            )
            for step in data.get("steps", [])
        ]
        return cls.model_construct(
            steps=steps,
            final=data.get("final"),
            ask_user=data.get("ask_user"),
            reason=data.get("reason"),
            next_round=data.get("next_round", False),
        )


def planned_calls(data: PlanData | None) -> Iterator[tuple[int, PlannedCall]]:
    """Every call of a stored plan with the index of its step, in plan order (none without a plan); nothing is
    validated again (:meth:`Plan.from_stored`)."""
    return Plan.from_stored(data).calls() if data is not None else iter(())


def storable(value: Any) -> Any:
    """``value`` with every integer beyond 64 bits (anywhere inside lists and dicts) as the nearest float (or an
    infinity, beyond floats)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -INT64_MAX - 1 <= value <= INT64_MAX:
            return value
        try:
            return float(value)
        except OverflowError:  # beyond 1.8e308 (a runaway of digits): infinity, which the tools refuse
            return math.inf if value > 0 else -math.inf
    if isinstance(value, list):
        return [storable(item) for item in value]
    if isinstance(value, dict):
        return {key: storable(item) for key, item in value.items()}
    return value

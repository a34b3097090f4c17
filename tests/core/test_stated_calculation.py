"""A calculation the question writes out whole is the plan where the model's plan takes other numbers."""

from __future__ import annotations

import pytest

from planwerk.core.expressions import compile_expression
from planwerk.core.plan import Plan
from planwerk.core.stated_calculation import replaced_by_stated, stated_calculation
from planwerk.core.tools import ToolSpec

SPECS = {
    name: ToolSpec(
        name=name,
        input_schema={
            "type": "object",
            "properties": {"arg_0": {"type": "number"}, "arg_1": {"type": "number"}},
            "required": ["arg_0", "arg_1"],
        },
    )
    for name in ("add", "subtract", "multiply", "divide", "power")
}


def _calls(plan: object) -> list[tuple[str, dict[str, object]]]:
    assert plan is not None
    return [(call.name, dict(call.arguments)) for _, call in plan.calls()]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Was ist 2 + 3?", ("add", {"arg_0": 2, "arg_1": 3})),
        ("1 ÷ [1 + 1 ÷ (1 ÷ 1)] = ?", ("divide", {"arg_0": 1, "arg_1": 1})),
        ("Find the value of (950+ 220/900) × 900", ("divide", {"arg_0": 220, "arg_1": 900})),
        ("Wie viel ist 2,5 · 4?", ("multiply", {"arg_0": 2.5, "arg_1": 4})),
    ],
)
def test_a_question_that_is_a_calculation_gives_its_plan(question: str, first: tuple[str, dict[str, object]]) -> None:
    assert _calls(stated_calculation(question, SPECS))[0] == first


@pytest.mark.parametrize(
    "question",
    [
        "What is the remainder of the division (1525*1527*1529)/12?",  # words change what is asked
        "A train is 360 m long and runs at 45 km/h. In what time will it pass a 240 m bridge?",
        "What is 12 times 7?",  # no operator written: the model's to plan
        "Was ist 2 + x, wenn x = 3?",  # not every number in one calculation
    ],
)
def test_a_question_with_more_than_a_calculation_gives_none(question: str) -> None:
    assert stated_calculation(question, SPECS) is None


def test_a_plan_with_the_questions_numbers_stays_and_one_with_others_is_replaced() -> None:
    question = "Was ist 2 + 3?"
    assert replaced_by_stated(compile_expression("3 + 2", SPECS), question, SPECS) is None
    assert _calls(replaced_by_stated(compile_expression("5 + 3", SPECS), question, SPECS)) == [
        ("add", {"arg_0": 2, "arg_1": 3})
    ]
    assert replaced_by_stated(compile_expression("5 + 3", SPECS), "What is 5 plus 3?", SPECS) is None
    # A plan that does more than calculate keeps its calls ("Zähle a, b, dann 2 + 3." with a tool that counts).
    counting = {**SPECS, "record": ToolSpec(name="record", input_schema={"type": "object", "properties": {}})}
    more = Plan.model_validate(
        {"steps": [{"tools": [{"id": "r", "name": "record", "arguments": {"hold_s": 600}}]}, *_steps("5 + 3")]}
    )
    assert replaced_by_stated(more, "Zähle a, b, dann 2 + 3.", counting) is None
    # Extra numbers beside the question's are the model's (a constant); only the question's left out counts.
    assert replaced_by_stated(compile_expression("(2 + 3) * 1", SPECS), question, SPECS) is None


def _steps(expression: str) -> list[dict[str, object]]:
    return compile_expression(expression, SPECS).stored()["steps"]

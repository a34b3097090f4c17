"""Expression plans: compiling a model's arithmetic into tool calls, and writing plans back as expressions."""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planwerk.core.checking import check_plan
from planwerk.core.expressions import (
    MAX_CALLS,
    ExpressionNotation,
    ExpressionParseError,
    compile_expression,
    parse_expression_plan,
    plan_expression,
)
from planwerk.core.parsing import PlanParseError
from planwerk.core.plan import Plan
from planwerk.core.refs import parse_ref, ref_text
from planwerk.core.tools import ToolSpec
from planwerk.prompts.examples import library
from planwerk.tools.servers import math as math_server

RESULT = {"type": "object", "properties": {"result": {"type": "number"}}}


def numeric(name: str, arity: int = 2) -> ToolSpec:
    properties = {f"arg_{i}": {"type": "number"} for i in range(arity)}
    return ToolSpec(name, input_schema={"type": "object", "properties": properties}, output_schema=RESULT)


SPECS: dict[str, ToolSpec] = {
    **{name: numeric(name) for name in ("add", "subtract", "multiply", "divide", "power")},
    **{name: numeric(name, 1) for name in ("negate", "sqrt", "factorial")},
    "geocode": ToolSpec(
        "geocode",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}}},
        output_schema={"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}},
    ),
    "distance": ToolSpec(
        "distance",
        input_schema={"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}},
    ),
}


def evaluate(plan: Plan) -> float:
    """Run a plan of math calls in plan order, without MCP: the value of its last call."""
    values: dict[str, Any] = {}

    def value(argument: Any) -> Any:
        text = ref_text(argument)
        if text is None:
            return argument
        ref = parse_ref(text)
        result = values[ref.root]
        for segment in ref.path:
            result = result[segment]
        return result

    last = None
    for _, call in plan.calls():
        args = [value(a) for a in call.arguments.values()]
        values[call.id] = {"result": math_server.call(call.name, *args)}
        last = call.id
    assert last is not None
    return float(values[last]["result"])


def calls(plan: Plan) -> list[tuple[str, str, dict[str, Any]]]:
    return [(call.id, call.name, dict(call.arguments)) for _, call in plan.calls()]


def test_operators_become_calls_and_independent_ones_share_a_step() -> None:
    plan = compile_expression("(200 + 150) / 1000 / (48 - 40) * 3600", SPECS)
    assert [[c.name for c in step.tools] for step in plan.steps] == [
        ["add", "subtract"],  # independent: one step, run in parallel
        ["divide"],
        ["divide"],
        ["multiply"],
    ]
    assert calls(plan) == [
        ("var_1", "add", {"arg_0": 200, "arg_1": 150}),
        ("var_2", "subtract", {"arg_0": 48, "arg_1": 40}),
        ("var_3", "divide", {"arg_0": {"$ref": "var_1.result"}, "arg_1": 1000}),
        ("var_4", "divide", {"arg_0": {"$ref": "var_3.result"}, "arg_1": {"$ref": "var_2.result"}}),
        ("var_5", "multiply", {"arg_0": {"$ref": "var_4.result"}, "arg_1": 3600}),
    ]
    assert plan.final is None
    assert evaluate(plan) == pytest.approx((200 + 150) / 1000 / (48 - 40) * 3600)
    assert check_plan(plan, SPECS) == []  # an ordinary plan: the checker finds nothing to say


def test_argument_order_follows_the_schema_not_the_alphabet() -> None:
    # subtract(arg_0, arg_1) = arg_0 - arg_1: "10 - 4" must not become 4 - 10
    plan = compile_expression("10 - 4", SPECS)
    assert calls(plan) == [("var_1", "subtract", {"arg_0": 10, "arg_1": 4})]
    assert evaluate(plan) == 6


def test_functions_take_positional_and_keyword_arguments_and_fields_of_results() -> None:
    plan = compile_expression('distance(lat=geocode("Rom").lat, lon=geocode(city="Rom")["lon"])', SPECS)
    assert calls(plan) == [
        ("var_1", "geocode", {"city": "Rom"}),
        ("var_2", "geocode", {"city": "Rom"}),
        ("var_3", "distance", {"lat": {"$ref": "var_1.lat"}, "lon": {"$ref": "var_2.lon"}}),
    ]
    # A tool without output fields passes its whole result on.
    nested = compile_expression("sqrt(distance(1, 2))", SPECS)
    assert calls(nested)[1] == ("var_2", "sqrt", {"arg_0": {"$ref": "var_1"}})


def test_minus_a_number_is_a_literal_and_minus_a_calculation_calls_negate() -> None:
    assert calls(compile_expression("-3 * 2", SPECS)) == [("var_1", "multiply", {"arg_0": -3, "arg_1": 2})]
    plan = compile_expression("-(2 * 3)", SPECS)
    assert [c.name for _, c in plan.calls()] == ["multiply", "negate"]
    assert evaluate(plan) == -6
    without_negate = {k: v for k, v in SPECS.items() if k != "negate"}
    with pytest.raises(ExpressionParseError, match="needs a negate tool"):
        compile_expression("-(2 * 3)", without_negate)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("(3 + 4) * 2", 14),
        ("```python\n(3 + 4) * 2\n```", 14),
        ("Expression: `(3 + 4) * 2`", 14),
        ("answer = (3 + 4) * 2", 14),
        ("'(3 + 4) * 2'", 14),
        ("(3 + 4) * 2 = 14", 14),  # the model's own result after the calculation is not part of it
        ("The trains need the sum of the lengths times 2:\n(3 + 4) * 2\nSo the answer is 14.", 14),
        ("x = 3 + 4; x * 2", 7),  # the first statement that compiles; a name is no number
    ],
)
def test_replies_are_read_tolerantly(reply: str, expected: float) -> None:
    assert evaluate(parse_expression_plan(reply, SPECS)) == expected


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "the reply is empty"),
        ("   \n ", "the reply is empty"),
        ("42", "computes nothing with the tools"),
        ("The answer is forty-two.", "is not an arithmetic expression"),
        ("hypot(3, 4)", "'hypot' is not a loaded tool; use \\+ - \\* / \\*\\* or the functions"),
        ("7 // 2", "no loaded tool computes '//'"),
        ("price * 2", "'price' is not a number"),
        ("sqrt(1, 2)", "sqrt takes 1 argument"),
        ("sqrt(x=4)", "sqrt has no argument 'x'; its arguments: arg_0"),
        ("sqrt(4, arg_0=4)", "sqrt gets 'arg_0' twice"),
        ("sqrt(*[4])", "plain arguments"),
        ("3 < 4", "is not arithmetic"),
        ("True + 1", "is not a number or a text"),
        ("(2 + 3).result", "only a tool's result has fields"),
        ("math.sqrt(4)", "is not a tool name"),
        ("x" * 5000, "characters long"),
    ],
)
def test_bad_replies_say_what_was_wrong_and_what_was_expected(reply: str, message: str) -> None:
    with pytest.raises(ExpressionParseError, match=message):
        parse_expression_plan(reply, SPECS)


def test_a_parse_error_is_a_plan_parse_error_so_the_check_hands_it_back_to_the_planner() -> None:
    assert issubclass(ExpressionParseError, PlanParseError)


def test_runaway_expressions_are_bounded() -> None:
    sum_of_many = " + ".join(["1"] * (MAX_CALLS + 2))
    with pytest.raises(ExpressionParseError, match=f"more than {MAX_CALLS} tool calls"):
        compile_expression(sum_of_many, SPECS)
    deep = "(" * 300 + "1 + 2" + ")" * 300
    with pytest.raises(ExpressionParseError, match=r"nested too deeply|not an arithmetic expression"):
        parse_expression_plan(deep, SPECS)
    unclosed = "(1 / 2) * " * 20 + "("  # the 0.5B model's loop, cut by the token limit
    with pytest.raises(ExpressionParseError, match="is not an arithmetic expression"):
        parse_expression_plan(unclosed, SPECS)


def test_other_operator_tools() -> None:
    notation = ExpressionNotation(operators={"+": "add", "%": "reminder"}, negate=None)
    specs = {"add": SPECS["add"], "reminder": numeric("reminder")}
    assert calls(compile_expression("(7 + 1) % 3", specs, notation))[1][1] == "reminder"
    assert notation.available(specs) == {"+": "add", "%": "reminder"}


@pytest.mark.parametrize(
    "expression",
    ["(200 + 150) / 1000 / (48 - 40) * 3600", "2 ** 10 - factorial(5)", "-(3 - sqrt(16)) * 2", "1 - (2 - 3)"],
)
def test_a_plan_is_written_back_as_the_expression_it_came_from(expression: str) -> None:
    plan = compile_expression(expression, SPECS)
    assert plan_expression(plan, SPECS) == expression
    assert compile_expression(plan_expression(plan, SPECS), SPECS) == plan


def test_writing_back_fields_and_plans_without_calls() -> None:
    plan = compile_expression('distance(geocode("Rom").lat, 2)', SPECS)
    assert plan_expression(plan, SPECS) == "distance(geocode('Rom').lat, 2)"  # both quotes are texts
    # A plan without calls says its answer or asks: the pseudo-calls, which compile back to the same plan.
    for plan_without_calls, written in [
        ({"steps": [], "final": 'Only "sums", sorry.'}, 'answer("Only \\"sums\\", sorry.")'),
        ({"steps": [], "ask_user": "Which two numbers?"}, 'ask_user("Which two numbers?")'),
    ]:
        assert plan_expression(plan_without_calls) == written
        assert compile_expression(written, SPECS) == Plan.model_validate(plan_without_calls)
    with pytest.raises(ValueError, match="no calls, no answer and no question"):
        plan_expression({"steps": []})
    loop = {"steps": [{"tools": [{"id": "a", "name": "add", "arguments": {"arg_0": {"$ref": "a.result"}}}]}]}
    with pytest.raises(ValueError, match="names no earlier call"):
        plan_expression(loop)


def test_every_math_example_reads_as_an_expression_that_computes_the_same() -> None:
    # The planner is shown the library's JSON plans as expressions: each must compile back to a plan with the
    # same result (results used twice are written twice, so the plan may have more calls, never another value).
    specs = {tool.name: numeric(tool.name, len(tool.params)) for tool in math_server.TOOLS}
    examples = library("math")
    assert len(examples) > 50
    for example in examples:
        original = Plan.model_validate(example.plan)
        written = plan_expression(original, specs)
        assert evaluate(compile_expression(written, specs)) == pytest.approx(evaluate(original), rel=1e-9), written


_NUMBERS = st.integers(min_value=1, max_value=50)


@st.composite
def arithmetic(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 4 or draw(st.booleans()):
        return str(draw(_NUMBERS))
    operator = draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"({draw(arithmetic(depth + 1))} {operator} {draw(arithmetic(depth + 1))})"


@settings(max_examples=200, deadline=None)
@given(arithmetic())
def test_any_arithmetic_computes_what_python_computes(expression: str) -> None:
    try:
        expected = eval(compile(ast.parse(expression, mode="eval"), "<test>", "eval"))  # digits and operators only
    except ZeroDivisionError:
        return
    try:
        plan = compile_expression(expression, SPECS)
    except ExpressionParseError as error:
        assert "computes nothing" in str(error) and "(" not in expression
        return
    assert check_plan(plan, SPECS) == []
    try:
        got = evaluate(plan)
    except (ValueError, ZeroDivisionError):
        return  # 0 as a computed divisor: the math server refuses it like Python does
    assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    # Steps respect dependencies: a call only references calls of earlier steps.
    seen: set[str] = set()
    for step in plan.steps:
        for call in step.tools:
            assert all(parse_ref(t).root in seen for t in _refs(call.arguments))
        seen |= {call.id for call in step.tools}


def _refs(arguments: Mapping[str, Any]) -> list[str]:
    return [text for value in arguments.values() if (text := ref_text(value)) is not None]

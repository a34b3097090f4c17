"""The expression grammar: what it admits compiles with the loaded tools, and what the model wrote unconstrained
(names, ``^``, its own result) it does not admit."""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.model import math_specs
from planwerk.core.expression_grammar import argument_kind, expression_grammar
from planwerk.core.expressions import ExpressionNotation, ExpressionParseError, compile_expression
from planwerk.core.tools import ToolSpec

from .test_expressions import SPECS, numeric


def admits(specs: Mapping[str, ToolSpec], text: str, notation: ExpressionNotation | None = None) -> bool:
    grammar = expression_grammar(specs, notation) if notation else expression_grammar(specs)
    return bool(xgr.testing._is_grammar_accept_string(xgr.Grammar.from_ebnf(grammar), text))


WITH_OPTIONAL = {
    **SPECS,
    "scale": ToolSpec(
        "scale",
        input_schema={
            "type": "object",
            "properties": {"value": {"type": "number"}, "factor": {"type": "integer"}, "unit": {"type": "string"}},
            "required": ["value"],
        },
    ),
    "mean": ToolSpec(
        "mean",
        input_schema={"type": "object", "properties": {"values": {"type": "array", "items": {"type": "number"}}}},
    ),
}


@pytest.mark.parametrize(
    "text",
    [
        "(200 + 150) / 1000 / (48 - 40) * 3600",
        "add(1, 2)",
        "2 ** -3",
        "sqrt(16) + factorial(3)",
        "-sqrt(4) * 2",
        "-(3 + 4)",
        "1e5 * 2.5",
        "((2 + 3))",
        "add(subtract(10,4),divide(9, 3))",
        'geocode("Paris", "FR").lat',
        "distance(1, 2)",
        "scale(3)",
        "scale(3, 2)",
        'scale(3, 2, "km")',
        "geocode('Paris', 'FR').lon",
        'answer("I only calculate; the capital of Australia is no calculation.")',
        'ask_user("Which two numbers should I add?")',
    ],
)
def test_admits_calculations_that_compile(text: str) -> None:
    assert admits(WITH_OPTIONAL, text)
    compile_expression(text, WITH_OPTIONAL)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("75 / 100 * m", "a name is not a number"),
        ("2 ^ 3", "^ is no operator here"),
        ("42", "a bare number computes nothing"),
        ("(42)", "a bracketed number computes nothing"),
        ("add(1)", "add takes two arguments"),
        ("add(1, 2, 3)", "add takes two arguments"),
        ("modulo(7, 2)", "no such tool"),
        ('scale(3, "km")', "the second argument is a number"),
        ("mean([1, 2])", "a list argument cannot be written"),
        ("7 // 2", "no tool computes //"),
        ("1 + 2 = 3", "the model's own result is not part of it"),
        ("1 +", "unfinished"),
        ("add(1, 2)\nadd(3, 4)", "one expression, one line"),
        ('add(1, answer("x"))', "answer stands alone"),
        ('answer("x") + 1', "answer stands alone"),
        ("answer(42)", "answer takes a text"),
        ("4" + "0" * 48 + " * 2", "a runaway of digits"),
    ],
)
def test_refuses_what_the_model_wrote_unconstrained(text: str, why: str) -> None:
    assert not admits(WITH_OPTIONAL, text), why


def test_operators_and_negation_follow_the_loaded_tools() -> None:
    only_add = {"add": numeric("add")}
    assert admits(only_add, "1 + 2") and not admits(only_add, "2 * 3")
    assert admits(only_add, "-1 + 2")  # a negative number is a literal
    assert not admits(only_add, "-(1 + 2)")  # negating a computed value needs a negate tool
    assert admits({**only_add, "negate": numeric("negate", 1)}, "-(1 + 2)")
    with_floor = ExpressionNotation(operators={"+": "add", "//": "add"})
    assert admits(only_add, "add(7, 2)") and admits(only_add, "7 + 2")
    assert admits(only_add, "7 // 2", with_floor)


def test_names_python_cannot_read_are_left_out() -> None:
    specs = {
        "lambda": numeric("lambda", 1),
        "max-value": numeric("max-value", 1),
        "größe": numeric("größe", 1),
        "pair": ToolSpec(
            "pair",
            input_schema={"type": "object", "properties": {"x": {"type": "number"}}},
            output_schema={"type": "object", "properties": {"class": {"type": "number"}, "low": {"type": "number"}}},
        ),
    }
    assert not admits(specs, "lambda(1)") and not admits(specs, "max-value(1)")
    assert admits(specs, "pair(größe(2)).low") and not admits(specs, "pair(1).class")
    compile_expression("pair(größe(2)).low", specs)


def test_a_tool_named_like_a_pseudo_call_wins() -> None:
    # A loaded tool "answer" is called like any tool: the pseudo-call gives way.
    specs = {"answer": numeric("answer", 1)}
    assert admits(specs, "answer(3)") and not admits(specs, 'answer("text")')
    assert compile_expression("answer(3)", specs).call_count == 1


def test_no_usable_tool_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no loaded tool can be written in an expression"):
        expression_grammar({"mean": WITH_OPTIONAL["mean"]})


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ({"type": "number"}, "number"),
        ({"type": "integer"}, "number"),
        ({"type": "string"}, "text"),
        ({"anyOf": [{"type": "integer"}, {"type": "number"}]}, "number"),
        ({"anyOf": [{"type": "number"}, {"type": "string"}]}, "any"),
        ({"type": ["number", "null"]}, "number"),
        ({}, "any"),
        ({"type": "array"}, None),
        ({"type": "boolean"}, None),
    ],
)
def test_argument_kinds(schema: dict[str, object], kind: str | None) -> None:
    assert argument_kind(schema) == kind


def test_the_math_server_tools_are_in_the_grammar() -> None:
    # The bundled server's tools with the schemas an MCP client lists; all but the list-taking ones are callable.
    specs = math_specs()
    grammar = expression_grammar(specs)
    with_lists = {
        name for name, spec in specs.items()
        if any(argument_kind(value) is None for value in spec.input_schema["properties"].values())
    }  # fmt: skip
    assert len(specs) - len(with_lists) > 20 and with_lists == {"max_number", "min_number"}
    assert all((f'"{name}("' in grammar) == (name not in with_lists) for name in specs)
    assert admits(specs, "divide(subtract(100, 40), 3) ** 2")


NUMBERS = st.one_of(st.integers(0, 10_000), st.floats(0, 1e4, allow_nan=False, allow_infinity=False).map(abs))
_BINARY = [ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.Pow()]


def _trees(depth: int) -> st.SearchStrategy[ast.expr]:
    leaf = NUMBERS.map(lambda n: ast.Constant(n))
    if depth == 0:
        return leaf
    sub = _trees(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(sub, st.sampled_from(_BINARY), sub).map(lambda t: ast.BinOp(t[0], t[1], t[2])),
        st.tuples(st.sampled_from(["add", "subtract", "multiply", "divide", "power"]), sub, sub).map(
            lambda t: ast.Call(ast.Name(t[0]), [t[1], t[2]], [])
        ),
        st.tuples(st.sampled_from(["sqrt", "factorial", "negate"]), sub).map(
            lambda t: ast.Call(ast.Name(t[0]), [t[1]], [])
        ),
        # Not "--x": no model writes it, and the grammar admits one sign per operand.
        sub.filter(lambda operand: not isinstance(operand, ast.UnaryOp)).map(lambda o: ast.UnaryOp(ast.USub(), o)),
    )


SPEC_GRAMMAR = xgr.Grammar.from_ebnf(expression_grammar(SPECS))


@settings(max_examples=150, deadline=None)
@given(_trees(3))
def test_grammar_admits_exactly_the_computing_expressions_that_compile(tree: ast.expr) -> None:
    # Every calculation Python writes over these tools is admitted iff it compiles (a bare number does not).
    text = ast.unparse(tree)
    try:
        compile_expression(text, SPECS)
        compiles = True
    except ExpressionParseError:
        compiles = False
    assert bool(xgr.testing._is_grammar_accept_string(SPEC_GRAMMAR, text)) == compiles, text

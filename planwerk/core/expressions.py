"""Expression plans: a calculation written as one arithmetic expression, compiled into a plan of tool calls.

A small coder model writes ``(200 + 150) / 1000 / (48 - 40) * 3600`` far more reliably than the same chain as JSON
steps that pass results on with ``$ref`` (measured on NESTFUL, see BENCHMARKS.md §2): arithmetic in Python syntax is
what it has read most. The tools still compute: every operator and every function call becomes one tool call, a
sub-expression's value reaches its caller as ``{"$ref": "<id>.<field>"}``, and calls that do not depend on each other
share a step (they run in parallel). The result is an ordinary :class:`~planwerk.core.plan.Plan`, checked, resolved
and executed like any other; the expression's outermost call is the plan's last call.

The notation is Python's expression syntax, read with :mod:`ast` (parsed, never evaluated):

- numbers and strings are literal arguments; ``-3`` is a negative number;
- ``a + b``, ``a - b``, ``a * b``, ``a / b``, ``a ** b`` call the tools :attr:`ExpressionNotation.operators` names
  (``add``, ``subtract``, ``multiply``, ``divide``, ``power``), ``-x`` of a computed ``x`` calls ``negate``;
- ``name(x, y)`` calls the tool ``name``; positional arguments fill the tool's input schema properties in their
  order, keyword arguments fill them by name;
- ``f(x).field`` and ``f(x)["field"]`` / ``f(x)[0]`` pass a part of a result on; a bare ``f(x)`` passes the result's
  only field (``{"result": 3}`` → 3) or the whole result when the tool declares no output fields;
- ``answer("…")`` alone is a plan without calls whose answer is the text (a question the tools cannot compute), and
  ``ask_user("…")`` alone asks the user (a number the calculation needs is missing): what a JSON plan says with
  ``final`` and ``ask_user``. A loaded tool of the same name wins.

Pure: no I/O, never raises anything but :class:`ExpressionParseError`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planwerk.core.parsing import PlanParseError
from planwerk.core.plan import Plan, PlannedCall, Step
from planwerk.core.refs import REF_KEY, parse_ref, ref_text, rename_refs
from planwerk.core.tools import ToolSpec

MAX_EXPRESSION_TEXT = 4_000
"""A longer reply is not searched for an expression (a runaway generation, not a calculation)."""
MAX_CALLS = 64
"""More tool calls than this in one expression is not a calculation a question needs."""

_FENCE = re.compile(r"```[a-zA-Z]*")
_LABEL = re.compile(r"^\s*(?:[-*]\s*)?(?:expression|answer|result|calculation|ausdruck|rechnung)\s*:\s*", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_]\w*\s*=(?!=)")

_OPERATOR_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
_SYMBOL_OPERATORS = {symbol: kind for kind, symbol in _OPERATOR_SYMBOLS.items()}


class ExpressionParseError(PlanParseError):
    """The reply holds no expression that compiles into a plan; the message says why and what was expected."""


@dataclass(frozen=True)
class ExpressionNotation:
    """Which tools an expression's operators call."""

    operators: Mapping[str, str] = field(
        default_factory=lambda: {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "**": "power"}
    )
    """Operator symbol (``+ - * / ** // %``) → the name of the tool with two arguments that computes it."""
    negate: str | None = "negate"
    """The tool with one argument that ``-x`` of a computed ``x`` calls (``-3`` is a literal and calls nothing)."""
    answer: str = "answer"
    """``answer("text")``: no calls, the text is the answer (a JSON plan's ``final``); not a tool."""
    ask_user: str = "ask_user"
    """``ask_user("question")``: no calls, the user is asked (a JSON plan's ``ask_user``); not a tool."""

    def replies(self, specs: Mapping[str, ToolSpec]) -> dict[str, str]:
        """The pseudo-calls that are not shadowed by a loaded tool: name → the :class:`Plan` field they fill."""
        fields = {self.answer: "final", self.ask_user: "ask_user"}
        return {name: plan_field for name, plan_field in fields.items() if name not in specs}

    def available(self, specs: Mapping[str, ToolSpec]) -> dict[str, str]:
        """The operators whose tools are loaded, symbol → tool name."""
        return {symbol: name for symbol, name in self.operators.items() if name in specs}


DEFAULT_NOTATION = ExpressionNotation()
"""The operators of the NESTFUL math tools (the bundled math server)."""


def parse_expression_plan(
    text: str, specs: Mapping[str, ToolSpec], notation: ExpressionNotation = DEFAULT_NOTATION
) -> Plan:
    """The plan that computes the expression in a model's reply with the tools in ``specs``.

    Tolerant of what models write around it: code fences, a label ("Expression:"), an assignment (``x = …``), a
    trailing ``= 42`` or explanation lines; the first line that compiles wins. Raises
    :class:`ExpressionParseError` with the first line's problem when none does.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionParseError("the reply is empty; expected one arithmetic expression, e.g. (3 + 4) * 2")
    if len(text) > MAX_EXPRESSION_TEXT:
        raise ExpressionParseError(f"the reply is {len(text)} characters long; an expression is far shorter")
    problems: list[str] = []
    for candidate in _candidates(text):
        try:
            return compile_expression(candidate, specs, notation)
        except ExpressionParseError as error:
            problems.append(str(error))
    if problems:
        raise ExpressionParseError(problems[0])
    raise ExpressionParseError("no expression found in the reply; answer with one arithmetic expression only")


def _candidates(text: str) -> Iterator[str]:
    """Each non-empty line of the reply, cleaned of fences and labels; an ``a = b = c`` line yields ``b`` first."""
    for raw in _FENCE.sub("\n", text).splitlines():
        line = _LABEL.sub("", raw.strip().strip("`")).strip().strip("`").strip()
        line = _ASSIGNMENT.sub("", line, count=1).strip()
        if len(line) > 2 and line[0] == line[-1] and line[0] in "'\"":  # a quoted expression is still one
            line = line[1:-1].strip()
        if not line:
            continue
        # "(3 + 4) * 2 = 14": the model's own result is not the calculation; ";" ends a Python statement.
        yield from [part.strip() for part in _top_level_parts(line) if part.strip()] or [line]


def _top_level_parts(line: str) -> list[str]:
    """``line`` split at each ``=`` (not ``==``, ``<=``, …) and ``;`` outside brackets and quotes: ``f(x=1)`` stays."""
    parts, start, depth, quote = [], 0, 0, ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and (
            char == ";"
            or (
                char == "="
                and line[index - 1 : index] not in ("=", "!", "<", ">")
                and line[index + 1 : index + 2] != "="
            )
        ):
            parts.append(line[start:index])
            start = index + 1
    parts.append(line[start:])
    return parts


def compile_expression(
    expression: str, specs: Mapping[str, ToolSpec], notation: ExpressionNotation = DEFAULT_NOTATION
) -> Plan:
    """The plan for one expression (no surrounding text): calls in evaluation order with ids ``var_1``, ``var_2``,
    …, one step per dependency level, the outermost call last."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionParseError(f"{expression!r} is not an arithmetic expression: {error.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionParseError(f"{expression[:80]!r}… is nested too deeply or is not an expression") from None
    if (reply := _reply_call(tree.body, specs, notation)) is not None:
        return reply
    builder = _Builder(specs, notation, expression)
    try:
        builder.value(tree.body)
    except RecursionError:
        raise ExpressionParseError("the expression is nested too deeply") from None
    if not builder.calls:
        raise ExpressionParseError(
            f"{expression!r} computes nothing with the tools; write the calculation with the numbers of the question"
            f" and {builder.operators_text()}, not its result"
        )
    # Every node that calls a tool makes its own call last: the outermost call is the plan's last call.
    return Plan(steps=builder.steps(), final=None)


def _reply_call(node: ast.expr, specs: Mapping[str, ToolSpec], notation: ExpressionNotation) -> Plan | None:
    """The plan of ``answer("…")`` / ``ask_user("…")`` at the top of an expression, else ``None``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    plan_field = notation.replies(specs).get(node.func.id)
    if plan_field is None:
        return None
    text = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not (isinstance(text, ast.Constant) and isinstance(text.value, str) and text.value.strip()):
        raise ExpressionParseError(f'{node.func.id}(...) takes one text in quotes, e.g. {node.func.id}("…")')
    return Plan(**{plan_field: text.value.strip()})


@dataclass
class _Builder:
    specs: Mapping[str, ToolSpec]
    notation: ExpressionNotation
    expression: str
    calls: list[PlannedCall] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)

    def operators_text(self) -> str:
        symbols = " ".join(self.notation.available(self.specs)) or "no operators"
        functions = sorted(set(self.specs) - set(self.notation.available(self.specs).values()))
        return f"{symbols} or the functions {', '.join(functions)}" if functions else symbols

    def fail(self, message: str) -> ExpressionParseError:
        return ExpressionParseError(f"in {self.expression!r}: {message}")

    def value(self, node: ast.expr) -> Any:
        """A literal, or a ``$ref`` to the call that computes ``node``."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float, str)):
                raise self.fail(f"{ast.unparse(node)} is not a number or a text")
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.value(node.operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(operand, (int, float)):
                return -operand
            if self.notation.negate is None or self.notation.negate not in self.specs:
                raise self.fail(f"-{ast.unparse(node.operand)} needs a negate tool, and none is loaded")
            return self.call(self.notation.negate, [operand], {}, node)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATOR_SYMBOLS:
            symbol = _OPERATOR_SYMBOLS[type(node.op)]
            name = self.notation.available(self.specs).get(symbol)
            if name is None:
                raise self.fail(f"no loaded tool computes {symbol!r}; use {self.operators_text()}")
            left, right = self.value(node.left), self.value(node.right)
            return self.call(name, [left, right], {}, node)
        if isinstance(node, ast.Call):
            return self.function(node)
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            return self.part(node)
        if isinstance(node, ast.Name):
            raise self.fail(f"{node.id!r} is not a number; write the question's numbers themselves")
        raise self.fail(f"{ast.unparse(node)!r} is not arithmetic; use {self.operators_text()}")

    def function(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name):
            raise self.fail(f"{ast.unparse(node.func)!r} is not a tool name")
        name = node.func.id
        if name in self.notation.replies(self.specs):
            raise self.fail(f"{name}(...) stands alone, not inside a calculation")
        if name not in self.specs:
            raise self.fail(f"{name!r} is not a loaded tool; use {self.operators_text()}")
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(kw.arg is None for kw in node.keywords):
            raise self.fail(f"{name}(...) takes plain arguments, not * or ** unpacking")
        positional = [self.value(arg) for arg in node.args]
        named = {str(kw.arg): self.value(kw.value) for kw in node.keywords}
        return self.call(name, positional, named, node)

    def part(self, node: ast.Attribute | ast.Subscript) -> Any:
        """``call(...).field`` / ``call(...)["field"]`` / ``call(...)[0]``: a path into a computed result."""
        path: list[str] = []
        current: ast.expr = node
        while isinstance(current, (ast.Attribute, ast.Subscript)):
            if isinstance(current, ast.Attribute):
                path.insert(0, current.attr)
            else:
                key = current.slice
                if not (isinstance(key, ast.Constant) and isinstance(key.value, (int, str))):
                    raise self.fail(f"{ast.unparse(current)!r}: an index must be a number or a quoted field")
                path.insert(0, str(key.value))
            current = current.value
        if not isinstance(current, ast.Call):
            raise self.fail(f"{ast.unparse(node)!r}: only a tool's result has fields")
        self.function(current)  # its call is the last one made (its arguments' calls come before it)
        return {REF_KEY: ".".join([self.calls[-1].id, *path])}

    def call(self, name: str, positional: Sequence[Any], named: Mapping[str, Any], node: ast.expr) -> Any:
        spec = self.specs[name]
        properties = list((spec.input_schema.get("properties") or {}).keys())
        if len(positional) > len(properties):
            raise self.fail(
                f"{name} takes {len(properties)} argument(s) ({', '.join(properties) or 'none'}), "
                f"{ast.unparse(node)!r} gives {len(positional)}"
            )
        arguments = dict(zip(properties, positional, strict=False))
        for key, value in named.items():
            if key not in properties:
                raise self.fail(f"{name} has no argument {key!r}; its arguments: {', '.join(properties) or 'none'}")
            if key in arguments:
                raise self.fail(f"{name} gets {key!r} twice")
            arguments[key] = value
        if len(self.calls) >= MAX_CALLS:
            raise self.fail(f"more than {MAX_CALLS} tool calls; a question needs far fewer")
        call_id = f"var_{len(self.calls) + 1}"
        level = 1 + max((self.levels[parse_ref(t).root] for t in _refs(arguments)), default=-1)
        self.calls.append(PlannedCall(id=call_id, name=name, arguments=arguments))
        self.levels[call_id] = level
        fields = output_fields(spec)
        return {REF_KEY: f"{call_id}.{fields[0]}" if len(fields) == 1 else call_id}

    def steps(self) -> list[Step]:
        """One step per dependency level; ids renumbered in plan order (``var_1`` runs first)."""
        by_level: dict[int, list[PlannedCall]] = {}
        for call in self.calls:
            by_level.setdefault(self.levels[call.id], []).append(call)
        ordered = [call for _, calls in sorted(by_level.items()) for call in calls]
        names = {call.id: f"var_{index}" for index, call in enumerate(ordered, start=1)}
        return [
            Step(
                description=", ".join(call.name for call in calls),
                tools=[
                    PlannedCall(id=names[c.id], name=c.name, arguments=rename_refs(c.arguments, names)) for c in calls
                ],
            )
            for _, calls in sorted(by_level.items())
        ]


def _refs(arguments: Mapping[str, Any]) -> Iterator[str]:
    for value in arguments.values():
        if (text := ref_text(value)) is not None:
            yield text


def output_fields(spec: ToolSpec) -> list[str]:
    """The fields a tool declares in its result (its output schema's properties); one field is a call's value."""
    schema = spec.output_schema or {}
    return list((schema.get("properties") or {}).keys()) if isinstance(schema, Mapping) else []


def plan_expression(
    plan: Plan | Mapping[str, Any], specs: Mapping[str, ToolSpec] | None = None,
    notation: ExpressionNotation = DEFAULT_NOTATION,
) -> str:  # fmt: skip
    """The expression that computes ``plan``'s last call, the inverse of :func:`compile_expression`: how a plan
    (a few-shot example, a plan that failed) is shown to a planner that writes expressions.

    Operator tools become their symbols, other calls ``name(args)`` with positional arguments in the order of
    ``specs``' input schema (keyword arguments without ``specs``); a result used twice is written twice; a plan
    without calls is ``ask_user("…")`` or ``answer("…")``. Raises :class:`ValueError` for a plan without calls,
    answer or question, or with a reference to no earlier call.
    """
    model = plan if isinstance(plan, Plan) else Plan.model_validate(plan)
    calls = {call.id: call for _, call in model.calls()}
    if not calls:
        # Double quotes, as the expression grammar writes texts (ast.unparse would write single ones).
        if model.ask_user:
            return f"{notation.ask_user}({json.dumps(model.ask_user, ensure_ascii=False)})"
        if model.final:
            return f"{notation.answer}({json.dumps(model.final, ensure_ascii=False)})"
        raise ValueError("the plan has no calls, no answer and no question to write as an expression")
    symbols = {name: symbol for symbol, name in notation.operators.items()}
    last = list(calls.values())[-1]

    def node(value: Any, seen: frozenset[str]) -> ast.expr:
        text = ref_text(value)
        if text is None:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
                return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))
            return ast.Constant(value)
        ref = parse_ref(text)
        if ref.root not in calls or ref.root in seen:
            raise ValueError(f"the reference {text!r} names no earlier call")
        call = calls[ref.root]
        tree = call_node(call, seen | {ref.root})
        spec = (specs or {}).get(call.name)
        fields = output_fields(spec) if spec is not None else ["result"]
        path = [str(p) for p in ref.path]
        if len(fields) == 1 and path == fields:
            return tree
        for segment in path:
            tree = ast.Attribute(value=tree, attr=segment) if segment.isidentifier() else ast.Subscript(
                value=tree, slice=ast.Constant(int(segment) if segment.lstrip("-").isdigit() else segment)
            )  # fmt: skip
        return tree

    def call_node(call: PlannedCall, seen: frozenset[str]) -> ast.expr:
        arguments = list(call.arguments.values())
        if call.name in symbols and len(arguments) == 2:
            operator = _SYMBOL_OPERATORS[symbols[call.name]]()
            return ast.BinOp(left=node(arguments[0], seen), op=operator, right=node(arguments[1], seen))
        if call.name == notation.negate and len(arguments) == 1:
            return ast.UnaryOp(op=ast.USub(), operand=node(arguments[0], seen))
        spec = (specs or {}).get(call.name)
        order = list((spec.input_schema.get("properties") or {}).keys()) if spec is not None else list(call.arguments)
        positional = [node(call.arguments[key], seen) for key in order if key in call.arguments]
        return ast.Call(func=ast.Name(call.name), args=positional, keywords=[])

    return ast.unparse(call_node(last, frozenset({last.id})))

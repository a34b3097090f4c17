"""A calculation the question writes out whole ("Was ist 2 + 3?", "1 ÷ [1 + 1 ÷ (1 ÷ 1)] = ?"). Pure.

Asked "Was ist 2 + 3?", both packaged models wrote ``5 + 3`` (the math profile's expression plans) and the answer
said 8: an operand computed in the head and then used again. Where the question's arithmetic is itself an
expression over every number it states, and the question says little else (at most :data:`MAX_FRAME_WORDS` words:
"What is", "Find the value of"), that expression is the plan; a plan that leaves out some of the question's numbers
is replaced by it (:func:`replaced_by_stated`). A plan that takes them all, in any order or grouping, stays the
model's, and so does a plan that calls anything but the operators' tools. More words may change what is asked
("the remainder of the division (1525*1527*1529)/12").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from planwerk.core.expressions import DEFAULT_NOTATION, ExpressionNotation, ExpressionParseError, compile_expression
from planwerk.core.plan import Plan
from planwerk.core.refs import ref_text
from planwerk.core.tools import ToolSpec

MAX_FRAME_WORDS = 4
"""A question whose calculation is the plan says at most this many words besides it."""

_SPAN = re.compile(r"[-+*/×÷·:^()\[\]{}\d\s.,]*\d[-+*/×÷·:^()\[\]{}\d\s.,]*")
_SYMBOLS = str.maketrans({"×": "*", "·": "*", "÷": "/", ":": "/", "[": "(", "]": ")", "{": "(", "}": ")"})
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _written(span: str) -> str:
    """A span of the question in Python's notation: ``×`` and ``÷`` as ``*`` and ``/``, ``^`` as ``**``, brackets as
    parentheses, a decimal comma between digits as a point; a trailing ``=`` or ``.`` dropped."""
    text = re.sub(r"(?<=\d),(?=\d)", ".", span.translate(_SYMBOLS)).replace("^", "**")
    return text.strip().rstrip("=.,").strip()


def _numbers(plan: Plan) -> Counter[float]:
    found: Counter[float] = Counter()
    for _, call in plan.calls():
        for value in call.arguments.values():
            if ref_text(value) is None and isinstance(value, int | float) and not isinstance(value, bool):
                found[abs(float(value))] += 1
    return found


def stated_calculation(
    question: str, specs: Mapping[str, ToolSpec], notation: ExpressionNotation = DEFAULT_NOTATION
) -> Plan | None:
    """The plan of the calculation ``question`` writes out, when one span of it holds every number the question
    states, at least two, joined by operators whose tools are loaded, the rest of the question is at most
    :data:`MAX_FRAME_WORDS` words, and it compiles; ``None`` otherwise."""
    stated = _NUMBER.findall(question.replace(",", "."))
    if len(stated) < 2:
        return None
    for match in _SPAN.finditer(question):
        text = _written(match.group())
        if len(_NUMBER.findall(text)) != len(stated) or not re.search(r"\d\s*[-+*/]", text):
            continue
        frame = question[: match.start()] + " " + question[match.end() :]
        if len(re.findall(r"[^\W\d_]+", frame)) > MAX_FRAME_WORDS:
            return None
        try:
            return compile_expression(text, specs, notation)
        except ExpressionParseError:
            return None
    return None


def replaced_by_stated(
    plan: Plan, question: str, specs: Mapping[str, ToolSpec], notation: ExpressionNotation = DEFAULT_NOTATION
) -> Plan | None:
    """The question's own calculation (:func:`stated_calculation`) where ``plan`` only calculates (every call is
    one of the notation's operators) and leaves out some of the question's numbers (its literals, in any order);
    ``None`` otherwise. A plan that also does something else ("Zähle a, b, dann 2 + 3.") is never replaced."""
    operators = {*notation.operators.values(), *([notation.negate] if notation.negate else [])}
    if not plan.call_count or any(call.name not in operators for _, call in plan.calls()):
        return None
    stated = stated_calculation(question, specs, notation)
    if stated is None or not _numbers(stated) - _numbers(plan):
        return None
    return stated

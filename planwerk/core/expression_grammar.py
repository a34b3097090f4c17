"""The grammar of expression plans for constrained decoding: only expressions that compile with the loaded tools.

Free decoding let the 0.5B default model write names into its arithmetic (``75 / 100 * m``), ``^`` for a power, or
its own result instead of a calculation; each of those is a rejected plan and another model call (8 % of NESTFUL
test questions ended without a plan that compiles, BENCHMARKS.md §2). Decoded under this grammar, a reply is one
expression over numbers, the operators whose tools are loaded and calls of loaded tools with the number of
arguments their input schema asks for, and it computes at least one call; or it is ``answer("…")`` or
``ask_user("…")`` alone. :func:`compile_expression` accepts every such reply.

The text is EBNF in the dialect both xgrammar and llama.cpp's GBNF read: ``rule ::= alternatives``, quoted literals,
character classes; rule names of letters, digits and dashes. Pure: no I/O.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from planwerk.core.expressions import DEFAULT_NOTATION, ExpressionNotation, output_fields
from planwerk.core.tools import ToolSpec

ArgumentKind = Literal["number", "text", "any"]
"""What an argument may be written as: a number or a computed value, a quoted text, or either."""

_NUMERIC_TYPES = frozenset({"number", "integer"})
_BASE_RULES = (
    # Python's number literals as models write them; a leading "-" is the operand's, not the number's.
    # Bounded like Python's float repr (up to 17 digits before the point, which fit 64 bits; up to 20 after it, as
    # in 0.00013921265591716547): a runaway of zeros ends there instead of crashing a checkpoint on 4e48.
    'number ::= [0-9]{1,17} ("." [0-9]{1,20})? ([eE] [-+]? [0-9]{1,3})?',
    'text ::= "\\"" [^"\\\\\\n]* "\\"" | "\'" [^\'\\\\\\n]* "\'"',
    'ws ::= " "?',
    'sep ::= ws "," ws',
)


def argument_kind(schema: Any) -> ArgumentKind | None:
    """How an argument with this JSON schema is written in an expression; ``None`` when it cannot be (a list, an
    object, a boolean: an expression has no literal for them)."""
    if not isinstance(schema, Mapping):
        return "any"
    if options := schema.get("anyOf") or schema.get("oneOf"):
        return _one_kind(argument_kind(option) for option in options)
    kind = schema.get("type")
    if isinstance(kind, list):
        return _one_kind(argument_kind({"type": k}) for k in kind if k != "null")
    if kind is None:
        return "any"
    return "number" if kind in _NUMERIC_TYPES else "text" if kind == "string" else None


def _one_kind(kinds: Iterable[ArgumentKind | None]) -> ArgumentKind | None:
    """The kind of a union: its one writable kind, ``any`` for several, ``None`` for none."""
    writable = {kind for kind in kinds if kind is not None}
    return writable.pop() if len(writable) == 1 else ("any" if writable else None)


def expression_grammar(specs: Mapping[str, ToolSpec], notation: ExpressionNotation = DEFAULT_NOTATION) -> str:
    """EBNF whose root is one expression that calls at least one tool of ``specs``, or ``answer("…")`` or
    ``ask_user("…")`` alone (see :class:`ExpressionNotation`).

    Operators appear only where their tool is loaded (``notation``); a tool appears as ``name(a, b)`` with its
    required arguments and optionally its others, in input-schema order, each a computed value, a number or a
    quoted text as its schema's type says; a tool with several declared result fields may be followed by one of
    them (``geocode("Paris").lat``). Tools whose names Python does not read as names (``max-value``, ``lambda``), or
    with an argument no expression can write (a list, an object), are left out. With no usable operator and no usable
    tool, the grammar admits nothing that compiles, so :class:`ValueError` says so instead.
    """
    operators = notation.available(specs)
    calls = [rule for name, spec in sorted(specs.items()) if (rule := _call_rule(name, spec)) is not None]
    if not operators and not calls:
        raise ValueError("no loaded tool can be written in an expression (no operator tools, no usable functions)")
    rules: list[str] = []
    computed_atoms = ['"(" ws expr ws ")"']
    if calls:
        computed_atoms.append("call")
        rules.append("call ::= " + " | ".join(f"call-{index}" for index in range(len(calls))))
        rules.extend(f"call-{index} ::= {body}" for index, body in enumerate(calls))
    # "-3" is a literal; "-" before a computed value calls the negate tool, so only where it is loaded.
    negate = '"-"? ' if notation.negate is not None and notation.negate in specs else ""
    rules.append('operand ::= "-"? number | ' + " | ".join(negate + atom for atom in computed_atoms))
    if operators:
        # Longer symbols first, so "**" is one operator and not "*" followed by a bad operand.
        symbols = sorted(operators, key=len, reverse=True)
        rules.append("operator ::= " + " | ".join(_literal(symbol) for symbol in symbols))
        rules.append("expr ::= operand (ws operator ws operand)*")
        computed = ["operand (ws operator ws operand)+"]
    else:
        rules.append("expr ::= operand")
        computed = []
    # The root computes something: an operator at its top, a call, or a parenthesised root (never a bare number).
    if calls:
        computed.append(negate + "call")
    computed.append(negate + '"(" ws root ws ")"')
    # answer("…") and ask_user("…") stand alone: a question the tools cannot compute, a number that is missing.
    computed.extend(f"{_literal(name + '(')} ws text ws {_literal(')')}" for name in notation.replies(specs))
    return "\n".join(["root ::= " + " | ".join(computed), *rules, *_BASE_RULES]) + "\n"


def _writable(name: str) -> bool:
    """Whether Python reads ``name`` as a name (``lambda(1)`` or ``f(x).class`` is a syntax error)."""
    return name.isidentifier() and not keyword.iskeyword(name)


def _call_rule(name: str, spec: ToolSpec) -> str | None:
    if not _writable(name):
        return None
    schema = spec.input_schema if isinstance(spec.input_schema, Mapping) else {}
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        return None
    kinds = [argument_kind(value) for value in properties.values()]
    if any(kind is None for kind in kinds):
        return None
    required = set(schema.get("required") or properties)
    # Positional arguments fill properties in order: everything up to the last required one must be written.
    needed = max((index + 1 for index, key in enumerate(properties) if key in required), default=0)
    written = [_ARGUMENT[kind] for kind in kinds if kind is not None]
    # Optional arguments nest: "(sep b (sep c)?)?" admits a, a b and a b c, never a c.
    tail = ""
    for index in reversed(range(needed, len(written))):
        lead = "sep " if index else ""
        tail = f"({lead}{written[index]}{' ' + tail if tail else ''})?"
    arguments = " ".join(part for part in (" sep ".join(written[:needed]), tail) if part)
    body = f"{_literal(name + '(')} ws {arguments} ws {_literal(')')}" if written else _literal(name + "()")
    # One declared field is the call's value; of several, the ones Python can write may follow.
    fields = output_fields(spec)
    if len(fields) > 1 and (writable := [field for field in fields if _writable(field)]):
        body = f"{body} ({' | '.join(_literal('.' + field) for field in writable)})?"
    elif not fields and not (spec.output_schema or {}):
        body = f'{body} ("." [a-zA-Z_] [a-zA-Z0-9_]*)?'
    return body


_ARGUMENT: dict[ArgumentKind, str] = {"number": "expr", "text": "text", "any": "(expr | text)"}


def _literal(text: str) -> str:
    """``text`` as a quoted EBNF literal (JSON's string escapes are the dialect's)."""
    return json.dumps(text)

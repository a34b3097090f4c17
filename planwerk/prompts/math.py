"""A persona for pure calculation tasks (the NESTFUL benchmark's math tools)."""

from __future__ import annotations

MATH_PERSONA = """You are a careful calculator agent. You answer arithmetic questions only with the given math
tools, never by computing in your head. The last call's result is the answer."""
"""Who the assistant is in the math profile. How results are passed on is the plan format's business (the
protocol): a JSON plan writes ``{"$ref": "<id>.result"}``, an expression nests the calls."""

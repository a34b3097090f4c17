"""MCP server with the basic math functions of the NESTFUL benchmark (math subset).

Names, parameters (``arg_0``, ``arg_1``, … in positional order) and the single output ``result``
follow the tool specs that the benchmark offers (NESTFUL v2, IBM, Apache-2.0; see
benchmarks/data/nestful/NOTICE.md), so a gold call sequence runs unchanged against this server. Run it with
``python -m planwerk.tools.servers.math [stdio|http --port N]``.

Descriptions are the benchmark's, except for tools of two arguments whose meaning depends on the order: those
state it as a formula (``subtract(arg_0, arg_1) = arg_0 - arg_1``), since "subtract two numbers" leaves the
planner to guess which comes first.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from planwerk.tools.servers._run import serve

Number = int | float
ParamType = Literal["number", "int", "float", "list"]

_PYTHON_TYPES: dict[ParamType, Any] = {"number": Number, "int": int, "float": float, "list": list[float]}


@dataclass(frozen=True)
class MathTool:
    """One benchmark function: its spec and its pure implementation."""

    name: str
    description: str
    params: tuple[tuple[ParamType, str], ...]
    """(type, description) per positional argument ``arg_i``."""
    result: tuple[ParamType, str]
    fn: Callable[..., Any]


def _integral(x: Number, what: str) -> int:
    """``x`` as an int when it has no fractional part (results of earlier calls arrive as floats)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise ValueError(f"{what} must be a number, got {x!r}")
    if isinstance(x, float):
        if not x.is_integer():
            raise ValueError(f"{what} must be a whole number, got {x!r}")
        return int(x)
    return x


def _divide(a: Number, b: Number) -> float:
    if b == 0:
        raise ValueError("division by zero: the second number (arg_1) must not be 0")
    return a / b


def _inverse(a: Number) -> float:
    if a == 0:
        raise ValueError("0 has no inverse: arg_0 must not be 0")
    return 1 / a


def _isqrt(a: Number) -> int:
    n = _integral(a, "arg_0")
    if n < 0:
        raise ValueError(f"square root of a negative number: arg_0 = {n}")
    return math.isqrt(n)


def _factorial(a: Number) -> int:
    n = _integral(a, "arg_0")
    if n < 0:
        raise ValueError(f"factorial of a negative number: arg_0 = {n}")
    return math.factorial(n)


def _log(x: Number, base: Number = math.e) -> float:
    if x <= 0 or base <= 0 or base == 1:
        raise ValueError(f"log needs x > 0 and a base > 0, != 1; got x={x}, base={base}")
    return math.log(x, base)


def _remainder(a: Number, b: Number) -> Number:
    if b == 0:
        raise ValueError("remainder by zero: the second number (arg_1) must not be 0")
    return a % b


def _ints(*xs: Number) -> list[int]:
    return [_integral(x, f"arg_{i}") for i, x in enumerate(xs)]


def _max(values: Sequence[Number]) -> Number:
    if not values:
        raise ValueError("max_number needs a non-empty list in arg_0")
    return max(values)


def _min(values: Sequence[Number]) -> Number:
    if not values:
        raise ValueError("min_number needs a non-empty list in arg_0")
    return min(values)


_N, _I, _F, _L = "number", "int", "float", "list"

TOOLS: tuple[MathTool, ...] = (
    MathTool(
        "add",
        "add(arg_0, arg_1) = arg_0 + arg_1",
        ((_N, "The first number"), (_N, "The second number")),
        (_N, "The addition result"),
        lambda a, b: a + b,
    ),
    MathTool(
        "subtract",
        "subtract(arg_0, arg_1) = arg_0 - arg_1 (arg_1 is taken from arg_0)",
        ((_N, "The number to subtract from"), (_N, "The number to subtract")),
        (_N, "The subtraction result"),
        lambda a, b: a - b,
    ),
    MathTool(
        "multiply",
        "multiply(arg_0, arg_1) = arg_0 * arg_1",
        ((_N, "The first number"), (_N, "The second number")),
        (_N, "The multiplication result"),
        lambda a, b: a * b,
    ),
    MathTool(
        "divide",
        "divide(arg_0, arg_1) = arg_0 / arg_1 (arg_0 divided by arg_1)",
        ((_N, "The number to divide (dividend)"), (_N, "The number to divide by (divisor, not 0)")),
        (_N, "The division result"),
        _divide,
    ),
    MathTool(
        "power",
        "power(arg_0, arg_1) = arg_0 ** arg_1 (arg_0 raised to the power arg_1)",
        ((_N, "The base number"), (_N, "The exponent number")),
        (_N, "the power result"),
        lambda a, b: a**b,
    ),
    MathTool(
        "inverse",
        "Return the inverse (reciprocal) of a number",
        ((_N, "The number to inverse"),),
        (_N, "The inverse result"),
        _inverse,
    ),
    MathTool(
        "negate",
        "Return the negation of a number",
        ((_N, "The number to negate"),),
        (_N, "The negated number"),
        lambda a: -a,
    ),
    MathTool(
        "sqrt",
        "Calculate the integer square root of a non-negative number.",
        ((_I, "The input number"),),
        (_I, "the integer square root of the provided number"),
        _isqrt,
    ),
    MathTool(
        "floor",
        "Return the largest integer less than or equal to x.",
        ((_N, "The input number"),),
        (_I, "the flooring result"),
        math.floor,
    ),
    MathTool(
        "factorial",
        "Calculate the factorial of a non-negative integer",
        ((_I, "The input number"),),
        (_I, "the factorial result"),
        _factorial,
    ),
    MathTool(
        "log",
        "log(arg_0, arg_1) = the logarithm of arg_0 to the base arg_1",
        ((_N, "The input number (x > 0)"), (_N, "The base (> 0, not 1)")),
        (_F, "logarithm of provided number with the given base"),
        _log,
    ),
    MathTool(
        "gcd",
        "calculate the Greatest Common Divisor (GCD) of two numbers",
        ((_N, "first number"), (_N, "second number")),
        (_I, "Greatest Common Divisor"),
        lambda a, b: math.gcd(*_ints(a, b)),
    ),
    MathTool(
        "lcm",
        "Calculate the least common multiple of two numbers",
        ((_N, "first number"), (_N, "second number")),
        (_I, "the least common multiple"),
        lambda a, b: math.lcm(*_ints(a, b)),
    ),
    MathTool(
        "remainder",
        "remainder(arg_0, arg_1) = arg_0 mod arg_1 (the remainder of arg_0 divided by arg_1)",
        ((_N, "The number to divide (dividend)"), (_N, "The number to divide by (divisor, not 0)")),
        (_N, "the remainder"),
        _remainder,
    ),
    MathTool(
        "reminder",
        "reminder(arg_0, arg_1) = arg_0 mod arg_1 (same as remainder)",
        ((_N, "The number to divide (dividend)"), (_N, "The number to divide by (divisor, not 0)")),
        (_N, "the remainder"),
        _remainder,
    ),
    MathTool(
        "choose",
        "choose(arg_0, arg_1) = the number of ways to choose arg_1 items from arg_0 items (n choose r, no order)",
        ((_I, "Total number of items"), (_I, "Number of items being chosen")),
        (_I, "Number of combinations"),
        lambda n, r: math.comb(*_ints(n, r)),
    ),
    MathTool(
        "permutation",
        "permutation(arg_0, arg_1) = the number of ordered arrangements of arg_1 items out of arg_0 items",
        ((_I, "Total number of items"), (_I, "Number of items being arranged")),
        (_I, "Number of permutations"),
        lambda n, r: math.perm(*_ints(n, r)),
    ),
    MathTool(
        "speed",
        "speed(arg_0, arg_1) = arg_0 / arg_1 (distance divided by time)",
        ((_N, "distance"), (_N, "time")),
        (_N, "the speed"),
        _divide,
    ),
    MathTool(
        "max_number",
        "Find the maximum value among the given numbers",
        ((_L, "A list of numbers"),),
        (_F, "Maximum value"),
        _max,
    ),
    MathTool(
        "min_number",
        "Find the minimum value among the given numbers",
        ((_L, "A list of numbers"),),
        (_F, "Minimum value"),
        _min,
    ),
    MathTool(
        "negate_prob",
        "Calculate the probability of an event not occurring",
        ((_F, "Probability of the event occurring"),),
        (_F, "Probability of the event not occurring"),
        lambda p: 1 - p,
    ),
    MathTool(
        "circle_area",
        "Calculate the area of a circle given its radius",
        ((_N, "The circle radius"),),
        (_N, "the circle area"),
        lambda r: math.pi * r**2,
    ),
    MathTool(
        "circumface",
        "Calculate the circumference of a circle",
        ((_F, "Radius of the circle"),),
        (_F, "Circumference of the circle"),
        lambda r: 2 * math.pi * r,
    ),
    MathTool(
        "square_area",
        "Calculate the area of a square given its side",
        ((_N, "The square side"),),
        (_N, "the square area"),
        lambda a: a**2,
    ),
    MathTool(
        "square_perimeter",
        "Calculate the perimeter of a square given its side length",
        ((_N, "side length"),),
        (_N, "the square perimeter"),
        lambda a: 4 * a,
    ),
    MathTool(
        "square_edge_by_area",
        "Calculate the edge length of a square given its area",
        ((_F, "Area of the square"),),
        (_F, "Edge length of the square"),
        math.sqrt,
    ),
    MathTool(
        "square_edge_by_perimeter",
        "Calculate the edge length of a square given its perimeter",
        ((_F, "Perimeter of the square"),),
        (_F, "Edge length of the square"),
        lambda p: p / 4,
    ),
    MathTool(
        "rectangle_area",
        "rectangle_area(arg_0, arg_1) = arg_0 * arg_1 (length times width)",
        ((_N, "rectangle length"), (_N, "rectangle width")),
        (_N, "the rectangle area"),
        lambda a, b: a * b,
    ),
    MathTool(
        "rectangle_perimeter",
        "rectangle_perimeter(arg_0, arg_1) = 2 * (arg_0 + arg_1) (length and width)",
        ((_N, "rectangle length"), (_N, "rectangle width")),
        (_N, "the rectangle perimeter"),
        lambda a, b: 2 * (a + b),
    ),
    MathTool(
        "diagonal",
        "Calculate the length of the diagonal of a rectangle",
        ((_F, "Length of the rectangle"), (_F, "Width of the rectangle")),
        (_F, "Length of the diagonal"),
        math.hypot,
    ),
    MathTool(
        "rhombus_area",
        "Calculate the area of a rhombus",
        ((_F, "Length of the first diagonal"), (_F, "Length of the second diagonal")),
        (_F, "Area of the rhombus"),
        lambda d1, d2: d1 * d2 / 2,
    ),
    MathTool(
        "triangle_area",
        "triangle_area(arg_0, arg_1) = arg_0 * arg_1 / 2 (base arg_0, height arg_1)",
        ((_F, "Length of the base of the triangle"), (_F, "Height of the triangle")),
        (_F, "Area of the triangle"),
        lambda b, h: b * h / 2,
    ),
    MathTool(
        "surface_cube",
        "Calculate the surface area of a cube",
        ((_F, "Length of a side of the cube"),),
        (_F, "Surface area of the cube"),
        lambda a: 6 * a**2,
    ),
    MathTool(
        "volume_cube",
        "Calculate the volume of a cube",
        ((_F, "Length of a side of the cube"),),
        (_F, "Volume of the cube"),
        lambda a: a**3,
    ),
    MathTool(
        "cube_edge_by_volume",
        "Calculate the edge length of a cube given its volume",
        ((_F, "Volume of the cube"),),
        (_F, "Edge length of the cube"),
        math.cbrt,
    ),
    MathTool(
        "surface_sphere",
        "Calculate the surface area of a sphere",
        ((_F, "Radius of the sphere"),),
        (_F, "Surface area of the sphere"),
        lambda r: 4 * math.pi * r**2,
    ),
    MathTool(
        "volume_sphere",
        "Calculate the volume of a sphere",
        ((_F, "Radius of the sphere"),),
        (_F, "Volume of the sphere"),
        lambda r: 4 / 3 * math.pi * r**3,
    ),
    MathTool(
        "surface_cylinder",
        "surface_cylinder(arg_0, arg_1) = the surface area of a cylinder with radius arg_0 and height arg_1",
        ((_F, "Radius of the base of the cylinder"), (_F, "Height of the cylinder")),
        (_F, "Surface area of the cylinder"),
        lambda r, h: 2 * math.pi * r * (r + h),
    ),
    MathTool(
        "volume_cylinder",
        "volume_cylinder(arg_0, arg_1) = the volume of a cylinder with radius arg_0 and height arg_1",
        ((_F, "Radius of the base of the cylinder"), (_F, "Height of the cylinder")),
        (_F, "Volume of the cylinder"),
        lambda r, h: math.pi * r**2 * h,
    ),
    MathTool(
        "volume_cone",
        "volume_cone(arg_0, arg_1) = the volume of a cone with radius arg_0 and height arg_1",
        ((_F, "Radius of the base of the cone"), (_F, "Height of the cone")),
        (_F, "Volume of the cone"),
        lambda r, h: math.pi * r**2 * h / 3,
    ),
)

BY_NAME: dict[str, MathTool] = {tool.name: tool for tool in TOOLS}


def call(name: str, *args: Any) -> float:
    """Run benchmark function ``name`` on positional ``args`` (pure; no MCP involved).

    Every result is a float, as in the benchmark's reference runs (its gold answers are all floats, "12.0"
    included); whole-number floats are accepted wherever an integer is needed.
    """
    try:
        tool = BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown math function {name!r}; known: {', '.join(sorted(BY_NAME))}") from None
    return float(tool.fn(*args))


def _as_mcp_function(tool: MathTool) -> Callable[..., Any]:
    """An ``async def`` with a real signature (``arg_0: Annotated[type, Field(...)]``) for FastMCP."""

    async def run(**kwargs: Any) -> float:
        return call(tool.name, *(kwargs[f"arg_{i}"] for i in range(len(tool.params))))

    params = [
        inspect.Parameter(
            f"arg_{i}",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[_PYTHON_TYPES[kind], Field(description=desc)],
        )
        for i, (kind, desc) in enumerate(tool.params)
    ]
    returns = float
    run.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    run.__name__ = tool.name
    run.__doc__ = tool.description
    return run


def build_server(host: str = "127.0.0.1", port: int = 8000) -> Any:
    """The FastMCP server with every benchmark function as a tool."""
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    server = FastMCP("math", host=host, port=port)
    pure = ToolAnnotations(readOnlyHint=True, openWorldHint=False)  # pure functions: nothing to approve
    for tool in TOOLS:
        server.add_tool(
            _as_mcp_function(tool),
            name=tool.name,
            description=tool.description,
            annotations=pure,
            structured_output=True,
        )
    return server


if __name__ == "__main__":
    serve(build_server)

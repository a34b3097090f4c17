"""Shared fixtures: offline settings, a private PLANWERK_HOME, the fixtures folder."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
# The product's default is llama.cpp where it is installed (planwerk.models.specs.DEFAULT_LOCAL_BACKEND); the tests
# that assert a packaged model's replies were written against transformers' decoding, so they keep it unless a test
# (tests/models/test_llamacpp_model.py) or the caller chooses the backend.
os.environ.setdefault("PLANWERK_LOCAL_BACKEND", "transformers")

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """The tests' fixture folder."""
    return FIXTURES


NOTES_SCRIPT = Path(__file__).parent / "tools" / "notes_server.py"
"""The note-store MCP server with a slow write (``tests/tools/notes_server.py``)."""


def notes_config(timeout_s: float = 20) -> dict[str, Any]:
    """MCP config for the notes server over stdio (its write delay comes from ``NOTES_WRITE_DELAY_S``)."""
    return {
        "mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES_SCRIPT), "stdio"], "timeout": timeout_s}}
    }


@pytest.fixture
async def notes_tools() -> AsyncIterator[Any]:
    """An ``MCPToolSource`` on a fresh notes server (empty store, default 0.3 s write delay) over stdio.

    Shared by the MCP tests and the graph tests about side-effect order.
    """
    from planwerk.tools.mcp import open_tools  # the MCP stack is heavy; only tests that use it pay for it

    async with open_tools(notes_config()) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


SLOW_TEST_TIMEOUT_S = 900
"""Per-test limit for ``slow`` tests (a real model or a large index): generous, because a real-model test that
passes on an idle machine timed out at the default 300 s on a loaded one (the issue of trustworthy answers, item 9).
A test's own ``@pytest.mark.timeout`` wins."""

# --- test tiers --------------------------------------------------------------------------------------------------
# A test that needs something beyond this Python process and the project's own stdio/HTTP MCP servers gets a tier
# marker. It is derived, so that a new test is classified without anyone remembering to mark it: from its folder,
# from the fixtures it uses (with their parameters), and from the names its code and its fixtures' code call
# (followed through the helper functions of the same module). An explicit marker adds to what is derived.

TIERS = ("postgres", "server", "npm", "model", "browser", "bench", "process", "fuzz", "faults")
"""Every tier but the fast one (described where they are registered, ``[tool.pytest.ini_options]`` in pyproject.toml).
``pytest`` with no arguments runs the tests that have none of these markers and are not ``slow``; ``scripts/test.sh``
runs them all."""

FOLDER_TIERS: dict[str, frozenset[str]] = {
    "cluster": frozenset({"postgres", "server"}),  # Aegra on PostgreSQL (scripts/cluster.sh)
    "bench": frozenset({"bench"}),  # the benchmark commands, end to end (several CLI runs each)
    "browser": frozenset({"browser", "server"}),  # agent-chat-ui in Chromium against a dev server (Playwright)
}
"""Folders under ``tests/`` whose every test needs a tier."""

NAME_TIERS: dict[str, frozenset[str]] = {
    # fixtures
    "postgres_server": frozenset({"postgres"}),
    "dev_server_factory": frozenset({"server"}),
    "tiny_model": frozenset(),  # a random tiny Llama built in memory: fast tier, despite living in tests/models
    "embedder": frozenset({"model"}),
    "corpus_retriever": frozenset({"model"}),
    "page": frozenset({"browser"}),
    "browser": frozenset({"browser"}),
    # names a test or its helpers call
    "private_postgres": frozenset({"postgres"}),
    "DevServer": frozenset({"server"}),
    "npm_server": frozenset({"npm"}),
    "load_embedder": frozenset({"model"}),
    "load_retriever": frozenset({"model"}),
    "LlamaServer": frozenset({"model"}),
    "async_playwright": frozenset({"browser"}),
    "sync_playwright": frozenset({"browser"}),
}
"""Fixture names and called names that put a test in a tier."""

PARAM_TIERS: dict[tuple[str, str], frozenset[str]] = {
    ("checkpointer", "postgres"): frozenset({"postgres"}),  # tests/graph/conftest.py runs each backend
}
"""(fixture, parameter) pairs that put one parametrization of a test in a tier."""

PROCESS_STARTS = frozenset({"Popen", "create_subprocess_exec", "subprocess"})
"""Names through which a test starts a child process itself (the project's MCP servers start inside planwerk)."""
PYTHON_PROGRAM = frozenset({"-m", "-c"})
"""Constants of a ``[sys.executable, "-m", module]`` or ``[sys.executable, "-c", code]`` command line."""
FUZZ_EXAMPLES = 300
"""A property test asking hypothesis for at least this many examples is a fuzz run (the ``fuzz`` tier): seconds to
minutes of CPU each; the ordinary property tests ask for 100-200 and stay in the fast tier."""

FAST_EXCLUDES = ("slow", *TIERS)
"""What the default run leaves out."""
FAST_ONLY = pytest.StashKey[bool]()
"""Whether this run is the default one, the fast tier only."""
HERE = Path(__file__).parent


def _code_of(func: Any) -> Any:
    """The code object of a function or method, or ``None``."""
    return getattr(getattr(func, "__func__", func), "__code__", None)


def _is_test_code(owner: str | None, module: str | None) -> bool:
    """Whether ``owner`` (a function's or class's module) is the test's own module or another one under ``tests``
    (a helper such as one test file's worker that another imports)."""
    return owner is not None and (owner == module or owner.startswith(f"{__package__}."))


def _same_module_helpers(value: Any, module: str | None) -> list[Any]:
    """The plain functions a global of ``module`` leads to: itself, or the methods of its class (an instance such as
    a module-level ``runner = Runner()`` whose ``runner.invoke`` a test calls), when they are test code."""
    import types

    if isinstance(value, types.FunctionType):
        return [value] if _is_test_code(value.__module__, module) else []
    cls = value if isinstance(value, type) else type(value)
    if not _is_test_code(cls.__module__, module):
        return []
    return [f for f in vars(cls).values() if isinstance(f, types.FunctionType)]


def _code_facts(func: Any, seen: set[int] | None = None) -> tuple[set[str], set[str]]:
    """Global names and string constants ``func``'s code uses, followed through the plain functions and the classes
    of its own module."""
    import types

    code = _code_of(func)
    if code is None:
        return set(), set()
    seen = set() if seen is None else seen
    if id(code) in seen:
        return set(), set()
    seen.add(id(code))
    names: set[str] = set()
    consts: set[str] = set()
    stack = [code]
    while stack:  # nested functions and comprehensions are constants of their outer code object
        current = stack.pop()
        names.update(current.co_names)
        consts.update(c for c in current.co_consts if isinstance(c, str))
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    module = getattr(func, "__module__", None)
    module_globals = getattr(getattr(func, "__func__", func), "__globals__", {})
    for name in list(names):
        if name in module_globals:
            for helper in _same_module_helpers(module_globals[name], module):
                more_names, more_consts = _code_facts(helper, seen)
                names |= more_names
                consts |= more_consts
    return names, consts


def _fuzz_examples(func: Any) -> int:
    """How many examples hypothesis is asked for by ``func``'s own ``@settings`` (0 when it is no property test)."""
    chosen = getattr(func, "_hypothesis_internal_use_settings", None)
    return int(getattr(chosen, "max_examples", 0)) if getattr(func, "hypothesis", None) is not None else 0


def derived_tiers(item: pytest.Item) -> set[str]:
    """The tiers ``item`` needs, from its folder, fixtures, fixture parameters and called names."""
    tiers: set[str] = set()
    parts = Path(str(item.path)).relative_to(HERE).parts
    for folder, needs in FOLDER_TIERS.items():
        if parts and parts[0] == folder:
            tiers |= needs
    info = getattr(item, "_fixtureinfo", None)
    funcs = [getattr(item, "function", None)]
    if info is not None:
        for name, defs in info.name2fixturedefs.items():
            tiers |= NAME_TIERS.get(name, frozenset())
            funcs.extend(d.func for d in defs)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for key, value in callspec.params.items():
            tiers |= PARAM_TIERS.get((key, str(value)), frozenset())
    for func in funcs:
        names, consts = _code_facts(func)
        for name in names:
            tiers |= NAME_TIERS.get(name, frozenset())
        if names & PROCESS_STARTS and "executable" in names and consts & PYTHON_PROGRAM:
            tiers.add("process")  # a child Python program: it imports the stack again (seconds of CPU per start)
    if funcs[0] is not None and _fuzz_examples(funcs[0]) >= FUZZ_EXAMPLES:
        tiers.add("fuzz")
    return tiers


def pytest_configure(config: pytest.Config) -> None:
    """With no paths and no ``-m`` given, run only the fast tier."""
    no_paths = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    config.stash[FAST_ONLY] = no_paths and not config.option.markexpr and not config.getoption("all_tiers")
    if config.stash[FAST_ONLY]:
        config.option.markexpr = " and ".join(f"not {name}" for name in FAST_EXCLUDES)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast tier, do not even import the folders whose every test is in another tier (collection time)."""
    if not config.stash.get(FAST_ONLY, False):
        return None
    parts = collection_path.relative_to(HERE).parts if collection_path.is_relative_to(HERE) else ()
    return True if parts and parts[0] in FOLDER_TIERS else None


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--all-tiers``: run every tier (what ``scripts/test.sh`` does)."""
    parser.addoption(
        "--all-tiers",
        action="store_true",
        help="run every test tier; without it, a bare `pytest` runs the fast tier only",
    )


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m selection, which reads the markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the derived tier markers; give every ``slow`` test :data:`SLOW_TEST_TIMEOUT_S` unless it sets its own."""
    for item in items:
        have = {mark.name for mark in item.iter_markers()}
        needs = derived_tiers(item) | ({"model"} if "slow" in have else set())  # slow: a real model or index
        for tier in sorted(needs - have):
            item.add_marker(getattr(pytest.mark, tier))
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT_S))


def tier_of(item: pytest.Item) -> str:
    """The tier name a test reports under: its tier markers joined with ``+``, or ``fast``."""
    names = sorted(name for name in (*TIERS, "slow") if item.get_closest_marker(name))
    return "+".join(names) or "fast"


_TIER_SECONDS: dict[str, list[float]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sum each tier's test time (setup, call and teardown) for the summary."""
    tier = getattr(report, "planwerk_tier", None)
    if tier is not None:
        entry = _TIER_SECONDS.setdefault(tier, [0.0, 0.0])
        entry[0] += report.duration
        entry[1] += report.when == "call"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Label each report with the test's tier."""
    report = yield
    report.planwerk_tier = tier_of(item)
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per tier: how many tests ran and their summed time."""
    if not _TIER_SECONDS:
        return
    terminalreporter.section("tiers")
    for tier, (seconds, count) in sorted(_TIER_SECONDS.items()):
        terminalreporter.write_line(f"{tier:<28} {int(count):>5} tests {seconds:>8.1f} s")

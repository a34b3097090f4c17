"""The test tiers are derived, not remembered: from a test's folder, its fixtures and parameters, and what it calls."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.conftest import FUZZ_EXAMPLES, HERE, derived_tiers

FAKE_TESTS = """
def npm_server(name):
    return name

def start_servers():
    return [npm_server("mcp-server-memory")]

def test_uses_npm():
    start_servers()

def fixture_calls_postgres():
    private_postgres()

class Runner:
    def invoke(self, args):
        return subprocess.run([sys.executable, "-m", "some.program", *args])

runner = Runner()

def test_runs_a_program():
    runner.invoke(["ask"])

def test_forbids_processes(monkeypatch):
    monkeypatch.setattr(subprocess, "Popen", None)

def test_configures_a_server():
    return {"command": sys.executable, "args": ["-m", "some.server"]}
"""
"""A test module's code, kept in a string: these tests' own code must not name what puts a test in a tier."""


def fake_module() -> dict[str, Any]:
    """The functions of :data:`FAKE_TESTS`, defined in a module namespace of their own."""
    import subprocess
    import sys

    namespace: dict[str, Any] = {"__name__": "fake_tests", "subprocess": subprocess, "sys": sys}
    exec(FAKE_TESTS, namespace)  # a constant of this file
    return namespace


def fake_item(
    func: Any, path: Path = HERE / "tools" / "test_x.py", fixtures: dict[str, Any] | None = None, **params: str
) -> Any:
    """The parts of a pytest item that :func:`derived_tiers` reads."""
    defs = {name: [SimpleNamespace(func=f)] for name, f in (fixtures or {}).items()}
    return SimpleNamespace(
        path=path,
        function=func,
        _fixtureinfo=SimpleNamespace(name2fixturedefs=defs),
        callspec=SimpleNamespace(params=params) if params else None,
    )


def test_a_plain_test_is_fast() -> None:
    def test_plain() -> None:
        assert sum([1, 2]) == 3

    assert derived_tiers(fake_item(test_plain)) == set()


def test_a_call_through_a_module_helper_is_seen() -> None:
    assert derived_tiers(fake_item(fake_module()["test_uses_npm"])) == {"npm"}


def test_fixtures_their_parameters_and_their_calls_are_seen() -> None:
    def test_served() -> None:
        pass

    fixture_calls_postgres = fake_module()["fixture_calls_postgres"]
    assert derived_tiers(fake_item(test_served, fixtures={"dev_server_factory": test_served})) == {"server"}
    assert derived_tiers(fake_item(test_served, fixtures={"postgres_uri": fixture_calls_postgres})) == {"postgres"}
    assert derived_tiers(fake_item(test_served, checkpointer="postgres")) == {"postgres"}
    assert derived_tiers(fake_item(test_served, checkpointer="memory")) == set()


def test_a_folder_puts_every_test_in_its_tiers() -> None:
    def test_anything() -> None:
        pass

    assert derived_tiers(fake_item(test_anything, path=HERE / "cluster" / "test_x.py")) == {"postgres", "server"}
    assert derived_tiers(fake_item(test_anything, path=HERE / "bench" / "test_x.py")) == {"bench"}


def test_a_child_python_program_is_the_process_tier() -> None:
    module = fake_module()
    assert derived_tiers(fake_item(module["test_runs_a_program"])) == {"process"}  # through an instance's method
    assert derived_tiers(fake_item(module["test_forbids_processes"])) == set()  # names the module, starts nothing
    assert derived_tiers(fake_item(module["test_configures_a_server"])) == set()  # the MCP client starts servers


def test_a_property_test_of_many_examples_is_the_fuzz_tier() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=FUZZ_EXAMPLES)
    @given(st.integers())
    def test_fuzz(number: int) -> None:
        pass

    @settings(max_examples=FUZZ_EXAMPLES - 1)
    @given(st.integers())
    def test_property(number: int) -> None:
        pass

    assert derived_tiers(fake_item(test_fuzz)) == {"fuzz"}
    assert derived_tiers(fake_item(test_property)) == set()


def test_a_helper_from_another_test_module_is_followed_and_one_from_elsewhere_is_not() -> None:
    import subprocess
    import sys

    helper_code = "def start_worker():\n    return subprocess.Popen([sys.executable, '-m', 'some.worker'])\n"
    tier_of_helper_in: dict[str, set[str]] = {}
    for module in ("tests.graph.test_elsewhere", "planwerk.elsewhere"):
        helpers: dict[str, Any] = {"__name__": module, "subprocess": subprocess, "sys": sys}
        exec(helper_code, helpers)  # a constant of this file
        caller: dict[str, Any] = {"__name__": "fake_tests", "start_worker": helpers["start_worker"]}
        exec("def test_uses_the_worker():\n    start_worker()\n", caller)
        tier_of_helper_in[module] = derived_tiers(fake_item(caller["test_uses_the_worker"]))
    assert tier_of_helper_in == {"tests.graph.test_elsewhere": {"process"}, "planwerk.elsewhere": set()}

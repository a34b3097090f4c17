"""``planwerk bench``: a thin command that forwards to ``python -m benchmarks`` in a checkout; the installed package
imports nothing of the benchmarks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planwerk import cli

PACKAGE = Path(cli.__file__).resolve().parent


def test_the_package_imports_nothing_of_the_benchmarks() -> None:
    importers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if any(name == "benchmarks" or name.startswith("benchmarks.") for name in names):
                importers.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert importers == []


def test_bench_forwards_its_arguments_to_the_benchmarks_in_a_checkout() -> None:
    assert CliRunner().invoke(cli.app, ["bench", "--help"]).exit_code == 0
    assert CliRunner().invoke(cli.app, ["bench", "no-such-benchmark"]).exit_code == 2


def test_bench_without_the_benchmarks_folder_says_how_to_run_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cli, "BENCHMARKS", tmp_path / "benchmarks")
    result = CliRunner().invoke(cli.app, ["bench", "nestful", "--help"])
    assert result.exit_code == 2
    assert "not part of the installed package" in result.output and "python -m benchmarks" in result.output

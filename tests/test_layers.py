"""Imports point down: each of planwerk's packages (and top-level modules) imports only those on floors below it.

The floors are README's map of the package, bottom first. A new package gets its floor here; an import that runs
back up (a lower floor importing a higher one) is a design fault to mend, not a floor to move. Type-only imports
count too: they are arrows a reader follows.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "planwerk"

FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"text", "home", "data"}),
    frozenset({"core", "models", "rag"}),
    frozenset({"checks", "tools", "events"}),
    frozenset({"execution", "prompts"}),
    frozenset({"profiles"}),
    frozenset({"graph"}),
    frozenset({"serving"}),
    frozenset({"agent"}),
    frozenset({"cli"}),
)
"""planwerk's parts, bottom first: ``text`` (the readers) and ``home`` on the ground, ``core`` beside ``models`` and
``rag``, the answer checks and the tools above them, … the command line on top."""


def _part(path: Path, package: Path = PACKAGE) -> str:
    """The part of planwerk a module is in: its top-level package or module (``planwerk/checks/rules.py``: checks)."""
    return path.relative_to(package).parts[0].removesuffix(".py")


def _floor(part: str) -> int:
    return next(index for index, parts in enumerate(FLOORS) if part in parts)


def _imported_parts(tree: ast.AST) -> list[tuple[str, int]]:
    """The parts of planwerk a module imports, with the line of each import."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"planwerk.{a.name}" for a in node.names] if node.module == "planwerk" else [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(name.split(".")[1], node.lineno) for name in names if name.startswith("planwerk.")]
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """``file:line imports part`` for each import of a part on the same or a higher floor than the importer's."""
    upward = []
    for path in sorted(package.rglob("*.py")):
        if path.parent == package and path.name == "__init__.py":
            continue
        own = _part(path, package)
        for part, line in _imported_parts(ast.parse(path.read_text(encoding="utf-8"))):
            if part != own and _floor(part) >= _floor(own):
                upward.append(f"{path.relative_to(package.parent)}:{line} imports {part}")
    return upward


def test_every_part_of_planwerk_has_a_floor() -> None:
    parts = {_part(path) for path in PACKAGE.rglob("*.py") if path != PACKAGE / "__init__.py"}
    assert parts <= set().union(*FLOORS), f"give these a floor in FLOORS: {sorted(parts - set().union(*FLOORS))}"


def test_every_import_points_down() -> None:
    assert upward_imports() == []


def test_an_import_back_up_is_found(tmp_path: Path) -> None:
    """The check itself: a reader of text that imports the answer checks is named."""
    package = tmp_path / "planwerk"
    (package / "text").mkdir(parents=True)
    (package / "checks").mkdir()
    (package / "text" / "dates.py").write_text("import re\n\nfrom planwerk.checks.words import check_words\n")
    (package / "checks" / "rules.py").write_text("from planwerk.text.dates import find_dates\n")
    assert upward_imports(package) == ["planwerk/text/dates.py:3 imports checks"]

"""The README's code is code: its Python blocks compile as scripts, the files its commands name exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_python_blocks_compile_as_scripts() -> None:
    # A top-level "async with" is a SyntaxError in a script; the README's snippet must run as written.
    found = blocks("python")
    assert found
    for index, block in enumerate(found):
        compile(block, f"README.md python block {index}", "exec")


def test_paths_in_the_readme_commands_exist() -> None:
    commands = [line.split("#")[0] for block in blocks("bash") for line in block.splitlines()]
    for command in commands:
        for raw in command.replace("\\", " ").split():
            # "GGUF=$(.venv/bin/python" names .venv/bin/python: drop an assignment and a command substitution.
            word = re.sub(r"^[A-Z_]+=", "", raw).removeprefix("$(").strip("'\"")
            if "/" in word and not word.startswith(("-", "http", "replay:", "endpoint:", "$")) and "…" not in word:
                matches = list(ROOT.glob(word)) if "*" in word else [ROOT / word]
                assert matches and all(m.exists() for m in matches), f"README names a missing path: {word}"

"""What the tests' servers let a run name (:mod:`planwerk.graph.run_policy`): files in the temp folder, where the
tests write their replay files and MCP configs (pytest's ``tmp_path`` and ``tempfile.mkdtemp`` both lie there)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from planwerk.graph.run_policy import MCP_CONFIGS_ENV, MODEL_DIRS_ENV, PROFILE_DIRS_ENV


def temp_files_allowed() -> dict[str, str]:
    """The operator settings that allow the temp folder's MCP configs, model and replay files and profile files."""
    temp = str(Path(tempfile.gettempdir()).resolve())
    return {MCP_CONFIGS_ENV: temp, MODEL_DIRS_ENV: temp, PROFILE_DIRS_ENV: temp}

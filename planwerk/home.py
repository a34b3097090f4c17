"""Where planwerk keeps files it creates (threads, indexes, models, examples): ``$PLANWERK_HOME`` (default
``~/.cache/planwerk``). The one definition: the CLI, the index and the model stores all ask it."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "PLANWERK_HOME"


def planwerk_home() -> Path:
    """The planwerk data folder (not created here); ``$PLANWERK_HOME`` overrides the default."""
    configured = os.environ.get(HOME_ENV, "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "planwerk"

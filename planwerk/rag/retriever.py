"""The hybrid retriever (dense FAISS + German BM25, fused) behind the ``Retriever`` seam, and its loader."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from planwerk.rag.base import Hit
from planwerk.rag.chunking import Chunk, ChunkPolicy
from planwerk.rag.corpus import packaged_corpus, read_documents
from planwerk.rag.embeddings import dimension, document_title, embed, load_embedder, model_label, passage_format
from planwerk.rag.hybrid import FusionPolicy, Scored, calibrated_policy, fuse
from planwerk.rag.index import ChunkIndex, IndexPolicy, default_index_dir
from planwerk.rag.lexical import LexicalIndex

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

Mode = Literal["dense", "lexical", "hybrid"]


class LazyEncoder:
    """Loads the embedding model on first use, so opening an unchanged index costs no model load."""

    def __init__(self, model: str | None, *, progress: bool | None = None):
        self.model = model
        self.progress = progress
        self._lock = threading.Lock()
        self._loaded: SentenceTransformer | None = None

    @property
    def loaded(self) -> SentenceTransformer:
        """The model, loaded now if it wasn't yet."""
        with self._lock:
            if self._loaded is None:
                self._loaded = load_embedder(self.model)
            return self._loaded

    def dimension(self) -> int:
        """The model's embedding width."""
        return dimension(self.loaded)

    def __call__(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """Embed ``chunks`` as passages to be found, each with its document's title where the model's prompt has
        a slot for it (normalised float32 rows): what the index stores."""
        texts = [c.text for c in chunks]
        titles = [document_title(c.source) for c in chunks]
        return embed(texts, model=self.loaded, progress=self.progress, kind="document", titles=titles)

    def query(self, text: str) -> np.ndarray:
        """Embed one search query (with the model's query prompt, where it has one)."""
        return embed([text], model=self.loaded, progress=False, kind="query")[0]


@dataclass(frozen=True)
class Explained:
    """A candidate with its chunk and the parts of its score (threshold not applied)."""

    chunk: Chunk
    scored: Scored


class HybridRetriever:
    """Implements :class:`planwerk.rag.base.Retriever`: ``search(query, k)`` -> hits above the threshold."""

    def __init__(
        self,
        index: ChunkIndex,
        *,
        policy: FusionPolicy | None = None,
        encoder: LazyEncoder | None = None,
    ):
        self.index = index
        self.policy = policy or calibrated_policy(index.model)
        # The query must be embedded by the model the index was built with: the manifest names it.
        self.encoder = encoder or LazyEncoder(None if index.model == model_label(None) else index.model)
        self.lexical = LexicalIndex([c.text for c in index.chunks])

    @property
    def threshold(self) -> float:
        """Minimum score of a returned hit."""
        return self.policy.threshold

    def _check(self, query: str, k: int) -> None:
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"the query must be a non-empty string, got {query!r}")
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")

    def explain(self, query: str, k: int | None = None) -> list[Explained]:
        """All fused candidates for ``query`` with their score parts, best first (no threshold)."""
        self._check(query, k or 1)
        n = self.index.size
        if n == 0:
            return []
        depth = min(n, max(self.policy.candidates, k or 0))
        qvec = self.encoder.query(query)
        dense = self.index.search(qvec, depth)
        bm25, coverage = self.lexical.score(query)
        lexical = [int(i) for i in np.argsort(-bm25, kind="stable")[:depth] if bm25[i] > 0]
        cosine = dict(dense)
        missing = [i for i in lexical if i not in cosine]
        if missing:  # lexical-only candidates still get their true cosine (for the evidence term)
            cosine.update(zip(missing, (self.index.vectors(missing) @ qvec).tolist(), strict=True))
        cov = {i: float(coverage[i]) for i in set(cosine) | set(lexical)}
        fused = fuse([i for i, _ in dense], lexical, cosine, cov, self.policy)
        return [Explained(self.index.chunks[s.chunk], s) for s in fused[: k or None]]

    def search(self, query: str, k: int = 4) -> list[Hit]:
        """The top ``k`` chunks scoring at least the threshold, best first, as :class:`Hit` dicts."""
        self._check(query, k)
        return [
            Hit(text=e.chunk.text, score=round(e.scored.score, 4), source=e.chunk.ref)
            for e in self.explain(query, k)
            if e.scored.score >= self.policy.threshold
        ]

    def rank(self, query: str, mode: Mode = "hybrid") -> list[Chunk]:
        """All candidate chunks ordered by one signal: ``dense``, ``lexical`` (BM25) or ``hybrid`` (the score).

        For evaluation: this is how docs/retrieval.md compares the rankings.
        """
        self._check(query, 1)
        if mode == "dense":
            return [self.index.chunks[i] for i, _ in self.index.search(self.encoder.query(query), self.index.size)]
        if mode == "lexical":
            bm25, _ = self.lexical.score(query)
            return [self.index.chunks[int(i)] for i in np.argsort(-bm25, kind="stable") if bm25[i] > 0]
        return [e.chunk for e in self.explain(query)]


def _index_name(paths: Sequence[Path]) -> str:
    key = "\n".join(sorted(str(Path(p).expanduser().resolve()) for p in paths))
    return "corpus-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def load_retriever(
    paths: list[Path] | None = None,
    *,
    index_dir: Path | None = None,
    model: str | None = None,
    threshold: float | None = None,
    chunking: ChunkPolicy | None = None,
    index_policy: IndexPolicy | None = None,
    progress: bool | None = None,
) -> HybridRetriever:
    """Open or build the persisted index of ``paths`` (default: the packaged corpus) and wrap it.

    ``index_dir`` defaults to ``$PLANWERK_HOME/index/default`` for the packaged corpus and to
    ``$PLANWERK_HOME/index/corpus-<hash of the paths>`` otherwise, with ``-<hash of the model>`` for an embedder
    other than the default. ``model`` is ``embeddinggemma``, a sentence-transformers folder or hub name (default:
    the packaged all-MiniLM-L6-v2). The index is re-embedded only where corpus, model or
    chunking changed; ``retriever.index.last_update`` says what happened.
    """
    if threshold is not None and not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be within [0, 1], got {threshold}")
    name = "default" if paths is None else _index_name(paths)
    if model_label(model) != model_label(None):
        # Another embedder gets its own folder, so switching models back and forth re-embeds nothing.
        name += "-" + hashlib.sha256(model_label(model).encode()).hexdigest()[:8]
    paths = [packaged_corpus()] if paths is None else paths
    index_dir = index_dir or default_index_dir(name)
    documents = read_documents(paths)
    encoder = LazyEncoder(model, progress=progress)
    index = ChunkIndex.sync(
        Path(index_dir),
        documents,
        model=model_label(model),
        encode=encoder,
        dimension=encoder.dimension,
        chunking=chunking,
        policy=index_policy,
        passages=passage_format(model),
    )
    policy = calibrated_policy(model_label(model), threshold=threshold)
    return HybridRetriever(index, policy=policy, encoder=encoder)

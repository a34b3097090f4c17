"""The persisted vector index: FAISS inner product over normalised chunk embeddings, plus a JSON manifest.

A directory holds ``index.faiss``, ``texts.jsonl`` (one chunk text per line) and ``manifest.json`` (model,
dimension, index type, chunking and index parameters, a sha256 per document, every chunk's source and offsets, and
a counter of all embeddings ever computed for this directory). The manifest is written last, so it only ever
describes files that are complete.

:meth:`ChunkIndex.sync` brings a directory up to date with a corpus and embeds as little as it can: nothing when
corpus, model and chunking are unchanged; only the new documents when documents were added; changed documents
when some changed (the vectors of the others are taken back out of the index). Above
``IndexPolicy.approx_threshold`` vectors the exact ``IndexFlatIP`` is replaced by ``IndexHNSWFlat``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np

from planwerk.home import planwerk_home
from planwerk.rag.chunking import Chunk, ChunkPolicy, chunk_text
from planwerk.rag.corpus import fingerprint

log = logging.getLogger(__name__)

IndexType = Literal["flat_ip", "hnsw_ip"]
Action = Literal["built", "updated", "unchanged"]
Encoder = Callable[[Sequence[Chunk]], np.ndarray]
"""Chunks to L2-normalised float32 rows (``planwerk.rag.embeddings.embed`` with a bound model)."""

MANIFEST = "manifest.json"
FAISS_FILE = "index.faiss"
TEXTS_FILE = "texts.jsonl"
FORMAT = 1


def default_index_dir(name: str = "default") -> Path:
    """Where the index called ``name`` lives: ``$PLANWERK_HOME/index/<name>``."""
    return planwerk_home() / "index" / name


@dataclass(frozen=True)
class IndexPolicy:
    """When and how the index turns approximate."""

    approx_threshold: int = 50_000
    """From this many vectors on, HNSW replaces the exact flat index."""
    hnsw_m: int = 32
    """HNSW graph degree."""
    ef_construction: int = 80
    """HNSW build-time beam width."""
    ef_search: int = 64
    """HNSW query-time beam width (recall against speed)."""

    def index_type(self, vectors: int) -> IndexType:
        """The index type for a collection of ``vectors`` vectors."""
        return "hnsw_ip" if vectors >= self.approx_threshold else "flat_ip"


@dataclass(frozen=True)
class UpdateReport:
    """What :meth:`ChunkIndex.sync` or :meth:`ChunkIndex.add_documents` did."""

    action: Action
    reason: str
    embedded_chunks: int = 0
    reused_chunks: int = 0
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    index_type: IndexType = "flat_ip"
    total_chunks: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return asdict(self)


def new_faiss_index(dim: int, kind: IndexType, policy: IndexPolicy) -> faiss.Index:
    """An empty FAISS index of the given kind, inner-product metric."""
    if kind == "flat_ip":
        return faiss.IndexFlatIP(dim)
    index = faiss.IndexHNSWFlat(dim, policy.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = policy.ef_construction
    index.hnsw.efSearch = policy.ef_search
    return index


def _atomic_write(path: Path, data: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)


@dataclass
class ChunkIndex:
    """Chunks, their vectors in FAISS, and the manifest data; ids are positions in ``chunks``."""

    directory: Path
    model: str
    dimension: int
    chunking: ChunkPolicy
    policy: IndexPolicy
    chunks: list[Chunk] = field(default_factory=list)
    passages: str = "plain"
    """How the chunks were embedded (:data:`planwerk.rag.embeddings.PassageFormat`): a change re-embeds them."""
    documents: dict[str, str] = field(default_factory=dict)
    """Document name -> sha256, in index order."""
    index: faiss.Index | None = None
    embedded_total: int = 0
    last_update: UpdateReport | None = None

    # ----------------------------------------------------------------------------------------- reading
    @property
    def index_type(self) -> IndexType:
        """``flat_ip`` or ``hnsw_ip``."""
        return "hnsw_ip" if isinstance(self.index, faiss.IndexHNSWFlat) else "flat_ip"

    @property
    def size(self) -> int:
        """Number of chunks (= vectors)."""
        return len(self.chunks)

    @classmethod
    def open(cls, directory: Path, policy: IndexPolicy | None = None) -> ChunkIndex | None:
        """The index stored in ``directory``, or None if there is none. A damaged one raises ValueError."""
        directory = Path(directory)
        manifest_path = directory / MANIFEST
        if not manifest_path.exists():
            return None
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT:
                raise ValueError(f"manifest format {manifest.get('format')!r}, this planwerk reads {FORMAT}")
            texts = [json.loads(line) for line in (directory / TEXTS_FILE).read_text("utf-8").splitlines()]
            chunks = [
                Chunk(c["source"], c["number"], c["start"], c["end"], text)
                for c, text in zip(manifest["chunks"], texts, strict=True)
            ]
            index = faiss.read_index(str(directory / FAISS_FILE))
            stored_policy = IndexPolicy(**manifest.get("index_policy", {}))
            result = cls(
                directory=directory,
                model=manifest["model"],
                dimension=int(manifest["dimension"]),
                chunking=ChunkPolicy(**manifest["chunking"]),
                policy=policy or stored_policy,
                chunks=chunks,
                documents={name: d["sha256"] for name, d in manifest["documents"].items()},
                index=index,
                embedded_total=int(manifest.get("embedded_chunks_total", 0)),
                passages=str(manifest.get("passages", "plain")),  # indexes before titled passages were plain
            )
        except (OSError, KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ValueError(
                f"the index in {directory} is damaged ({type(exc).__name__}: {exc}); "
                "delete the folder or rebuild it with `planwerk index build`"
            ) from exc
        if index.ntotal != len(chunks) or index.d != result.dimension:
            raise ValueError(
                f"the index in {directory} is inconsistent: {index.ntotal} vectors of width {index.d} for "
                f"{len(chunks)} chunks of width {result.dimension}; rebuild it"
            )
        if isinstance(index, faiss.IndexHNSWFlat):
            index.hnsw.efSearch = result.policy.ef_search
        return result

    def vectors(self, ids: Sequence[int] | None = None) -> np.ndarray:
        """The stored vectors of ``ids`` (default: all), taken back out of FAISS."""
        if self.index is None or self.index.ntotal == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if ids is None:
            return self.index.reconstruct_n(0, self.index.ntotal)
        if not len(ids):
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self.index.reconstruct(int(i)) for i in ids])

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks with the highest inner product with ``query`` (one normalised vector)."""
        if self.index is None or self.size == 0 or k <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dimension:
            raise ValueError(f"query vector has width {q.shape[1]}, the index holds width {self.dimension}")
        scores, ids = self.index.search(q, min(k, self.size))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    # ----------------------------------------------------------------------------------------- writing
    def save(self) -> None:
        """Write index, texts and (last) the manifest into ``directory``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        assert self.index is not None
        tmp = self.directory / (FAISS_FILE + ".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, self.directory / FAISS_FILE)
        _atomic_write(
            self.directory / TEXTS_FILE,
            "".join(json.dumps(c.text, ensure_ascii=False) + "\n" for c in self.chunks),
        )
        counts: dict[str, int] = {}
        for c in self.chunks:
            counts[c.source] = counts.get(c.source, 0) + 1
        manifest = {
            "format": FORMAT,
            "model": self.model,
            "passages": self.passages,
            "dimension": self.dimension,
            "index_type": self.index_type,
            "index_file": FAISS_FILE,
            "texts_file": TEXTS_FILE,
            "chunking": self.chunking.to_json(),
            "index_policy": asdict(self.policy),
            "documents": {name: {"sha256": sha, "chunks": counts.get(name, 0)} for name, sha in self.documents.items()},
            "chunks": [{"source": c.source, "number": c.number, "start": c.start, "end": c.end} for c in self.chunks],
            "embedded_chunks_total": self.embedded_total,
            "last_update": self.last_update.to_json() if self.last_update else None,
            "updated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        _atomic_write(self.directory / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))

    def _rebuild(self, vectors: np.ndarray) -> None:
        kind = self.policy.index_type(len(vectors))
        index = new_faiss_index(self.dimension, kind, self.policy)
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self.index = index

    def _embed_documents(self, documents: Mapping[str, str], encode: Encoder) -> tuple[list[Chunk], np.ndarray]:
        chunks = [c for name, text in documents.items() for c in chunk_text(text, name, self.chunking)]
        vectors = encode(chunks) if chunks else np.zeros((0, self.dimension), np.float32)
        if vectors.shape != (len(chunks), self.dimension):
            raise ValueError(
                f"the encoder returned shape {vectors.shape}, expected ({len(chunks)}, {self.dimension}); "
                f"is the model the one this index was built with ({self.model})?"
            )
        self.embedded_total += len(chunks)
        log.info("embedded %d chunks of %d documents", len(chunks), len(documents))
        return chunks, vectors

    def add_documents(self, documents: Mapping[str, str], encode: Encoder) -> UpdateReport:
        """Chunk and embed only ``documents`` (new names) and append them. Existing names raise ValueError."""
        clash = sorted(set(documents) & set(self.documents))
        if clash:
            raise ValueError(f"documents already in the index: {clash}; use sync() to replace changed documents")
        chunks, vectors = self._embed_documents(documents, encode)
        self.chunks.extend(chunks)
        self.documents.update({name: fingerprint(text) for name, text in documents.items()})
        if self.index is None or self.policy.index_type(self.size) != self.index_type:
            old = self.vectors() if self.index is not None else np.zeros((0, self.dimension), np.float32)
            self._rebuild(np.vstack([old, vectors]))
        elif len(vectors):
            self.index.add(vectors)
        self.last_update = UpdateReport(
            "updated",
            f"added {len(documents)} document(s)",
            embedded_chunks=len(chunks),
            reused_chunks=self.size - len(chunks),
            added=tuple(documents),
            index_type=self.index_type,
            total_chunks=self.size,
        )
        return self.last_update

    @classmethod
    def sync(
        cls,
        directory: Path,
        documents: Mapping[str, str],
        *,
        model: str,
        encode: Encoder,
        dimension: Callable[[], int],
        chunking: ChunkPolicy | None = None,
        policy: IndexPolicy | None = None,
        passages: str = "plain",
    ) -> ChunkIndex:
        """Open the index in ``directory`` and make it match ``documents`` (name -> text), saving if changed.

        ``model`` is the model's manifest label and ``passages`` how ``encode`` embeds chunks (a change of either
        re-embeds everything); ``encode`` and ``dimension`` are only called when something must be embedded, so
        opening an unchanged index never loads the model. The result's ``last_update`` says what happened.
        """
        directory = Path(directory)
        chunking = chunking or ChunkPolicy()
        policy = policy or IndexPolicy()
        existing = cls.open(directory, policy)
        reason = ""
        if existing is None:
            reason = "no index yet"
        elif existing.model != model:
            reason = f"model changed ({existing.model} -> {model})"
        elif existing.chunking != chunking:
            reason = "chunking parameters changed"
        elif existing.passages != passages:
            reason = f"passage format changed ({existing.passages} -> {passages})"
        if existing is None or reason:
            fresh = cls(directory, model, dimension(), chunking, policy, passages=passages)
            chunks, vectors = fresh._embed_documents(documents, encode)
            fresh.chunks = chunks
            fresh.documents = {name: fingerprint(text) for name, text in documents.items()}
            fresh.embedded_total += existing.embedded_total if existing else 0
            fresh._rebuild(vectors)
            fresh.last_update = UpdateReport(
                "built", reason, embedded_chunks=len(chunks), added=tuple(documents),
                index_type=fresh.index_type, total_chunks=fresh.size,
            )  # fmt: skip
            fresh.save()
            return fresh

        wanted = {name: fingerprint(text) for name, text in documents.items()}
        added = tuple(n for n in wanted if n not in existing.documents)
        removed = tuple(n for n in existing.documents if n not in wanted)
        changed = tuple(n for n in wanted if n in existing.documents and existing.documents[n] != wanted[n])
        if not (added or removed or changed):
            existing.last_update = UpdateReport(
                "unchanged", "corpus, model and chunking unchanged", reused_chunks=existing.size,
                index_type=existing.index_type, total_chunks=existing.size,
            )  # fmt: skip
            log.info("index %s is up to date (%d chunks), nothing embedded", directory, existing.size)
            return existing
        if not (removed or changed):
            report = existing.add_documents({n: documents[n] for n in added}, encode)
            existing.save()
            log.info("index %s: %s", directory, report.reason)
            return existing

        # Some documents changed or went away: keep the vectors of the unchanged ones, embed the rest.
        keep_ids = [i for i, c in enumerate(existing.chunks) if c.source in wanted and c.source not in changed]
        kept_vectors = existing.vectors(keep_ids)
        kept_chunks = [existing.chunks[i] for i in keep_ids]
        todo = {n: documents[n] for n in (*changed, *added)}
        new_chunks, new_vectors = existing._embed_documents(todo, encode)
        existing.chunks = kept_chunks + new_chunks
        existing.documents = {n: wanted[n] for n in existing.documents if n in wanted and n not in changed}
        existing.documents.update({n: wanted[n] for n in todo})
        existing._rebuild(np.vstack([kept_vectors, new_vectors]))
        existing.last_update = UpdateReport(
            "updated", "documents changed", embedded_chunks=len(new_chunks), reused_chunks=len(kept_chunks),
            added=added, changed=changed, removed=removed, index_type=existing.index_type,
            total_chunks=existing.size,
        )  # fmt: skip
        existing.save()
        return existing

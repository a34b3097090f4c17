"""Scale benchmark of the vector index: exact ``IndexFlatIP`` against approximate ``IndexHNSWFlat``.

``python -m benchmarks.index_scale [--n 100000] [--queries 300] [--json]``

The vectors are SYNTHETIC, not embedded text (embedding 100,000 chunks would take ~15 minutes here): normalised
vectors of the real model width (384), drawn around 2,000 random topic centres so that neighbourhoods exist as in
real text embeddings (uniform random vectors in 384 dimensions are all nearly orthogonal, a worst case no corpus
has). Queries are noisy copies of held-out points. Reported: build time, single-query latency p50/p95, and
recall@10 of HNSW against the exact index's top 10 (the exact index is the baseline measured in the same run).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

import faiss
import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from planwerk.rag.index import IndexPolicy, new_faiss_index


@dataclass(frozen=True)
class IndexFigures:
    """Measured figures of one index type."""

    index_type: str
    build_s: float
    query_p50_ms: float
    query_p95_ms: float
    recall_at_10: float


def synthetic_vectors(n: int, dim: int, *, topics: int = 2000, spread: float = 0.6, seed: int = 0) -> np.ndarray:
    """``n`` L2-normalised float32 vectors clustered around ``topics`` random centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((topics, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.standard_normal((n, dim)).astype(np.float32) * (spread / np.sqrt(dim))
    vectors = centres[rng.integers(0, topics, n)] + noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _measure(index: faiss.Index, kind: str, data: np.ndarray, queries: np.ndarray, truth: np.ndarray | None):
    start = time.perf_counter()
    index.add(data)
    build = time.perf_counter() - start
    latencies, found = [], []
    for q in queries:
        t0 = time.perf_counter()
        _, ids = index.search(q.reshape(1, -1), 10)
        latencies.append((time.perf_counter() - t0) * 1000)
        found.append(ids[0])
    result = np.array(found)
    if truth is None:
        recall = 1.0
    else:
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(result, truth, strict=True)]))
    figures = IndexFigures(
        kind,
        round(build, 2),
        round(float(np.percentile(latencies, 50)), 3),
        round(float(np.percentile(latencies, 95)), 3),
        round(recall, 4),
    )
    return figures, result


def run(n: int, queries: int, dim: int = 384, policy: IndexPolicy | None = None) -> dict:
    """Build both indexes over ``n`` synthetic vectors and measure them; a JSON-ready dict."""
    policy = policy or IndexPolicy()
    faiss.omp_set_num_threads(max(1, faiss.omp_get_max_threads()))
    data = synthetic_vectors(n + queries, dim)
    base, held_out = data[:n], data[n:]
    rng = np.random.default_rng(1)
    q = held_out + rng.standard_normal(held_out.shape).astype(np.float32) * (0.3 / np.sqrt(dim))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exact, truth = _measure(new_faiss_index(dim, "flat_ip", policy), "flat_ip (exact)", base, q, None)
    approx, _ = _measure(new_faiss_index(dim, "hnsw_ip", policy), "hnsw_ip", base, q, truth)
    return {
        "benchmark": "index_scale",
        "vectors": n,
        "dimension": dim,
        "queries": queries,
        "data": "synthetic clustered normalised vectors",
        "hnsw": {"M": policy.hnsw_m, "efConstruction": policy.ef_construction, "efSearch": policy.ef_search},
        "threads": faiss.omp_get_max_threads(),
        "results": [asdict(exact), asdict(approx)],
        "speedup_p50": round(exact.query_p50_ms / approx.query_p50_ms, 1) if approx.query_p50_ms else None,
    }


def main(
    n: int = typer.Option(100_000, "--n", min=100, help="Number of vectors."),
    queries: int = typer.Option(300, "--queries", min=10, help="Number of single-vector queries."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object as the last line."),
) -> None:
    """Measure exact vs. HNSW index build time, query latency and recall@10."""
    console = Console(stderr=as_json)
    with console.status(f"building and querying two indexes of {n:,} vectors ..."):
        report = run(n, queries)
    table = Table(title=f"{n:,} synthetic vectors, dim {report['dimension']}, {queries} queries")
    for column in ("index", "build s", "query p50 ms", "query p95 ms", "recall@10"):
        table.add_column(column, justify="left" if column == "index" else "right")
    for r in report["results"]:
        table.add_row(
            r["index_type"], f"{r['build_s']:.2f}", f"{r['query_p50_ms']:.3f}", f"{r['query_p95_ms']:.3f}",
            f"{r['recall_at_10']:.4f}",
        )  # fmt: skip
    console.print(table)
    if as_json:
        print(json.dumps(report))


if __name__ == "__main__":
    typer.run(main)

"""Fusion of the dense and the lexical ranking into one relevance score in [0, 1]. Pure: no I/O.

Reciprocal rank fusion (RRF) orders well but says nothing about whether anything is relevant at all: the best
chunk for "Wie funktioniert ein Dieselmotor?" is still first in both rankings. So the score multiplies
*absolute evidence* (the larger of the query's term coverage and the calibrated cosine) with the fused rank::

    evidence = max(coverage, clip((cosine - cos_floor) / (cos_ceiling - cos_floor), 0, 1))
    score    = evidence * (rank_base + (1 - rank_base) * rrf / rrf_max)

``rrf_max`` is the RRF of a chunk ranked first by both, so the rank factor lies in [rank_base, 1]. The defaults
are calibrated for the packaged English all-MiniLM-L6-v2 on German text (see docs/retrieval.md): unrelated German
questions reach a cosine of about 0.44 and a coverage of about 0.28, which stays under the threshold. Another
embedder spreads its cosines differently and gets its own floor and ceiling (:func:`calibrated_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

Ranking = Sequence[int]
"""Chunk ids, best first."""


@dataclass(frozen=True)
class FusionPolicy:
    """Parameters of the hybrid score (see the module docstring)."""

    rrf_k: int = 60
    """The RRF damping constant (60 as in Cormack et al.)."""
    cos_floor: float = 0.25
    """Cosine that counts as no evidence (model specific)."""
    cos_ceiling: float = 0.90
    """Cosine that counts as full evidence (model specific)."""
    rank_base: float = 0.5
    """Share of the score that does not depend on the fused rank."""
    threshold: float = 0.35
    """Hits scoring below this are dropped."""
    candidates: int = 50
    """How many chunks each ranking contributes to the fusion."""

    def __post_init__(self) -> None:
        if not 0 <= self.cos_floor < self.cos_ceiling <= 1:
            raise ValueError(
                f"need 0 <= cos_floor < cos_ceiling <= 1, got floor={self.cos_floor}, ceiling={self.cos_ceiling}"
            )
        if not 0 <= self.rank_base <= 1:
            raise ValueError(f"rank_base must be within [0, 1], got {self.rank_base}")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"threshold must be within [0, 1], got {self.threshold}")
        if self.rrf_k < 0 or self.candidates < 1:
            raise ValueError(f"need rrf_k >= 0 and candidates >= 1, got {self.rrf_k}, {self.candidates}")


CALIBRATED_COSINES: Mapping[str, tuple[float, float]] = {
    "all-MiniLM-L6-v2": (0.25, 0.90),
    "embeddinggemma": (0.15, 0.60),
}
"""(cos_floor, cos_ceiling) per embedder, by its manifest label. Measured on the 17 German and 7 English questions
of ``benchmarks/data/retrieval`` and the 7 off-topic ones (``python -m benchmarks.embedders`` prints the inputs):
EmbeddingGemma (passages with their document's title) puts unrelated questions at a cosine of at most 0.21 and
answers at 0.34 to 0.79, so MiniLM's 0.25-0.90 left English questions' answers under the threshold (the weakest
scored 0.149 before titles) while nothing off-topic came near it."""


def calibrated_policy(model: str, *, threshold: float | None = None) -> FusionPolicy:
    """The fusion policy calibrated for the embedder labelled ``model``; an embedder without a calibration gets
    the packaged model's (its threshold may then need ``threshold``, measured on its own questions)."""
    floor, ceiling = CALIBRATED_COSINES.get(model, (FusionPolicy.cos_floor, FusionPolicy.cos_ceiling))
    policy = replace(FusionPolicy(), cos_floor=floor, cos_ceiling=ceiling)
    return policy if threshold is None else replace(policy, threshold=threshold)


@dataclass(frozen=True)
class Scored:
    """One fused candidate with the parts of its score (for explanations and the CLI)."""

    chunk: int
    score: float
    rrf: float
    cosine: float
    coverage: float
    dense_rank: int | None
    lexical_rank: int | None


def rrf(rankings: Sequence[Ranking], k: int = 60) -> dict[int, float]:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over the rankings a chunk appears in (rank from 1)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk in enumerate(ranking, start=1):
            fused[chunk] = fused.get(chunk, 0.0) + 1.0 / (k + rank)
    return fused


def dense_evidence(cosine: float, policy: FusionPolicy) -> float:
    """The cosine mapped linearly from [cos_floor, cos_ceiling] to [0, 1] (clipped)."""
    span = policy.cos_ceiling - policy.cos_floor
    return float(np.clip((cosine - policy.cos_floor) / span, 0.0, 1.0))


def fuse(
    dense: Ranking,
    lexical: Ranking,
    cosine: Mapping[int, float],
    coverage: Mapping[int, float],
    policy: FusionPolicy | None = None,
) -> list[Scored]:
    """Fuse the two rankings; every chunk in either ranking gets a score. Best first, threshold NOT applied.

    ``cosine`` and ``coverage`` must hold a value for every chunk in ``dense`` or ``lexical`` (missing: 0).
    """
    policy = policy or FusionPolicy()
    fused = rrf([dense, lexical], policy.rrf_k)
    rrf_max = 2.0 / (policy.rrf_k + 1)
    dense_rank = {c: r for r, c in enumerate(dense, start=1)}
    lexical_rank = {c: r for r, c in enumerate(lexical, start=1)}
    out: list[Scored] = []
    for chunk, value in fused.items():
        cos = float(cosine.get(chunk, 0.0))
        cov = float(coverage.get(chunk, 0.0))
        evidence = max(cov, dense_evidence(cos, policy))
        factor = policy.rank_base + (1.0 - policy.rank_base) * value / rrf_max
        out.append(Scored(chunk, evidence * factor, value, cos, cov, dense_rank.get(chunk), lexical_rank.get(chunk)))
    out.sort(key=lambda s: (-s.score, -s.rrf, s.chunk))
    return out

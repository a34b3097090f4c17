"""German analysis, compound matching, BM25 coverage and the fused score (pure logic, no model)."""

from __future__ import annotations

import pytest

from planwerk.rag.hybrid import FusionPolicy, calibrated_policy, dense_evidence, fuse, rrf
from planwerk.rag.lexical import COMPOUND_WEIGHT, LexicalIndex, analyze


def test_analyze_stems_drops_stopwords_and_splits_hyphens() -> None:
    assert analyze("Wo kann man das Razepato am besten beobachten?") == ["razepato", "beobacht"]
    assert analyze("Beobachtungen im Ebro-Becken") == ["beobacht", "ebro", "beck"]


def test_compound_parts_match_with_lower_weight() -> None:
    lex = LexicalIndex(
        ["Die durchschnittliche Körperlänge beträgt 72 cm.", "Ernährungsphysiologisch ist es ein Karnivor."]
    )
    assert lex.expand("lang") == {"korperlang": COMPOUND_WEIGHT}  # head of a compound
    assert lex.expand("ernahrt") == {"ernahrungsphysiolog": COMPOUND_WEIGHT}  # verb root inside a compound
    assert lex.expand("karnivor") == {"karnivor": 1.0}
    assert lex.expand("la") == {}  # too short to be a compound part


def test_coverage_is_idf_weighted_and_zero_for_unknown_words() -> None:
    lex = LexicalIndex(["Das Razepato lebt in Parks.", "Das Razepato frisst Eidechsen.", "Valebris ist eine Stadt."])
    bm25, cov = lex.score("Wo lebt das Razepato?")
    assert bm25.argmax() == 0 and cov[0] == pytest.approx(1.0)
    assert 0 < cov[1] < 0.5 and cov[2] == 0
    bm25, cov = lex.score("Wie funktioniert ein Dieselmotor?")
    assert not bm25.any() and not cov.any()


def test_empty_corpus_scores_nothing() -> None:
    bm25, cov = LexicalIndex([]).score("Razepato")
    assert bm25.shape == (0,) and cov.shape == (0,)


def test_rrf_rewards_agreement() -> None:
    fused = rrf([[1, 2, 3], [2, 1, 4, 3]], k=60)
    assert fused[1] == fused[2] > fused[3] > fused[4]
    assert fused[3] == pytest.approx(1 / 63 + 1 / 64)


def test_fuse_needs_evidence_not_just_rank() -> None:
    policy = FusionPolicy()
    # Chunk 7 is first in both rankings but has no evidence: it must stay below the threshold.
    weak = fuse([7, 8], [7], {7: 0.30, 8: 0.2}, {7: 0.0}, policy)
    assert weak[0].chunk == 7 and weak[0].score < policy.threshold
    strong = fuse([7, 8], [7], {7: 0.70, 8: 0.2}, {7: 0.9}, policy)
    assert strong[0].score == pytest.approx(0.9)
    assert 0 <= strong[-1].score <= strong[0].score <= 1


def test_dense_evidence_is_clipped_linear() -> None:
    policy = FusionPolicy(cos_floor=0.2, cos_ceiling=0.6)
    assert dense_evidence(0.1, policy) == 0 and dense_evidence(0.4, policy) == pytest.approx(0.5)
    assert dense_evidence(0.9, policy) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cos_floor": 0.9, "cos_ceiling": 0.5}, "cos_floor"),
        ({"threshold": 1.5}, "threshold"),
        ({"rank_base": -1}, "rank_base"),
    ],
)
def test_fusion_policy_rejects_bad_values(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FusionPolicy(**kwargs)  # type: ignore[arg-type]


def test_each_embedder_gets_its_own_cosine_calibration() -> None:
    minilm, gemma = calibrated_policy("all-MiniLM-L6-v2"), calibrated_policy("embeddinggemma")
    assert minilm == FusionPolicy()  # the defaults are the packaged model's calibration
    assert (gemma.cos_floor, gemma.cos_ceiling) == (0.15, 0.60) and gemma.threshold == minilm.threshold
    assert calibrated_policy("/models/my-embedder") == FusionPolicy()  # no calibration: the packaged model's
    assert calibrated_policy("embeddinggemma", threshold=0.5).threshold == 0.5
    # The same cosine is stronger evidence in EmbeddingGemma's tighter range.
    assert dense_evidence(0.44, gemma) > dense_evidence(0.44, minilm)

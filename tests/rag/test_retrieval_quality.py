"""Retrieval over the packaged German texts with the real model, FAISS and BM25."""

from __future__ import annotations

import pytest

from planwerk.rag.base import Retriever
from planwerk.rag.retriever import HybridRetriever

from .conftest import OFF_TOPIC, QUESTIONS


def test_is_a_retriever(corpus_retriever: HybridRetriever) -> None:
    assert isinstance(corpus_retriever, Retriever)


@pytest.mark.parametrize("item", QUESTIONS, ids=[q["q"] for q in QUESTIONS])
def test_answer_chunk_is_in_top_3(corpus_retriever: HybridRetriever, item: dict[str, str]) -> None:
    hits = corpus_retriever.search(item["q"], k=3)
    assert any(item["phrase"] in h["text"] for h in hits), [h["source"] for h in hits]
    assert all(h["source"].startswith(item["doc"]) for h in hits if item["phrase"] in h["text"])
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(corpus_retriever.threshold <= s <= 1 for s in scores)


def test_observation_question_names_ebro_basin_first(corpus_retriever: HybridRetriever) -> None:
    first = corpus_retriever.search("Wo kann man das Razepato am besten beobachten?", k=4)[0]
    assert "Ebro-Becken südlich von Tarragona" in first["text"]
    assert "Grünanlagen im Stadtgebiet von Barcelona" in first["text"]
    assert first["source"] == "Razepato.txt#3"


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_off_topic_question_gets_no_hit(corpus_retriever: HybridRetriever, question: str) -> None:
    assert corpus_retriever.search(question, k=4) == []
    # ...although there are candidates: the threshold, not an empty ranking, removed them.
    assert corpus_retriever.explain(question, k=1)


def accuracy(retriever: HybridRetriever, mode: str) -> tuple[int, int]:
    top1 = top3 = 0
    for item in QUESTIONS:
        found = [item["phrase"] in c.text for c in retriever.rank(item["q"], mode)[:3]]  # type: ignore[arg-type]
        top1 += bool(found and found[0])
        top3 += any(found)
    return top1, top3


def test_fusion_beats_each_signal_at_top_3(corpus_retriever: HybridRetriever) -> None:
    figures = {mode: accuracy(corpus_retriever, mode) for mode in ("dense", "lexical", "hybrid")}
    print(f"\n{len(QUESTIONS)} questions, (top-1, top-3) correct:", figures)
    assert figures["hybrid"][1] == len(QUESTIONS)
    assert figures["hybrid"][1] >= max(figures["dense"][1], figures["lexical"][1])
    assert figures["hybrid"][0] > figures["dense"][0]


@pytest.mark.parametrize(("query", "k"), [("", 3), ("   ", 3), ("Razepato", 0)])
def test_bad_input_is_rejected_clearly(corpus_retriever: HybridRetriever, query: str, k: int) -> None:
    with pytest.raises(ValueError, match=r"query|k must"):
        corpus_retriever.search(query, k)

"""The multilingual embedder (EmbeddingGemma-300M, installed by scripts/setup.d/50-embeddinggemma.sh): the real
model over the packaged German corpus, asked in German and in English."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.embedders import questions
from planwerk.rag import embeddings
from planwerk.rag.embeddings import EMBEDDINGGEMMA, embed, embeddinggemma_path, load_embedder
from planwerk.rag.retriever import HybridRetriever, load_retriever

pytestmark = pytest.mark.model
"""Every test here runs EmbeddingGemma; the benchmark test reaches it through a command the tiers do not follow."""

ENGLISH_FOUND_FIRST = (
    "What does the Razepato eat?",
    "Where can one best observe the Razepato?",
    "How long does an adult Razepato grow?",
    "Is the Razepato endangered?",
    "How big are the males' territories?",
)
"""English questions about the German corpus (benchmarks/data/retrieval/questions_en.json) whose answer the
multilingual model ranks first without translation (measured: 6 of 7 first with its own cosine calibration, 5 with
MiniLM's; the default English model 1 of 7)."""
ENGLISH = [(item["q"], item["phrase"]) for item in questions("questions_en.json") if item["q"] in ENGLISH_FOUND_FIRST]


@pytest.fixture(scope="module")
def gemma_retriever(tmp_path_factory: pytest.TempPathFactory) -> HybridRetriever:
    return load_retriever(index_dir=tmp_path_factory.mktemp("index") / "gemma", model=EMBEDDINGGEMMA)


def test_queries_and_passages_are_embedded_with_the_models_prompts() -> None:
    model = load_embedder(EMBEDDINGGEMMA)
    assert model.prompts["query"] == "task: search result | query: "
    text = ["Das Razepato frisst Kleinsäuger."]
    query, document, plain = (embed(text, model=model, kind=k)[0] for k in ("query", "document", None))
    assert not np.allclose(query, document) and not np.allclose(query, plain)
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-3)
    # A model without prompts embeds a query as it is.
    minilm = load_embedder()
    assert np.allclose(embed(text, model=minilm, kind="query"), embed(text, model=minilm))


@pytest.mark.parametrize(("question", "phrase"), ENGLISH)
def test_an_english_question_finds_the_german_answer_first(
    gemma_retriever: HybridRetriever, question: str, phrase: str
) -> None:
    first = gemma_retriever.search(question, k=3)[0]
    assert phrase in first["text"], first["source"]


def test_the_benchmark_compares_both_embedders(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    from benchmarks.embedders import main

    assert len(ENGLISH) == len(ENGLISH_FOUND_FIRST)  # the data still holds every question asserted above
    monkeypatch.delenv("PLANWERK_HOME", raising=False)
    assert main(["--json"]) == 0
    default, gemma = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]
    assert (default["model"], gemma["model"]) == ("all-MiniLM-L6-v2", "embeddinggemma")
    # Measured: dense top-1 5 of 17 (default) against 14 of 17; English questions first 1 of 7 against 5 of 7.
    assert gemma["dense"]["top1"] >= 12 > default["dense"]["top1"]
    assert gemma["english_search"]["top1"] >= 4 > default["english_search"]["top1"]
    assert gemma["off_topic_with_hits"] == default["off_topic_with_hits"] == 0
    assert gemma["weakest_answer_score"] > gemma["threshold"] > gemma["strongest_off_topic_score"]
    # Its own cosine calibration: with MiniLM's, the weakest English answer scored 0.149 and 5 of 7 were found.
    assert gemma["weakest_english_answer_score"] > gemma["threshold"]
    assert gemma["english_search"]["top3"] >= 6
    # Passages with their document's title: "In welchen Monaten sieht man das Razepato am ehesten?" was missed at
    # top-3 (its one-sentence chunk names no animal); measured 17 of 17 first.
    assert gemma["missed_top3_hybrid"] == [] and gemma["hybrid"]["top1"] == gemma["german_questions"]
    assert gemma["highest_off_topic_cosine"] < gemma["cosine_floor_ceiling"][0] + 0.35 * (
        gemma["cosine_floor_ceiling"][1] - gemma["cosine_floor_ceiling"][0]
    )  # dense evidence alone lifts no off-topic question over the threshold


def test_a_second_relevant_chunk_is_not_cut_by_the_threshold(gemma_retriever: HybridRetriever) -> None:
    # Measured with MiniLM's calibration: one hit, the biography (the name matches every word), and the work the
    # question asks about (dense rank 2) scored 0.29, under the threshold.
    hits = gemma_retriever.search("What is the best-known work of Maximus Qvestus III?", k=4)
    assert any("Theorie der wandernden Zahlen" in hit["text"] for hit in hits), [h["source"] for h in hits]


def test_each_embedder_keeps_its_own_index(gemma_retriever: HybridRetriever, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path))
    gemma = load_retriever(model=EMBEDDINGGEMMA)
    default = load_retriever()
    assert gemma.index.directory != default.index.directory
    manifests = [json.loads((r.index.directory / "manifest.json").read_text()) for r in (gemma, default)]
    assert [m["model"] for m in manifests] == ["embeddinggemma", "all-MiniLM-L6-v2"]
    assert load_retriever(model=EMBEDDINGGEMMA).index.last_update.embedded_chunks == 0  # reopened, nothing re-embedded


def test_a_missing_install_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "embeddinggemma_path", lambda: tmp_path / "absent")
    with pytest.raises(RuntimeError, match=r"not installed .*absent.*scripts/setup\.d/50-embeddinggemma\.sh"):
        load_embedder(EMBEDDINGGEMMA)
    assert embeddinggemma_path().name == "embeddinggemma-300m"

"""Fixtures for the retrieval tests: the real embedding model is loaded once per session."""

from __future__ import annotations

import os
from typing import Any

import pytest

from benchmarks.embedders import OFF_TOPIC as OFF_TOPIC_QUESTIONS
from benchmarks.embedders import questions

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTIONS: list[dict[str, Any]] = questions()
"""German questions written from the packaged texts, with a distinctive phrase of the answer sentence."""

OFF_TOPIC: list[str] = list(OFF_TOPIC_QUESTIONS)
"""Questions the corpus says nothing about (some share a word with it: Wetter, Tiere)."""


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The packaged all-MiniLM-L6-v2, loaded once (load_embedder caches it for the whole process)."""
    from planwerk.rag.embeddings import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def corpus_retriever(embedder, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A HybridRetriever over the packaged corpus, built into a temporary index folder."""
    from planwerk.rag.retriever import load_retriever

    return load_retriever(index_dir=tmp_path_factory.mktemp("index") / "default")

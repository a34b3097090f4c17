"""Retrieval quality per embedder: the packaged English all-MiniLM-L6-v2 against the multilingual EmbeddingGemma.

``python -m benchmarks.embedders [--json] [--model NAME ...]``

Both models index the packaged corpus (into a temporary ``PLANWERK_HOME``) in one run, so they share the machine's
load. For the 17 German questions of ``benchmarks/data/retrieval/questions.json`` a question counts as answered when
a chunk holding its answer phrase ranks first (top-1) or among the first three (top-3), for the dense, the lexical
(BM25) and the hybrid ranking; the 7 English questions of ``questions_en.json`` go through ``search`` untranslated
(cross-language retrieval). It also reports the weakest answer's score against the strongest off-topic question's
(the margin the calibrated threshold relies on), off-topic questions that get a hit, the lowest answer cosine against
the highest off-topic one (the inputs of the embedder's cosine calibration), and seconds to load the model and per
query. Prints a table; with ``--json`` the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

OFF_TOPIC = (
    "Wie funktioniert ein Dieselmotor?",
    "Wer gewann die Fußball-Weltmeisterschaft 2014?",
    "Wie backe ich einen Apfelkuchen?",
    "Was kostet ein Flug nach Tokio?",
    "Wie wird das Wetter morgen in Berlin?",
    "Welche Tiere leben in der Arktis?",
    "Wer war Carl Friedrich Gauß?",
)
"""Questions the corpus says nothing about (some share a word with it: Wetter, Tiere)."""

MODES = ("dense", "lexical", "hybrid")


def questions(name: str = "questions.json") -> list[dict[str, str]]:
    """The retrieval questions of ``benchmarks/data/retrieval/<name>``: ``q``, ``phrase`` (of the answer), ``doc``."""
    text = (Path(__file__).parent / "data" / "retrieval" / name).read_text(encoding="utf-8")
    return list(json.loads(text))


def measure(model: str | None) -> dict[str, Any]:
    """The figures of one embedder (``None``: the default) over the packaged corpus."""
    from planwerk.rag.embeddings import model_label
    from planwerk.rag.retriever import load_retriever

    german, english = questions(), questions("questions_en.json")
    started = time.perf_counter()
    retriever = load_retriever(model=model)
    retriever.encoder.loaded  # noqa: B018  (load now, so the query timing is only queries)
    load_s = time.perf_counter() - started
    figures: dict[str, Any] = {"model": model_label(model), "load_and_index_s": round(load_s, 2)}
    for mode in MODES:
        found = [[item["phrase"] in c.text for c in retriever.rank(item["q"], mode)[:3]] for item in german]  # type: ignore[arg-type]
        figures[mode] = {"top1": sum(bool(f and f[0]) for f in found), "top3": sum(any(f) for f in found)}
    started = time.perf_counter()
    hits = [retriever.search(item["q"], k=3) for item in english]
    figures["query_s"] = round((time.perf_counter() - started) / len(english), 3)
    answered = [[item["phrase"] in h["text"] for h in found] for item, found in zip(english, hits, strict=True)]
    figures["english_search"] = {
        "top1": sum(bool(a and a[0]) for a in answered),
        "top3": sum(any(a) for a in answered),
        "questions": len(english),
    }
    figures["missed_top3_hybrid"] = [
        item["q"]
        for item in german
        if not any(item["phrase"] in c.text for c in retriever.rank(item["q"], "hybrid")[:3])
    ]
    # Each question explained once: every explain embeds the query again (1.6 s with EmbeddingGemma under load).
    explained = {item["q"]: retriever.explain(item["q"]) for item in (*german, *english)}
    off_topic = [retriever.explain(q) for q in OFF_TOPIC]

    def best_answer(item: dict[str, str], part: str) -> float:
        parts = (getattr(e.scored, part) for e in explained[item["q"]] if item["phrase"] in e.chunk.text)
        return max(parts, default=0.0)

    figures["weakest_answer_score"] = round(min(best_answer(item, "score") for item in german), 3)
    figures["weakest_english_answer_score"] = round(min(best_answer(item, "score") for item in english), 3)
    figures["strongest_off_topic_score"] = round(max(found[0].scored.score for found in off_topic), 3)
    # The inputs of the embedder's calibration (planwerk.rag.hybrid.CALIBRATED_COSINES): where its cosines put the
    # answers and the questions the corpus says nothing about.
    figures["lowest_answer_cosine"] = round(min(best_answer(item, "cosine") for item in (*german, *english)), 3)
    figures["highest_off_topic_cosine"] = round(max(e.scored.cosine for found in off_topic for e in found), 3)
    figures["cosine_floor_ceiling"] = [retriever.policy.cos_floor, retriever.policy.cos_ceiling]
    figures["off_topic_with_hits"] = sum(bool(retriever.search(q, k=4)) for q in OFF_TOPIC)
    figures["threshold"] = retriever.threshold
    figures["german_questions"] = len(german)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure every ``--model`` (default: the packaged model and EmbeddingGemma) and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="default, embeddinggemma or a folder (repeatable)")
    parser.add_argument("--json", action="store_true", help="end with one JSON object on stdout")
    args = parser.parse_args(argv)
    names = args.model or ["default", "embeddinggemma"]
    err = Console(stderr=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    results = []
    with tempfile.TemporaryDirectory(prefix="planwerk-embedders-") as home:
        os.environ["PLANWERK_HOME"] = home  # fresh indexes: every model embeds the corpus in this run
        for name in names:
            err.print(f"measuring {name} …")
            results.append(measure(None if name == "default" else name))
    table = Table(title="retrieval per embedder (German corpus; top-1 / top-3)")
    columns = ("model", "dense", "lexical", "hybrid", "English search", "answer / off-topic", "cosines", "query s")
    for column in columns:
        table.add_column(column)
    for r in results:
        table.add_row(
            r["model"],
            *(f"{r[m]['top1']} / {r[m]['top3']} of {r['german_questions']}" for m in MODES),
            f"{r['english_search']['top1']} / {r['english_search']['top3']} of {r['english_search']['questions']}",
            f"{r['weakest_answer_score']} / {r['strongest_off_topic_score']} (threshold {r['threshold']})",
            f"{r['lowest_answer_cosine']} / {r['highest_off_topic_cosine']} (range {r['cosine_floor_ceiling']})",
            str(r["query_s"]),
        )
    (err if args.json else Console()).print(table)  # with --json, stdout is the JSON line only
    if args.json:
        print(json.dumps({"benchmark": "embedders", "results": results}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

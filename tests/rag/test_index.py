"""The persisted index: no re-embedding across processes, incremental adds, rebuilds, HNSW switch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from planwerk.rag.corpus import packaged_corpus, read_documents
from planwerk.rag.index import ChunkIndex, IndexPolicy, default_index_dir
from planwerk.rag.retriever import load_retriever

NEW_DOC = (
    "Der Valebris-Komet erscheint alle 83 Jahre am Nachthimmel. Astronomen der Universität Valebris "
    "beobachten ihn mit dem großen Spiegelteleskop im Nordturm."
)


def cli(*args: str, home: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PLANWERK_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "planwerk.rag.cli", *args, "--json"],
        capture_output=True, text=True, timeout=240, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    shutil.copytree(packaged_corpus(), folder)
    return folder


def test_second_process_does_not_embed_an_unchanged_corpus(corpus: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    first = cli("build", str(corpus), "--index-dir", str(index_dir), home=tmp_path)
    assert first["action"] == "built" and first["embedded_chunks"] == first["total_chunks"] > 10
    second = cli("build", str(corpus), "--index-dir", str(index_dir), home=tmp_path)
    assert second["action"] == "unchanged" and second["embedded_chunks"] == 0
    manifest = json.loads((index_dir / "manifest.json").read_text("utf-8"))
    assert manifest["embedded_chunks_total"] == first["total_chunks"]  # the counter did not move
    assert manifest["model"] == "all-MiniLM-L6-v2" and manifest["dimension"] == 384
    assert manifest["index_type"] == "flat_ip" and manifest["chunking"]["max_chars"] == 500
    assert set(manifest["documents"]) == {"Razepato.txt", "Maximus_Qvestus_III.txt"}
    assert all(len(d["sha256"]) == 64 for d in manifest["documents"].values())
    text = (corpus / "Razepato.txt").read_text("utf-8")
    for c in manifest["chunks"]:
        if c["source"] == "Razepato.txt":
            assert text[c["start"] : c["end"]]


def test_adding_a_document_embeds_only_that_document(embedder, corpus: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    built = load_retriever([corpus], index_dir=index_dir).index
    total = built.embedded_total
    (corpus / "Komet.txt").write_text(NEW_DOC, encoding="utf-8")
    retriever = load_retriever([corpus], index_dir=index_dir)
    report = retriever.index.last_update
    assert report is not None and report.action == "updated" and report.added == ("Komet.txt",)
    assert report.embedded_chunks == 1 and report.reused_chunks == total
    assert retriever.index.embedded_total == total + 1
    hits = retriever.search("Wie oft erscheint der Valebris-Komet?", k=2)
    assert hits[0]["source"] == "Komet.txt#0"

    # A changed document is embedded again, alone; a removed one disappears.
    (corpus / "Komet.txt").write_text(NEW_DOC.replace("83", "91"), encoding="utf-8")
    (corpus / "Maximus_Qvestus_III.txt").unlink()
    retriever = load_retriever([corpus], index_dir=index_dir)
    report = retriever.index.last_update
    assert report is not None and report.changed == ("Komet.txt",) and report.removed == ("Maximus_Qvestus_III.txt",)
    assert report.embedded_chunks == 1
    assert {c.source for c in retriever.index.chunks} == {"Razepato.txt", "Komet.txt"}
    assert "91 Jahre" in retriever.search("Wie oft erscheint der Valebris-Komet?", k=1)[0]["text"]
    assert retriever.search("Wo wurde Maximus Qvestus geboren?", k=3) == []


def test_model_change_rebuilds(embedder, corpus: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    load_retriever([corpus], index_dir=index_dir)
    manifest = index_dir / "manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    data["model"] = "some-other-model"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    report = load_retriever([corpus], index_dir=index_dir).index.last_update
    assert report is not None and report.action == "built" and "model changed" in report.reason


def test_a_change_of_passage_format_rebuilds_and_an_old_manifest_reads_as_plain(
    embedder, corpus: Path, tmp_path: Path
) -> None:
    index_dir = tmp_path / "idx"
    load_retriever([corpus], index_dir=index_dir)
    manifest = index_dir / "manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    assert data["passages"] == "plain"  # the packaged model's document prompt has no title slot
    del data["passages"]  # an index written before passages had titles
    manifest.write_text(json.dumps(data), encoding="utf-8")
    assert load_retriever([corpus], index_dir=index_dir).index.last_update.action == "unchanged"
    data["passages"] = "titled"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    report = load_retriever([corpus], index_dir=index_dir).index.last_update
    assert (
        report is not None and report.action == "built" and "passage format changed (titled -> plain)" in report.reason
    )


def test_switches_to_hnsw_above_threshold(embedder, corpus: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    policy = IndexPolicy(approx_threshold=18)
    retriever = load_retriever([corpus], index_dir=index_dir, index_policy=policy)
    assert retriever.index.index_type == "flat_ip" and retriever.index.size == 17
    (corpus / "Komet.txt").write_text(NEW_DOC, encoding="utf-8")
    retriever = load_retriever([corpus], index_dir=index_dir, index_policy=policy)
    assert retriever.index.index_type == "hnsw_ip" and retriever.index.size == 18
    reopened = ChunkIndex.open(index_dir)
    assert reopened is not None and reopened.index_type == "hnsw_ip"
    assert json.loads((index_dir / "manifest.json").read_text("utf-8"))["index_type"] == "hnsw_ip"
    first = retriever.search("Wo kann man das Razepato am besten beobachten?", k=1)[0]
    assert first["source"] == "Razepato.txt#3"


def test_damaged_index_and_bad_corpus_give_clear_errors(corpus: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    index_dir.mkdir()
    (index_dir / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="damaged"):
        ChunkIndex.open(index_dir)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_documents([tmp_path / "missing"])
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_documents([tmp_path / "bin.txt"])
    with pytest.raises(ValueError, match="empty"):
        read_documents([index_dir])


def test_default_index_dir_follows_planwerk_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path))
    assert default_index_dir() == tmp_path / "index" / "default"
    monkeypatch.delenv("PLANWERK_HOME")
    assert default_index_dir("x") == Path.home() / ".cache" / "planwerk" / "index" / "x"

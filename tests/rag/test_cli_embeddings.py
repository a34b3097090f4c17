"""The ``index`` typer app and the embedding helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from planwerk.rag.cli import index_app
from planwerk.rag.corpus import packaged_corpus
from planwerk.rag.embeddings import embed, load_embedder

runner = CliRunner()


def test_build_then_search_table_and_json(embedder, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    built = runner.invoke(index_app, ["build", str(packaged_corpus()), "--index-dir", str(index_dir)])
    assert built.exit_code == 0, built.output
    assert "built" in built.output and "17 chunks" in built.output
    args = ["--path", str(packaged_corpus()), "--index-dir", str(index_dir)]
    table = runner.invoke(index_app, ["search", "Wo kann man das Razepato am besten beobachten?", "-k", "2", *args])
    assert table.exit_code == 0, table.output
    assert "Razepato.txt#3" in table.output and "score" in table.output
    out = runner.invoke(index_app, ["search", "Welchen Beruf hatten die Eltern von Qvestus?", "--json", *args])
    data = json.loads(out.output.strip().splitlines()[-1])
    assert data["hits"][0]["source"] == "Maximus_Qvestus_III.txt#0"
    assert set(data["hits"][0]) == {"text", "score", "source"}
    none = runner.invoke(index_app, ["search", "Wie funktioniert ein Dieselmotor?", *args])
    assert "No hit" in none.output


def test_build_of_missing_path_fails_with_message(tmp_path: Path) -> None:
    result = runner.invoke(index_app, ["build", str(tmp_path / "nope"), "--index-dir", str(tmp_path / "i")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_embed_returns_normalised_float32_and_model_is_cached(embedder) -> None:
    assert load_embedder() is embedder
    vectors = embed(["Das Razepato lebt in Katalonien.", "Ein Dieselmotor verbrennt Diesel."], model=embedder)
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert embed([], model=embedder).shape == (0, 384)
    with pytest.raises(TypeError, match="single string"):
        embed("nur ein Text", model=embedder)


def test_missing_model_folder_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_embedder("./no/such/model")

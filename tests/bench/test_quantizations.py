"""The quantizations benchmark (benchmarks/quantizations.py): paired figures per packaged file, clear errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchmarks.cli import bench_app
from planwerk.models.llama_cpp_lib import llama_cpp_available

pytestmark = pytest.mark.bench


def test_a_model_that_is_not_packaged_is_refused_with_the_ones_there_are() -> None:
    result = CliRunner().invoke(bench_app, ["quantizations", "--models", "default,gguf:/m/x.gguf"])
    assert result.exit_code != 0
    assert "gguf:/m/x.gguf" in str(result.exception) and "qwen2.5-coder-0.5b-q4_0" in str(result.exception)


@pytest.mark.model
@pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed (scripts/setup.d)")
def test_each_file_gets_its_own_limit_decode_figures_against_the_first_and_a_perplexity() -> None:
    arguments = ["quantizations", "--tokens", "8", "--rounds", "1", "--prompt-tokens", "64", "--json"]
    result = CliRunner().invoke(bench_app, arguments)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert 64 <= figures["prompt_tokens"] < 100  # the corpus's first 64 tokens and the request
    models = figures["models"]
    packaged, q4_0, q8_0 = (models[name] for name in ("default", "qwen2.5-coder-0.5b-q4_0", "qwen2.5-coder-0.5b-q8_0"))
    # Q8_0 holds the packaged weights with more bits: it reads more a token and predicts the text as well.
    assert q8_0["read_mb_per_token"] > packaged["read_mb_per_token"]
    assert abs(q8_0["perplexity"] - packaged["perplexity"]) < 0.01 * packaged["perplexity"]
    assert packaged["decode_over_first"] == 1.0 and q4_0["decode_tokens_per_s"] > 0
    # Q4_0 reads fewer bytes a token than the Q5_0/Q8_0 mix of the packaged file, so its limit is higher.
    assert q4_0["read_mb_per_token"] < packaged["read_mb_per_token"]
    assert q4_0["bandwidth_limit_tokens_per_s"] > packaged["bandwidth_limit_tokens_per_s"]
    # Same text, same tokenizer: the same tokens predicted; a coarser quantization predicts them less well.
    assert q4_0["perplexity_tokens"] == packaged["perplexity_tokens"] > 1000
    assert 1 < packaged["perplexity"] < q4_0["perplexity"] < 1000

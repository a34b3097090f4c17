"""The llama.cpp settings benchmark (benchmarks/llama_settings.py): paired figures per setting, clear errors."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchmarks.cli import bench_app
from planwerk.models.llama_cpp_lib import llama_cpp_available

pytestmark = pytest.mark.bench


def test_an_unknown_setting_is_named_with_the_ones_there_are() -> None:
    result = CliRunner().invoke(bench_app, ["llama-settings", "--settings", "base,turbo"])
    assert result.exit_code != 0
    assert "turbo" in str(result.exception) and "flash_attn" in str(result.exception)


@pytest.mark.model
@pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed (scripts/setup.d)")
def test_each_setting_gets_prefill_and_decode_figures_against_the_first() -> None:
    from benchmarks.llama_settings import run

    figures = run("default", tokens=8, rounds=1, prompt_tokens=300, settings=("base", "flash_attn"), progress=print)
    assert 280 <= figures["prompt_tokens"] <= 340  # the long prompt is about as long as asked
    base, flash = figures["settings"]["base"], figures["settings"]["flash_attn"]
    assert base["decode_over_base"] == 1.0 and base["prefill_over_base"] == 1.0
    assert flash["decode_tokens_per_s"] > 0 and flash["prefill_tokens_per_s"] > 0 and flash["bandwidth_fraction"] > 0

"""The bandwidth measures the local-backend benchmarks divide decode speed by (benchmarks/backends.py)."""

from __future__ import annotations

import pytest

from benchmarks.backends import (
    bytes_read_per_token,
    gguf_bytes_read_per_token,
    memory_bandwidth_gbs,
    read_bandwidth_gbs,
)

pytestmark = pytest.mark.bench


def test_both_measures_give_a_rate_and_reading_splits_over_threads() -> None:
    copy, read_one, read_two = (
        memory_bandwidth_gbs(mib=16, repeats=2),
        read_bandwidth_gbs(1, 16, 2),
        read_bandwidth_gbs(2, 16, 2),
    )
    assert copy > 0 and read_one > 0 and read_two > 0
    with pytest.raises(ValueError):  # no threads is no measure
        read_bandwidth_gbs(-1, 16, 1)


def test_a_token_reads_one_row_of_the_embedding_table_unless_it_is_also_the_output_matrix() -> None:
    assert bytes_read_per_token(1_000, 400, 100, tied=False) == 604
    assert bytes_read_per_token(1_000, 400, 100, tied=True) == 1_000


@pytest.mark.model
def test_the_packaged_gguf_reads_its_matrices_and_one_embedding_row_per_token() -> None:
    import gguf

    from planwerk.models.packaged import ensure_packaged_model
    from planwerk.models.specs import DEFAULT_PACKAGED, PACKAGED_MODELS

    path = ensure_packaged_model(PACKAGED_MODELS[DEFAULT_PACKAGED])
    tensors = {tensor.name: int(tensor.n_bytes) for tensor in gguf.GGUFReader(str(path)).tensors}
    assert "output.weight" in tensors  # an output matrix of its own: the embedding table is only looked up
    table = tensors["token_embd.weight"]
    read = gguf_bytes_read_per_token(path)
    assert sum(tensors.values()) - table < read < sum(tensors.values()) - table + table // 1000

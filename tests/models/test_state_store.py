"""The on-disk store of static prompt prefixes' KV states (planwerk.models.state_store): exact token match, atomic
files, a bound in bytes."""

from __future__ import annotations

import os
from pathlib import Path

from planwerk.models.state_store import StateStore, StoredState, model_key, token_key


def test_a_stored_state_is_read_back_for_exactly_its_tokens(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "states")
    store.save(StoredState((1, 2, 3), b"kv-bytes"))
    assert store.load([1, 2, 3]) == StoredState((1, 2, 3), b"kv-bytes")
    assert store.load([1, 2]) is None
    assert store.load([1, 2, 3, 4]) is None
    assert (store.saves, store.loads) == (1, 1)
    assert not list((tmp_path / "states").glob("*.partial"))


def test_a_file_for_other_tokens_or_a_torn_file_is_ignored(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.save(StoredState((5, 6), b"state"))
    path = tmp_path / f"{token_key([5, 6])}.kvstate"
    # another sequence's file under this name (a collision): its tokens are checked, not trusted
    other = StateStore(tmp_path / "other")
    other.save(StoredState((7, 8), b"state"))
    path.write_bytes((tmp_path / "other" / f"{token_key([7, 8])}.kvstate").read_bytes())
    assert store.load([5, 6]) is None
    path.write_bytes(b"PWKV")  # cut short
    assert store.load([5, 6]) is None


def test_the_folder_is_pruned_to_its_bound_least_recently_used_first(tmp_path: Path) -> None:
    store = StateStore(tmp_path, max_bytes=2_000)
    for index in range(3):
        store.save(StoredState((index,), bytes(600)))
        os.utime(tmp_path / f"{token_key([index])}.kvstate", ns=(index * 10**9, index * 10**9))
    assert store.load([0]) is not None  # read: now the most recently used
    store.save(StoredState((3,), bytes(600)))
    kept = {path.stem for path in tmp_path.glob("*.kvstate")}
    assert token_key([1]) not in kept
    assert {token_key([0]), token_key([2]), token_key([3])} <= kept


def test_the_model_key_changes_with_the_file_and_the_backend_version(tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"weights")
    first = model_key(weights, "llama.cpp", "0.3.36", 4096)
    assert model_key(weights, "llama.cpp", "0.3.36", 4096) == first
    assert model_key(weights, "llama.cpp", "0.3.37", 4096) != first
    weights.write_bytes(b"other weights")
    assert model_key(weights, "llama.cpp", "0.3.36", 4096) != first

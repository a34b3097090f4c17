"""Assembling the packaged GGUF: atomic, verified by sha256, reused via a sidecar."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import planwerk.models.packaged as packaged
from planwerk.models.packaged import (
    QWEN25_CODER_05B,
    PackagedModel,
    PackagedModelError,
    assemble_gguf,
    ensure_packaged_model,
    part_paths,
)


@pytest.fixture
def parts(tmp_path: Path) -> list[Path]:
    paths = []
    for i, data in enumerate([b"GGUF-head-", b"middle-", b"tail"]):
        path = tmp_path / "src" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_assembles_in_order_and_writes_a_sidecar(parts, tmp_path):
    target = tmp_path / "models" / "m.gguf"
    assert assemble_gguf(parts, target, digest(b"GGUF-head-middle-tail")) == target
    assert target.read_bytes() == b"GGUF-head-middle-tail"
    assert (tmp_path / "models" / "m.gguf.verified.json").is_file()
    assert [p.name for p in target.parent.iterdir()] == sorted(["m.gguf", "m.gguf.verified.json"])


def test_sha_mismatch_is_a_clear_error_and_leaves_nothing(parts, tmp_path):
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(PackagedModelError, match=r"sha256 .* expected 0{64}.*reinstall"):
        assemble_gguf(parts, target, "0" * 64)
    assert list(target.parent.iterdir()) == []


def test_reuses_a_verified_file_and_rebuilds_a_tampered_one(parts, tmp_path, monkeypatch):
    model = PackagedModel("m.gguf", parts=(), sha256=digest(b"GGUF-head-middle-tail"))
    monkeypatch.setattr(packaged, "part_paths", lambda _model: parts)
    calls = []
    real = packaged.assemble_gguf
    monkeypatch.setattr(packaged, "assemble_gguf", lambda *a: calls.append(a) or real(*a))
    target = ensure_packaged_model(model, home=tmp_path)
    assert ensure_packaged_model(model, home=tmp_path) == target
    assert len(calls) == 1  # the second call trusted the sidecar
    target.write_bytes(b"tampered!")
    assert ensure_packaged_model(model, home=tmp_path).read_bytes() == b"GGUF-head-middle-tail"
    assert len(calls) == 2


def test_missing_part_package_names_the_install(tmp_path):
    model = PackagedModel("x.gguf", parts=(("no_such_part_pkg1", "data/part01.bin"),), sha256="0" * 64)
    with pytest.raises(PackagedModelError, match=r"no-such-part-pkg1.*planwerk\[local\]"):
        part_paths(model)


def test_the_default_parts_are_installed():
    paths = part_paths(QWEN25_CODER_05B)
    assert [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert sum(p.stat().st_size for p in paths) == 491_400_064

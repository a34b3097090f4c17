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


def test_a_requantized_model_needs_llama_cpp_and_says_so(tmp_path, monkeypatch):
    import planwerk.models.llama_cpp_lib as lib
    from planwerk.models.packaged import QWEN25_CODER_05B_Q4_0, requantize_gguf

    monkeypatch.setattr(lib, "llama_cpp_available", lambda: False)
    source = tmp_path / "source.gguf"
    source.write_bytes(b"GGUF")
    with pytest.raises(PackagedModelError, match="needs llama-cpp-python, which is not installed; it is made from"):
        requantize_gguf(
            source, tmp_path / "q.gguf", "q4_0", QWEN25_CODER_05B_Q4_0.sha256, install=QWEN25_CODER_05B_Q4_0.install
        )
    expected = r"unknown quantization 'q3': expected one of \['iq4_nl', 'q4_0', 'q8_0'\]"
    with pytest.raises(PackagedModelError, match=expected):
        requantize_gguf(source, tmp_path / "q.gguf", "q3", "0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.gguf"]


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.parametrize("spec", ["qwen2.5-coder-0.5b-q4_0", "qwen2.5-coder-0.5b-q8_0"])
def test_a_requantized_model_is_made_once_from_the_packaged_one_by_llama_cpp_and_verified(spec, tmp_path):
    # Real llama.cpp, the real packaged GGUF: the requantized file has the pinned sha256 (the quantizer is
    # deterministic), every matrix of the transformer blocks is of its type, and a second call reuses the file.
    from planwerk.models.llama_cpp_lib import llama_cpp_available
    from planwerk.models.packaged import PACKAGED_MODELS, file_sha256, requantize_gguf

    if not llama_cpp_available():
        pytest.skip("llama-cpp-python is not installed (scripts/setup.d)")
    import gguf

    model = PACKAGED_MODELS[spec]
    source = ensure_packaged_model(QWEN25_CODER_05B)  # the shared home: assembled once for the whole suite
    target = ensure_packaged_model(model, home=tmp_path)
    assert target == tmp_path / "models" / model.file_name
    assert file_sha256(target) == model.sha256
    kinds = {
        t.tensor_type.name for t in gguf.GGUFReader(target).tensors if t.name.startswith("blk.") and len(t.shape) == 2
    }
    assert kinds == {model.quantization.upper()}
    stamp = target.stat().st_mtime_ns
    assert ensure_packaged_model(model, home=tmp_path) == target
    assert target.stat().st_mtime_ns == stamp
    # Another hash (another llama.cpp's quantizer) is refused, and nothing is left behind.
    other = tmp_path / "other" / "q.gguf"
    with pytest.raises(PackagedModelError, match=r"has sha256 \w+, expected 0+: another llama.cpp version"):
        requantize_gguf(source, other, "q4_0", "0" * 64)
    assert list(other.parent.iterdir()) == []

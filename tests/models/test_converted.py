"""The converted-model cache: keys, complete folders only, and the real packaged GGUF round-trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from planwerk.models import converted
from planwerk.models.converted import ConversionKey, conversion_key, converted_dir, find_converted, save_converted

KEY = ConversionKey("sha-of-the-gguf", "", "bfloat16", "5.0.0")


@pytest.mark.parametrize(
    "changed",
    [
        {"source": "another-gguf"},
        {"tokenizer_source": "/some/tokenizer"},
        {"dtype": "float32"},
        {"transformers_version": "5.1.0"},
        {"format": converted.FORMAT + 1},
    ],
)
def test_every_input_of_the_conversion_changes_the_folder(changed):
    assert replace(KEY, **changed).digest != KEY.digest
    assert replace(KEY).digest == KEY.digest


def test_file_identity_changes_when_the_file_is_rewritten(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF one")
    first = converted.file_identity(path)
    path.write_bytes(b"GGUF other content")
    assert converted.file_identity(path) != first


def test_a_folder_without_its_manifest_or_with_a_missing_file_is_not_used(tmp_path):
    folder = converted_dir(KEY, tmp_path)
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"half written")
    assert find_converted(KEY, tmp_path) is None  # killed before the manifest: never loaded
    manifest = {"key": json.loads(json.dumps(KEY.__dict__)), "files": ["model.safetensors", "config.json"]}
    (folder / converted.MANIFEST).write_text(json.dumps(manifest))
    assert find_converted(KEY, tmp_path) is None  # config.json missing
    (folder / "config.json").write_text("{}")
    assert find_converted(KEY, tmp_path) == folder
    assert find_converted(replace(KEY, dtype="float32"), tmp_path) is None


def test_packed_models_are_not_cached(tmp_path):
    packed = SimpleNamespace(hf_quantizer=SimpleNamespace(packed_modules={"model.layers.0.mlp": object()}))
    assert save_converted(packed, tokenizer=None, key=KEY, home=tmp_path) is None
    assert not (tmp_path / "models").exists()


def test_the_cache_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(converted.CACHE_ENV, "0")
    assert not converted.cache_enabled()
    monkeypatch.setenv(converted.CACHE_ENV, "1")
    assert converted.cache_enabled()


@pytest.mark.slow
def test_the_packaged_gguf_round_trips_to_identical_logits_and_tokens(tmp_path, monkeypatch):
    """Load the GGUF (converting it), load again from the converted copy: same tokens, chat template, logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from planwerk.models.packaged import QWEN25_CODER_05B, ensure_packaged_model

    gguf = ensure_packaged_model()
    key = conversion_key(QWEN25_CODER_05B.sha256, tokenizer_source=None, dtype="bfloat16")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, local_files_only=True, dtype=torch.bfloat16
    )
    folder = save_converted(model, tokenizer, key, home=tmp_path)
    assert folder is not None and find_converted(key, tmp_path) == folder
    assert save_converted(model, tokenizer, key, home=tmp_path) == folder  # second writer: no new folder
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no staging folder left behind

    cached_tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    cached_model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.bfloat16)
    text = 'Wie wird das Wetter in Barcelona am 1. Dezember 2026? {"$ref": "g1.lat"} Ärger über Øre'
    assert cached_tokenizer(text).input_ids == tokenizer(text).input_ids
    assert cached_tokenizer.chat_template == tokenizer.chat_template
    messages = [{"role": "user", "content": text}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert cached_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False) == prompt
    ids = torch.tensor([tokenizer(prompt).input_ids])
    with torch.no_grad():
        assert torch.equal(cached_model(ids).logits, model(ids).logits)


def test_a_damaged_cache_falls_back_to_the_source(tmp_path, monkeypatch, caplog):
    """``_load_local`` loads the source when the converted copy raises, and says so."""
    from planwerk.models import specs

    monkeypatch.setenv("PLANWERK_HOME", str(tmp_path))
    key = conversion_key("identity", tokenizer_source=None, dtype="float32")
    folder = converted_dir(key)
    folder.mkdir(parents=True)
    (folder / converted.MANIFEST).write_text(json.dumps({"key": key.__dict__, "files": []}))
    loaded: list[Path | str] = []

    def fake_from_pretrained(name, source, gguf_file, *, tokenizer_source, device):
        loaded.append(source)
        if source == folder:
            raise RuntimeError("safetensors header is corrupt")
        raise LookupError("stop here: the source was tried")

    monkeypatch.setattr(specs, "_from_pretrained", fake_from_pretrained)
    monkeypatch.setattr(specs, "plan_device", lambda: SimpleNamespace(device="cpu", dtype="float32", device_map=None))
    with pytest.raises(LookupError):
        specs._load_local("gguf:x.gguf", tmp_path, gguf_file="x.gguf", tokenizer_source=None, identity="identity")
    assert loaded == [folder, tmp_path]
    assert "does not load" in caplog.text

"""A small sentence-transformers model built from a config, saved as a folder and loaded as a user's embedder is:
the device and dtype (bf16 on CUDA, as EmbeddingGemma runs on a GPU; fp32 on the CPU), the query and document
prompts, and float32 L2-normalised rows whatever the model computes in. Random weights, a WordPiece tokenizer
trained here: no download, seconds on a CPU. The GPU assertions run where a GPU is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from planwerk.rag import embeddings
from planwerk.rag.embeddings import dimension, document_title, embed, load_embedder, passage_format

PROMPTS = {"query": "task: search result | query: ", "document": "title: none | text: "}
"""EmbeddingGemma's retrieval prompts (its config_sentence_transformers.json)."""

TEXTS = ["Das Razepato lebt im Ebrobecken.", "Wo kann man das Razepato beobachten?", "Barcelona hat viele Parks."]


@pytest.fixture(scope="module")
def embedder_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6.2 moved the modules; 6.0 (a GPU machine's image) has only the old path
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, trainers
    from tokenizers.models import WordPiece
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("small-embedder")
    core = Tokenizer(WordPiece(unk_token="[UNK]"))
    core.normalizer = normalizers.BertNormalizer(lowercase=True)
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    core.train_from_iterator(
        [*TEXTS, *PROMPTS.values()] * 10, trainers.WordPieceTrainer(vocab_size=200, special_tokens=special)
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    transformer_folder = folder / "transformer"
    BertModel(config).save_pretrained(transformer_folder)
    tokenizer.save_pretrained(transformer_folder)
    transformer = Transformer(str(transformer_folder), max_seq_length=64)
    pooling = Pooling(config.hidden_size, pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], prompts=PROMPTS, device="cpu").save(str(folder))
    return folder


def test_the_embedder_loads_on_the_device_with_its_dtype(embedder_folder: Path) -> None:
    model = load_embedder(str(embedder_folder))
    weights = next(model.parameters())
    if torch.cuda.is_available():
        assert weights.device.type == "cuda"
        assert weights.dtype == torch.bfloat16
    else:
        assert weights.device.type == "cpu"
        assert weights.dtype == torch.float32
    assert load_embedder(str(embedder_folder)) is model  # cached per process and device


def test_rows_are_float32_and_normalised_on_any_device(embedder_folder: Path) -> None:
    model = load_embedder(str(embedder_folder))
    vectors = embed(TEXTS, model=model, kind="document")
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), dimension(model))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # bf16 on a GPU normalised 0.2 % off


def test_queries_and_documents_get_the_models_prompts(embedder_folder: Path) -> None:
    model = load_embedder(str(embedder_folder))
    question = [TEXTS[1]]
    as_query, as_document, plain = (embed(question, model=model, kind=k) for k in ("query", "document", None))
    assert not np.allclose(as_query, as_document, atol=1e-3)
    assert not np.allclose(as_query, plain, atol=1e-3)
    prompted = embed([PROMPTS["query"] + question[0]], model=model)  # the prompt is the prefix the model card says
    assert np.allclose(as_query, prompted, atol=2e-2 if torch.cuda.is_available() else 1e-5)


def test_passages_get_their_documents_title_in_a_prompt_with_a_title_slot(embedder_folder: Path) -> None:
    model = load_embedder(str(embedder_folder))
    titles = [document_title("Razepato.txt")] * len(TEXTS)
    titled = embed(TEXTS, model=model, kind="document", titles=titles)
    untitled = embed(TEXTS, model=model, kind="document")
    by_hand = embed([f"title: Razepato | text: {text}" for text in TEXTS], model=model)
    assert np.allclose(titled, by_hand, atol=2e-2 if torch.cuda.is_available() else 1e-5)
    assert not np.allclose(titled, untitled, atol=1e-3)
    assert np.allclose(embed(TEXTS, model=model, kind="query", titles=titles), embed(TEXTS, model=model, kind="query"))
    with pytest.raises(ValueError, match="one title per text"):
        embed(TEXTS, model=model, kind="document", titles=["Razepato"])


def _not_installed() -> str:
    raise RuntimeError("The default embedding model is missing")


def test_the_passage_format_is_read_from_the_folder_without_loading(
    embedder_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert passage_format(str(embedder_folder)) == "titled"  # EmbeddingGemma's "title: none | text: "
    assert passage_format(None) == "plain"  # the packaged MiniLM has no prompts (or, where it is missing: plain)
    assert passage_format(str(tmp_path / "absent")) == "plain"
    monkeypatch.setattr(embeddings, "default_model_path", _not_installed)
    assert passage_format(None) == "plain"  # a missing package is the load's error to report, not this one's
    assert document_title("Maximus_Qvestus_III.txt") == "Maximus Qvestus III"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA; this machine has no GPU")
def test_on_a_gpu_a_large_batch_encodes_on_cuda(embedder_folder: Path) -> None:
    model = load_embedder(str(embedder_folder))
    before = torch.cuda.max_memory_allocated()
    vectors = embed(TEXTS * 200, model=model, kind="document", progress=False)
    assert vectors.shape[0] == 600 and np.isfinite(vectors).all()
    assert torch.cuda.max_memory_allocated() >= before > 0

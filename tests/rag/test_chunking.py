"""The sentence splitter and the chunker (pure logic)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planwerk.rag.chunking import ChunkPolicy, chunk_text, split_sentences
from planwerk.rag.corpus import packaged_corpus


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_abbreviations_and_ordinals_do_not_split() -> None:
    text = (
        "Im 3. Jahrhundert lebte z. B. Dr. Müller ca. 5 km entfernt. Er kam am 22. März an. "
        "Das gilt u. a. für Farben (z.B. Blau für Strenge). Der 2. Weltkrieg endete 1945. Er zählte bis 3. "
        "Dann ging er. Maximus Qvestus der III. wurde geboren."
    )
    assert sentences(text) == [
        "Im 3. Jahrhundert lebte z. B. Dr. Müller ca. 5 km entfernt.",
        "Er kam am 22. März an.",
        "Das gilt u. a. für Farben (z.B. Blau für Strenge).",
        "Der 2. Weltkrieg endete 1945.",
        "Er zählte bis 3.",
        "Dann ging er.",
        "Maximus Qvestus der III. wurde geboren.",
    ]


def test_question_exclamation_quotes_and_lines_end_sentences() -> None:
    text = "Wirklich? Ja! Er schrieb: „Die Gleichung enthält uns.“ Manche deuten das.\nBIOGRAFIE:\nEr lebte."
    assert sentences(text) == [
        "Wirklich?",
        "Ja!",
        "Er schrieb: „Die Gleichung enthält uns.“",
        "Manche deuten das.",
        "BIOGRAFIE:",
        "Er lebte.",
    ]


def test_chunks_respect_max_size_and_overlap_whole_sentences() -> None:
    text = " ".join(f"Satz Nummer {i} hat genau ein paar Wörter mehr als nötig." for i in range(30))
    policy = ChunkPolicy(max_chars=200, overlap=1, min_chars=50)
    chunks = chunk_text(text, "t.txt", policy)
    spans = split_sentences(text)
    starts, ends = {a for a, _ in spans}, {b for _, b in spans}
    assert len(chunks) > 5
    for prev, nxt in itertools.pairwise(chunks):
        assert len(prev.text) <= 200
        assert prev.start in starts and prev.end in ends  # whole sentences only
        # exactly the last sentence of a chunk opens the next one
        last_sentence = next(text[a:b] for a, b in spans if b == prev.end)
        assert nxt.text.startswith(last_sentence)
        assert nxt.start < prev.end
    assert [c.number for c in chunks] == list(range(len(chunks)))


def test_no_overlap_and_paragraphs_start_new_chunks() -> None:
    para = "Dies ist ein Satz mit etwas Text darin. " * 4
    text = f"{para.strip()}\n\n{para.strip()}"
    chunks = chunk_text(text, "p.txt", ChunkPolicy(max_chars=500, overlap=0, min_chars=50))
    assert len(chunks) == 2
    assert chunks[1].start == text.index("\n\n") + 2
    assert chunks[0].end <= chunks[1].start


def test_heading_joins_its_paragraph() -> None:
    text = "RÜCKZUG:\nIm Alter zog er sich zurück.\n\nNEU:\nEr verschwand."
    chunks = chunk_text(text, "h.txt", ChunkPolicy(max_chars=500, overlap=0, min_chars=120))
    assert [c.text for c in chunks] == [text]


def test_overlong_sentence_is_cut_at_words() -> None:
    text = "Wort " * 100 + "Ende."
    chunks = chunk_text(text, "w.txt", ChunkPolicy(max_chars=60, overlap=1, min_chars=0))
    assert all(len(c.text) <= 60 for c in chunks)
    assert all(not c.text.startswith(" ") and not c.text.endswith(" ") for c in chunks)
    assert chunks[-1].text.endswith("Ende.")


def test_policy_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        ChunkPolicy(max_chars=5)
    with pytest.raises(ValueError, match="overlap"):
        ChunkPolicy(overlap=-1)


@pytest.mark.parametrize("name", ["Razepato.txt", "Maximus_Qvestus_III.txt"])
def test_corpus_offsets_map_back_and_cover_every_sentence(name: str) -> None:
    text = (packaged_corpus() / name).read_text("utf-8")
    chunks = chunk_text(text, name)
    assert chunks and all(c.source == name for c in chunks)
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert len(c.text) <= ChunkPolicy().max_chars
    for a, b in split_sentences(text):  # every sentence lies whole inside some chunk
        assert any(c.start <= a and b <= c.end for c in chunks), text[a:b]


words = st.sampled_from(["Das", "Tier", "z. B.", "ca.", "3.", "Jahr", "lebt", "hier", "Dr.", "gut", "Wo?", "und"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(words, min_size=1, max_size=25).map(" ".join), min_size=1, max_size=12),
    st.integers(min_value=20, max_value=300),
    st.integers(min_value=0, max_value=3),
)
def test_chunk_invariants(paragraphs: list[str], max_chars: int, overlap: int) -> None:
    text = "\n\n".join(p + "." for p in paragraphs)
    chunks = chunk_text(text, "x.txt", ChunkPolicy(max_chars=max_chars, overlap=overlap, min_chars=0))
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert 0 < len(c.text) <= max_chars
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_packaged_corpus_has_notice() -> None:
    assert (Path(packaged_corpus()) / "NOTICE.md").read_text("utf-8").count("MPL-2.0") == 1

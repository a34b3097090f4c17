"""Sentence-aware chunking of German (and English) text. Pure: no I/O.

Sentences are found by a small rule-based splitter (NLTK's punkt data can't be downloaded here, and the good
German splitters are GPL). It does not split after abbreviations ("z. B.", "ca.", "Dr."), after single letters
(initials, "u. a."), after ordinal numbers ("im 3. Jahrhundert") or before a lower-case word. Chunks are runs of
whole sentences up to ``max_chars``, consecutive chunks share ``overlap`` sentences, and a paragraph break
starts a new chunk. Every chunk keeps the character offsets of its text in the source, so
``text[chunk.start:chunk.end] == chunk.text``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

ABBREVIATIONS: frozenset[str] = frozenset(
    """
    abb abs abt allg anh anm bd bzgl bzw ca chr co dipl dr ebd engl etc evtl exkl fa fr frz ggf gr hr hrsg inkl
    jh jhd jr kap kath lat lt max min mio mrd mr mrs ms nachf nr od orig pfd prof resp sen sog spp st std str
    tel usw vgl vs zb zit zt zzgl jan feb mär apr jun jul aug sep sept okt nov dez mo di mi do sa so
    """.split()  # noqa: SIM905 - a word list reads better than a list literal
)
"""Lower-case words that end with a dot without ending the sentence (single letters are handled separately)."""

_SENTENCE_STARTERS: frozenset[str] = frozenset(
    """
    der die das den dem des ein eine einer er sie es wir ihr ich du man dann danach damit dabei doch aber und
    auch so da dort hier heute jetzt nun in im am an auf bei mit nach seit vor wie wo was wer warum the a an it
    """.split()  # noqa: SIM905
)
"""Words that, after ``<number>.``, show that the number ended a sentence rather than being an ordinal."""

# A sentence ends at . ! ? or … , optionally followed by closing quotes or brackets, then whitespace.
_END = re.compile(r"""[.!?…]+["'”“»«)\]]*(?=\s)""")
_WORD_BEFORE = re.compile(r"(\w+)$")
_NEXT_WORD = re.compile(r"\s*[\"'„“»«(\[]*(\w+)")


@dataclass(frozen=True)
class ChunkPolicy:
    """How text is cut into chunks."""

    max_chars: int = 500
    """Upper bound on a chunk's length; a single longer sentence is cut at word boundaries."""
    overlap: int = 1
    """Whole sentences repeated at the start of the next chunk (within a paragraph)."""
    min_chars: int = 120
    """A chunk shorter than this is not closed at a paragraph break (so a heading joins its paragraph)."""

    def __post_init__(self) -> None:
        if self.max_chars < 20:
            raise ValueError(f"max_chars must be at least 20, got {self.max_chars}")
        if self.overlap < 0:
            raise ValueError(f"overlap must be >= 0 sentences, got {self.overlap}")
        if not 0 <= self.min_chars <= self.max_chars:
            raise ValueError(f"min_chars must be within 0..max_chars ({self.max_chars}), got {self.min_chars}")

    def to_json(self) -> dict[str, Any]:
        """The policy as a JSON object (kept in the index manifest)."""
        return asdict(self)


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: ``source`` is the document name, ``number`` counts from 0 within it."""

    source: str
    number: int
    start: int
    end: int
    text: str

    @property
    def ref(self) -> str:
        """Readable reference such as ``Razepato.txt#4``."""
        return f"{self.source}#{self.number}"


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    paragraph: int


def _is_boundary(text: str, dot_at: int, after: int) -> bool:
    """Whether the terminator run text[dot_at:after] really ends a sentence."""
    nxt = _NEXT_WORD.match(text, after)
    next_word = nxt.group(1) if nxt else ""
    if next_word[:1].islower() or next_word[:1].isdigit():
        return False  # "ca. 5 km", "usw. und", "z. B. blau": a sentence never starts like this
    if text[dot_at] != ".":
        return True
    before = _WORD_BEFORE.search(text, 0, dot_at)
    if before is None:
        return True
    word = before.group(1)
    if len(word) == 1 and word.isalpha():
        return False  # initials and "z. B.", "u. a.", "d. h."
    if word.lower() in ABBREVIATIONS:
        return False
    if word.isdigit() and len(word) <= 3:
        # "im 3. Jahrhundert", "am 22. März" vs. "bis 3. Dann ...": an ordinal is followed by a noun.
        return next_word.lower() in _SENTENCE_STARTERS
    return True


def _line_sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    for m in _END.finditer(text, start, end):
        if _is_boundary(text, m.start(), m.end()):
            yield pos, m.end()
            pos = m.end()
    yield pos, end


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences in ``text``, without surrounding whitespace.

    A line break also ends a sentence (headings, list items)."""
    return [(s.start, s.end) for s in _sentences(text)]


def _sentences(text: str) -> list[_Sentence]:
    out: list[_Sentence] = []
    paragraph = 0
    blank_seen = False
    for line in re.finditer(r"[^\n]+", text):
        if not line.group().strip():
            blank_seen = True
            continue
        if out and (blank_seen or text.count("\n", out[-1].end, line.start()) > 1):
            paragraph += 1
        blank_seen = False
        for a, b in _line_sentences(text, line.start(), line.end()):
            seg = text[a:b]
            stripped = seg.strip()
            if stripped:
                lead = len(seg) - len(seg.lstrip())
                out.append(_Sentence(a + lead, a + lead + len(stripped), paragraph))
    return out


def _cut_long(text: str, sentence: _Sentence, max_chars: int) -> list[_Sentence]:
    """Cut a sentence longer than max_chars into pieces at whitespace (or hard, for a huge word)."""
    pieces: list[_Sentence] = []
    start = sentence.start
    while sentence.end - start > max_chars:
        cut = text.rfind(" ", start + 1, start + max_chars + 1)
        if cut <= start:
            cut = start + max_chars
        pieces.append(_Sentence(start, cut, sentence.paragraph))
        start = cut
        while start < sentence.end and text[start].isspace():
            start += 1
    if start < sentence.end:
        pieces.append(_Sentence(start, sentence.end, sentence.paragraph))
    return pieces


def chunk_text(text: str, source: str, policy: ChunkPolicy | None = None) -> list[Chunk]:
    """Cut ``text`` into chunks of whole sentences, numbered from 0, with offsets into ``text``."""
    policy = policy or ChunkPolicy()
    units: list[_Sentence] = []
    for s in _sentences(text):
        units.extend(_cut_long(text, s, policy.max_chars) if s.end - s.start > policy.max_chars else [s])

    groups: list[list[_Sentence]] = []
    current: list[_Sentence] = []
    fresh = 0  # sentences in `current` that are not overlap from the previous chunk
    for unit in units:
        new_paragraph = bool(current) and unit.paragraph != current[-1].paragraph
        if new_paragraph and current[-1].end - current[0].start >= policy.min_chars:
            if fresh:
                groups.append(current)
            current, fresh = [], 0
        elif current and unit.end - current[0].start > policy.max_chars:
            if fresh:
                groups.append(current)
            keep = current[len(current) - policy.overlap :] if policy.overlap else []
            # Drop overlap sentences until the new sentence fits, and never carry over the whole chunk.
            keep = keep[1:] if len(keep) == len(current) else keep
            while keep and unit.end - keep[0].start > policy.max_chars:
                keep = keep[1:]
            current, fresh = list(keep), 0
        current.append(unit)
        fresh += 1
    if current and fresh:
        groups.append(current)

    return [
        Chunk(source, number, group[0].start, group[-1].end, text[group[0].start : group[-1].end])
        for number, group in enumerate(groups)
    ]

"""The lexical side of hybrid retrieval: German analysis (stopwords, Snowball stemming) and BM25.

German glues nouns together ("Körperlänge", "Beobachtungsgebiete"), so a query word often appears in the text
only as part of a compound. :meth:`LexicalIndex.expand` matches a query term against the corpus vocabulary in
both directions (the term is the head or the modifier of a longer word, or a longer query word contains a corpus
word) and gives such matches a lower weight than exact ones.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

COMPOUND_WEIGHT = 0.6
"""Weight of a compound (part-of-word) match relative to an exact term match."""
MIN_PART = 4
"""Shortest stem that may match as part of a compound."""
MIN_REST = 3
"""Shortest remainder of a compound besides the matched part (shorter ones are inflection, not compounds)."""

QUESTION_STOPWORDS: frozenset[str] = frozenset(
    """
    wozu wovon woran worauf woraus womit wodurch worüber wofür worin wohin weshalb wieso welch ehesten besten
    eigentlich genau bitte gibt gab viel viele vielen wieviel wieviele
    """.split()  # noqa: SIM905 - a word list reads better than a list literal
)
"""Question words and filler that the generic stopword list lacks; they carry no topic."""

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from stop_words import get_stop_words

    return frozenset(get_stop_words("de")) | frozenset(get_stop_words("en")) | QUESTION_STOPWORDS


@functools.lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("german")


def analyze(text: str) -> list[str]:
    """Lower-cased, stopword-free, stemmed word tokens of ``text`` (hyphenated words become several tokens)."""
    stop = _stopwords()
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in stop]
    return list(_stemmer().stemWords(words))


def _idf(df: int, n: int) -> float:
    # The Lucene form, positive even for terms in most documents. An unseen term weighs like a term seen
    # once: it is at least as specific, but an unknown word must not outweigh all the known ones.
    df = max(df, 1)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _is_compound_part(part: str, word: str) -> bool:
    if len(part) < MIN_PART or len(word) <= len(part):
        return False
    rest = len(word) - len(part)
    if word.startswith(part):
        # "barcelona" in "barcelonas" (genitive), "beobacht" in "beobachtungsgebiet" (modifier)
        return rest >= MIN_REST or word[len(part) :] == "s"
    return word.endswith(part) and rest >= MIN_REST  # "lang" in "korperlang" (head)


class LexicalIndex:
    """BM25 (``rank_bm25.BM25Okapi``) over analysed chunk texts, plus absolute term-coverage evidence."""

    def __init__(self, texts: Sequence[str]):
        from rank_bm25 import BM25Okapi

        self.docs: list[list[str]] = [analyze(t) for t in texts]
        self.size = len(self.docs)
        self.df: Counter[str] = Counter(term for doc in self.docs for term in set(doc))
        self.doc_sets: list[frozenset[str]] = [frozenset(doc) for doc in self.docs]
        # BM25Okapi divides by the corpus size; an empty corpus gets no BM25 object at all.
        self._bm25 = BM25Okapi(self.docs) if self.size and any(self.docs) else None

    def expand(self, term: str) -> dict[str, float]:
        """Corpus terms that match ``term``: itself (weight 1) and compound matches (:data:`COMPOUND_WEIGHT`)."""
        out: dict[str, float] = {}
        if term in self.df:
            out[term] = 1.0
        # Snowball keeps the verb ending -t ("ernährt" -> "ernahrt"); its root still finds "Ernährungs...".
        parts = [term, term[:-1]] if len(term) >= 6 and term.endswith("t") else [term]
        for word in self.df:
            if word != term and any(_is_compound_part(p, word) or _is_compound_part(word, p) for p in parts):
                out[word] = COMPOUND_WEIGHT
        return out

    def query_terms(self, query: str) -> list[tuple[str, float, dict[str, float]]]:
        """Each distinct analysed query term with its idf and its corpus matches."""
        seen: dict[str, None] = dict.fromkeys(analyze(query))
        return [(t, _idf(self.df.get(t, 0), self.size), self.expand(t)) for t in seen]

    def score(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 score and term coverage in [0, 1] of every chunk for ``query``.

        Coverage is the idf-weighted share of the query's terms that occur in the chunk (compound matches count
        :data:`COMPOUND_WEIGHT`); unlike BM25 it is comparable across queries, so it can back a threshold.
        """
        bm25 = np.zeros(self.size, dtype=np.float64)
        coverage = np.zeros(self.size, dtype=np.float64)
        terms = self.query_terms(query)
        total_idf = sum(idf for _, idf, _ in terms)
        if not terms or self._bm25 is None or total_idf <= 0:
            return bm25, coverage
        for _, idf, matches in terms:
            best = np.zeros(self.size, dtype=np.float64)
            for word, weight in matches.items():
                bm25 += weight * np.asarray(self._bm25.get_scores([word]), dtype=np.float64)
                present = np.fromiter((word in s for s in self.doc_sets), dtype=bool, count=self.size)
                best = np.maximum(best, weight * present)
            coverage += idf * best
        return bm25, coverage / total_idf

"""Context answers: the retrieved chunk an answer must carry, and whether it does. Pure: retrieval's analyzer and
sentence splitter are passed in.

A question answered from the chunks needs the best chunk's source (its document's name) and at least
:data:`MIN_CONTEXT_FACTS` words of its key sentence beyond the question's: an answer built from another chunk does
not address the question (issue 30: a question about one place was answered with a chunk about another).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.text.places import tokens, without_genitive_s

Analyze = Callable[[str], list[str]]
"""Retrieval's analyzer: a text's stemmed words without stop words."""
CONTEXT_MIN_SCORE = 0.75
"""The best chunk's retrieval score from which a question tools were run for still counts as a context question
(a call that ran is evidence against the context; where nothing ran, the chunk's words decide alone)."""
MIN_CONTEXT_FACTS = 2
"""How many of the key sentence's words (beyond the question's) a context answer must carry."""
COMPOUND_MIN_CHARS = 4
"""A question term this long also matches a text term that contains it (German compounds: "lang" in "korperlang")."""
COMPOUND_MODIFIER_WEIGHT = 0.5
"""What a term counts inside a compound but not at its end: a compound's head is its last part ("Körperlänge" is a
length, "langgestreckt" is none; measured on the travel bench)."""
_FACT_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])")


@dataclass(frozen=True)
class KeyFacts:
    """What a context answer must carry: the best chunk's key sentences and their words beyond the question's."""

    source: str
    """The chunk's document ("notes.txt" of "notes.txt#3")."""
    sentences: tuple[str, ...]
    terms: tuple[str, ...]
    """Analysed words (and numbers) that the question does not hold, of the key sentences and of those that match
    the question as well but for the subject."""
    words: tuple[str, ...]
    """The same words as written, for people."""


def _number_term(text: str) -> str:
    return "#" + text.replace(",", ".")


def shared_terms(asked: set[str], terms: Iterable[str]) -> float:
    """How many ``asked`` terms occur in ``terms``: whole or as a compound's end 1, elsewhere in a compound
    :data:`COMPOUND_MODIFIER_WEIGHT`."""
    present, score = set(terms), 0.0
    for term in asked:
        inside = [word for word in present if term in word] if len(term) >= COMPOUND_MIN_CHARS else []
        if term in present or any(word.endswith(term) for word in inside):
            score += 1
        elif inside:
            score += COMPOUND_MODIFIER_WEIGHT
    return score


def subject_terms(hit: Mapping[str, Any], *, analyze: Analyze) -> set[str]:
    """The analysed words of a hit's document name ("notes.txt#3" → {"notes"}): what all its chunks are about."""
    return set(analyze(str(hit.get("source", "")).split("#", 1)[0].rsplit(".", 1)[0]))


def key_facts(
    question: str, hit: Mapping[str, Any], *, analyze: Analyze, split_sentences: Callable[[str], list[tuple[int, int]]]
) -> KeyFacts:
    """The key sentence(s) of a chunk: those sharing the most analysed words with the question (the first when none
    shares any); words of the document's name (its subject) only break ties. The facts an answer may carry are the
    words of every sentence that shares as many of the question's words besides the subject: the tie-break picks
    what the prompt and the fallback quote, not what the question asks (measured with the 1.5B model on the demo
    question, BENCHMARKS.md §14: an answer from the chunk's second sentence was rejected)."""
    text = str(hit.get("text", ""))
    asked = set(analyze(question))
    subject = subject_terms(hit, analyze=analyze)
    sentences = [text[a:b] for a, b in split_sentences(text) or [(0, len(text))]]
    scores = [(shared_terms(asked - subject, terms), shared_terms(asked, terms)) for terms in map(analyze, sentences)]
    best = max(scores)
    chosen = tuple(s for s, score in zip(sentences, scores, strict=True) if score == best) if best[1] else sentences[:1]
    matching = [s for s, score in zip(sentences, scores, strict=True) if best[0] and score[0] == best[0]]
    terms: dict[str, str] = {}
    for sentence in dict.fromkeys([*chosen, *matching]):
        for word in [match.group() for match in tokens(sentence)]:
            for term in analyze(word):
                if term not in asked and term not in subject and len(term) > 2:
                    terms.setdefault(term, word)
        for number in _FACT_NUMBER.findall(sentence):  # numbers are facts too ("6,4 bis 8,1 kg")
            if _number_term(number) not in asked:
                terms.setdefault(_number_term(number), number)
    return KeyFacts(str(hit.get("source", "")).split("#", 1)[0], chosen, tuple(terms), tuple(terms.values()))


def passages_on(question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Analyze) -> list[Mapping[str, Any]]:
    """The hits about what ``question`` asks: those holding one of its analysed words besides their document's name
    (whole or as a compound's end, :func:`shared_terms`). A chunk sharing only the name is about the subject, not
    about the question (measured on the packaged corpus, 0.5B model: a question about what an animal eats retrieved
    a chunk on its territory, and the territory's area became both arguments of an addition)."""
    asked = set(analyze(question))
    return [
        hit
        for hit in hits
        if shared_terms(asked - subject_terms(hit, analyze=analyze), analyze(str(hit.get("text", "")))) > 0
    ]


def best_context_hit(question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Analyze) -> Mapping[str, Any]:
    """The chunk a context answer must carry: the hit sharing the most analysed words with the question (its
    document's name does not count: every chunk of it is about that), the retrieval order breaking ties."""
    asked = set(analyze(question))
    overlaps = [shared_terms(asked - subject_terms(h, analyze=analyze), analyze(str(h.get("text", "")))) for h in hits]
    return hits[max(range(len(hits)), key=lambda index: (overlaps[index], -index))]


def context_answers(
    question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Analyze, min_score: float = CONTEXT_MIN_SCORE
) -> bool:
    """Whether a retrieved chunk answers ``question`` by itself: the best retrieval score is at least ``min_score``
    (0 where nothing ran: see :data:`CONTEXT_MIN_SCORE`), and the chunk an answer must carry
    (:func:`best_context_hit`) holds every word of the question (stemmed, without question and stop words) in its
    text, whole or as a compound's end (:func:`shared_terms`), or in its document's name. A chunk need not repeat
    what its document is about (it names its subject by a part of the name, or not at all), and the retriever may
    rank another chunk of the same document first (measured on the travel set, BENCHMARKS.md §12)."""
    asked = set(analyze(question))
    if not (hits and asked) or float(hits[0].get("score", 0)) < min_score:
        return False
    best = best_context_hit(question, hits, analyze=analyze)
    subject = subject_terms(best, analyze=analyze)
    return shared_terms(asked - subject, analyze(str(best["text"]))) >= len(asked - subject)


MIN_SHARED_AT_LAST = 2
"""Words of the question a chunk must hold (its document's name counting) before planning that failed gives way to
it (:func:`context_nearly_answers`): the subject alone is not enough."""


def context_nearly_answers(question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Analyze) -> bool:
    """Whether the chunk an answer must carry (:func:`best_context_hit`) holds every word of ``question`` but one,
    and at least :data:`MIN_SHARED_AT_LAST` (its document's name counting, compounds as in :func:`shared_terms`).
    Looser than :func:`context_answers`: for a question whose planning failed and where nothing ran, a chunk may
    say what it asks in other words (a synonym for one of the question's words; BENCHMARKS.md §12, session 8); the
    model writes the answer from it and the answer check judges it."""
    asked = set(analyze(question))
    if not (hits and asked):
        return False
    best = best_context_hit(question, hits, analyze=analyze)
    subject = subject_terms(best, analyze=analyze)
    shared = shared_terms(asked - subject, analyze(str(best["text"]))) + len(asked & subject)
    return shared >= max(MIN_SHARED_AT_LAST, len(asked) - 1)


def is_context_question(
    question: str, hits: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]], *, analyze: Analyze
) -> bool:
    """Whether the answer must come from the best chunk: no tool ran, or the chunk answers the question by itself
    and no successful call worked on a word of it (a small planner sometimes runs a stray ``add(1, 1)``)."""
    if not hits:
        return False
    if not calls:
        return True
    asked = set(analyze(question))
    return context_answers(question, hits, analyze=analyze) and not any(
        call.get("status") == "ok" and asked & set(analyze(f"{call.get('args')} {call.get('result')}"))
        for call in calls
    )


def carries_facts(answer: str, facts: KeyFacts, *, analyze: Analyze) -> bool:
    """Whether the answer holds at least :data:`MIN_CONTEXT_FACTS` of the key words (all, when there are fewer)."""
    said = set(analyze(answer))
    held = said | {base for term in said if (base := without_genitive_s(term))}  # as the gazetteer reads names
    held |= {_number_term(n) for n in _FACT_NUMBER.findall(answer)}
    return sum(term in held for term in facts.terms) >= min(MIN_CONTEXT_FACTS, len(facts.terms))


def cites(answer: str, source: str) -> bool:
    """Whether the answer names the source document ("Razepato.txt", with or without a chunk number)."""
    return bool(source) and source.casefold() in answer.casefold()

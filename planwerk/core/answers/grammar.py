"""The grammar of an answer by reference: free text, placeholders of existing slots, and only known numbers.

An answer decoded under :func:`answer_grammar` is text without digits and without braces, in which a placeholder
``{name}`` / ``{name|formatter}`` can only name a slot of this run (:mod:`.slots`) with a formatter its kind takes,
and a number can only be one the question, the conversation or the retrieved context holds, written as it stands
there (:func:`known_numbers`). A number must be followed by text (a digit-free character), so two known numbers
cannot be glued into a new one ("5" and "2026" into "52026"). Every number, date and time from a result therefore
reaches the answer through a placeholder, and is written by :mod:`.render`, not copied by the model.

The text is EBNF in the dialect xgrammar and llama.cpp's GBNF read (as :mod:`planwerk.core.expression_grammar`);
each character of free text is one item, so the grammar is unambiguous. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from planwerk.core.answers.render import FORMATTERS_BY_KIND
from planwerk.core.answers.slots import Slot

_KNOWN_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
"""A number as a text writes it: "2026", "10.5", "10,5", "16:00"; "2026-12-01" is three numbers and two dashes."""

_MARKS = r" \t\n\r.,:;!?()\"'*/+=<>%&-"
"""Spaces and punctuation, inside an EBNF character class: what an answer may not consist of alone."""

MAX_KNOWN_NUMBERS = 400
"""Most literal numbers a grammar admits (a long context is cut here, its first numbers kept)."""


def known_numbers(texts: Iterable[str], limit: int = MAX_KNOWN_NUMBERS) -> tuple[str, ...]:
    """The numbers ``texts`` hold, as written, each once, in order of first appearance."""
    found: dict[str, None] = {}
    for text in texts:
        for match in _KNOWN_NUMBER.finditer(text):
            found[match[0]] = None
            if len(found) >= limit:
                return tuple(found)
    return tuple(found)


def _literal(text: str) -> str:
    """``text`` as a quoted EBNF literal (JSON's string escapes are the dialect's)."""
    return json.dumps(text, ensure_ascii=False)


def answer_grammar(slots: Mapping[str, Slot], numbers: Iterable[str] = (), *, result_alone: bool = False) -> str:
    """EBNF whose root is an answer: digit-free text, placeholders of ``slots`` and the literal ``numbers``, with
    at least one word character; ``result_alone``: a result's number placeholder may also stand alone, where the
    answer is the last call's result (a calculation: "{calc.result}"). Elsewhere the answer check rejects a bare
    value as saying nothing, so the grammar does not admit one (measured on the travel set with the 0.5B model,
    BENCHMARKS.md §12: regenerated answers that were one value). A known number alone never answers. A
    number (a literal or a number's placeholder) is followed by a character that is no digit, no brace and no
    separator, or by a separator (``.,:``) and such a character, or ends the answer (after a separator or not): two
    numbers cannot be glued into a new one, neither directly ("5" "2026") nor through a separator ("1" "," "1" is
    no "1,1"; measured: the 0.5B model built "1,1 °C" so)."""
    rules: list[str] = []
    items = ["char"]
    values: list[str] = []
    number_names: list[str] = []
    if slots:
        by_kind: dict[tuple[str, ...], list[str]] = {}
        number_names = [slot.name for slot in slots.values() if slot.kind == "number"]
        for slot in slots.values():
            if slot.kind != "number":
                by_kind.setdefault(FORMATTERS_BY_KIND.get(slot.kind, ()), []).append(slot.name)
        alternatives = []
        for index, (formatters, names) in enumerate(sorted(by_kind.items())):
            rule = f"names-{index}"
            rules.append(f"{rule} ::= " + " | ".join(_literal(name) for name in names))
            if formatters:
                options = " | ".join(_literal("|" + formatter) for formatter in formatters)
                alternatives.append(f"{rule} ({options})?")
            else:
                alternatives.append(rule)
        if alternatives:
            rules.insert(0, 'slot ::= "{" (' + " | ".join(alternatives) + ') "}"')
            items.append("slot")
        if number_names:
            rules.append("number-names ::= " + " | ".join(_literal(name) for name in number_names))
            rules.append('number-slot ::= "{" number-names ("|raw")? "}"')
            values.append("number-slot")
    literals = sorted(set(numbers), key=lambda n: (-len(n), n))
    if literals:
        # Longest first: "2026" is one literal, not "20" followed by a digit (which "follow" would refuse anyway).
        rules.append("number ::= " + " | ".join(_literal(n) for n in literals))
        values.append("number")
    # At least one word character (no digit, brace, space or punctuation): a number, a placeholder or punctuation
    # alone says nothing (measured: the 0.5B model's regenerated demo answer was "10", a digit of the context).
    # Everything before the first word character is a mark, a placeholder or a number, so each answer parses once.
    lead = ["mark", *items[1:]]
    tail = ""
    if values:
        rules.append("value ::= " + " | ".join(values))
        rules.append("follow ::= [^{}0-9.,:] | [.,:] char")
        items.append("value follow")
        lead.append("value follow")
        tail = " (value [.,:]?)?"
    root = f"root ::= lead* word item*{tail}"
    if number_names and result_alone:
        root += " | number-slot [.,:]?"  # a result's number alone answers ("{calc.result}")
    rules.append("lead ::= " + " | ".join(lead))
    rules.append(f"mark ::= [{_MARKS}]")
    rules.append(f"word ::= [^{{}}0-9{_MARKS}]")
    return "\n".join([root, "item ::= " + " | ".join(items), *rules, "char ::= [^{}0-9]"]) + "\n"


_NOT_LETTERS = _MARKS.removesuffix("-") + r"0-9{}|°€$£#@_~^`\[\]-"  # "-" last: not a range
"""What is no letter of a word, inside an EBNF character class: digits, spaces, punctuation and symbols."""


def prose_grammar() -> str:
    """EBNF of an answer in plain text: any text with two letters in a row somewhere (a word). The answer check
    rejects an answer without one as saying nothing, unless the answer is the last result; a plain answer decoded
    under this grammar cannot be one (measured on the travel set with the 0.5B model, BENCHMARKS.md §12: 14 of 16
    regenerated answers were a bare number). Letters stand anywhere, so "16:00 in Berlin" and a list are answers."""
    return (
        "\n".join(
            [
                "root ::= other* word word any*",
                "other ::= nonword | word nonword",
                "any ::= word | nonword",
                f"word ::= [^{_NOT_LETTERS}]",
                f"nonword ::= [{_NOT_LETTERS}]",
            ]
        )
        + "\n"
    )

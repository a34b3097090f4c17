"""Grammars for llama.cpp's constrained sampling (GBNF): from a JSON schema, and from planwerk's EBNF grammars.

- A JSON schema goes through llama.cpp's own converter (``llama_cpp.llama_grammar.json_schema_to_gbnf``), with one
  repair: the converter takes any key ``$ref`` as a schema reference, also where it is a property *name*, as in the
  plan schema's ``{"$ref": "<id>.<field>"}`` value objects (it fails with ``TypeError: unhashable type``). Property
  names starting with ``$`` are renamed to placeholders before the conversion and put back into the grammar's
  string literals after it (rule names keep the placeholder, which is a valid rule name). And one more: for a
  regex ``pattern`` the converter writes escapes such as ``\\.`` that llama.cpp's parser refuses ("unknown
  escape"); they become the plain character. And the converter (llama-cpp-python's port) misreads patterns
  silently: ``\\d``, ``\\w``, ``\\s`` as the letters d, w, s (a date pattern ``^\\d{4}-\\d{2}-\\d{2}$`` admitted
  only the literal "dddd-d-d-d-d", so no plan could carry a date), and a top-level ``a|b`` as an alternative of
  the whole rule, quotes included; it refuses unanchored patterns. So each pattern is first written in the dialect
  it reads (:func:`portable_pattern`), and one it still cannot read is left out: the value is then a plain string,
  which the plan check judges.
- planwerk's EBNF grammars (:mod:`planwerk.core.expression_grammar`, :mod:`planwerk.core.answers.grammar`) are
  written in the dialect xgrammar and GBNF share, so they pass unchanged; :func:`ebnf_gbnf` only checks the one
  thing that differs (GBNF rule names are letters, digits and dashes).

Whether llama.cpp accepts a grammar is checked where a vocabulary exists (:mod:`planwerk.models.llamacpp`): its
parser reports an error and returns no sampler, which must never reach the sampler chain.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from planwerk.models.llama_cpp_lib import import_llama_cpp

log = logging.getLogger(__name__)

_PLACEHOLDER = "pwdollar{index}x"
_RULE_NAME = re.compile(r"^\s*([^\s:]+)\s*::=", re.MULTILINE)
_GBNF_RULE_NAME = re.compile(r"^[A-Za-z0-9-]+$")
_UNKNOWN_ESCAPE = re.compile(r"\\(.)")
_GBNF_ESCAPES = frozenset('xuUtrn\\"[]')
_DOLLAR_NAME = re.compile(r"^\$[A-Za-z0-9_]+$")
_SHORTHAND_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_", "s": " \\t\\n\\r"}
"""What ``\\d``, ``\\w`` and ``\\s`` stand for in a bracket class (ASCII: what a JSON schema's pattern means for the
values planwerk plans)."""
_LITERAL_ESCAPES = frozenset("ntrxu")
"""Escapes of letters that mean the same in a regex and in GBNF (a character); any other letter or digit after a
backslash means something the converter does not know and reads as that letter."""


class GrammarConversionError(ValueError):
    """A schema or grammar that llama.cpp's GBNF cannot express (what was wrong, and what is expected)."""


def _rename_dollar_properties(node: Any, names: dict[str, str]) -> Any:
    """``node`` with every property name that starts with ``$`` replaced by a placeholder (recorded in ``names``:
    placeholder → original), in ``properties`` and the ``required`` lists beside them."""
    if isinstance(node, list):
        return [_rename_dollar_properties(item, names) for item in node]
    if not isinstance(node, Mapping):
        return node
    renamed = {value: key for key, value in names.items()}

    def placeholder(name: str) -> str:
        if not name.startswith("$"):
            return name
        if not _DOLLAR_NAME.match(name):
            raise GrammarConversionError(f"property name {name!r}: expected '$' and letters, digits or '_' after it")
        if name not in renamed:
            key = _PLACEHOLDER.format(index=len(names))
            names[key] = name
            renamed[name] = key
        return renamed[name]

    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {placeholder(name): _rename_dollar_properties(sub, names) for name, sub in value.items()}
        elif key == "required" and isinstance(value, list):
            out[key] = [placeholder(name) if isinstance(name, str) else name for name in value]
        else:
            out[key] = _rename_dollar_properties(value, names)
    return out


def portable_pattern(pattern: str) -> str | None:
    """``pattern`` in the regex dialect llama.cpp's converter reads, meaning the same: shorthand classes (``\\d``,
    ``\\w``, ``\\s`` and their negations) as bracket classes, ``(?:`` as ``(``, anchored at both ends (a JSON
    schema's pattern matches anywhere unless anchored; the converter takes only ``^…$``, and reads a top-level
    ``a|b`` as an alternative of the whole rule, quotes included), so the body is grouped where that matters.
    ``None`` when a shorthand stands where a bracket class cannot hold it (a negated one inside brackets:
    ``[\\D.]``), or for an escape the converter would read as a letter (``\\b``, ``\\1``, ``\\p{L}``)."""
    out: list[str] = []
    in_class = negated = alternation = False
    depth = class_start = index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            code = pattern[index + 1]
            index += 2
            chars = _SHORTHAND_CLASSES.get(code.lower())
            if chars is None and code.isalnum() and code not in _LITERAL_ESCAPES:
                return None  # a word boundary, a back-reference, \\p{…}: the converter would read a letter
            if chars is None:
                out.append(char + code)
            elif in_class:
                if code.isupper():  # "[\\D…]": a class of everything but digits, plus more; brackets cannot say it
                    return None
                out.append(chars)
            else:
                out.append(f"[^{chars}]" if code.isupper() else f"[{chars}]")
            continue
        if in_class:
            if char == "]" and index > class_start + 1 + negated:  # "[]…]" and "[^]…]" hold a "]"
                in_class = False
        elif char == "[":
            in_class, class_start = True, index
            negated = pattern[index + 1 : index + 2] == "^"
        elif char == "(":
            depth += 1
            if pattern.startswith("?:", index + 1):  # a group that captures nothing matches the same as one that does
                index += 2
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            alternation = True
        out.append(char)
        index += 1
    body = "".join(out)
    starts = body.startswith("^")
    ends = body.endswith("$") and not body.endswith("\\$")
    body = body[1 if starts else 0 : len(body) - 1 if ends else len(body)]
    if starts and ends and not alternation:
        return f"^{body}$"
    return f"^{'' if starts else '.*'}({body}){'' if ends else '.*'}$"


def portable_schema(node: Any, convert: Callable[[str], Any] | None = None) -> Any:
    """``node`` (a JSON schema) with every string ``pattern`` made :func:`portable_pattern`, and dropped where it
    cannot be or where ``convert`` (a grammar converter, given a JSON schema's text) still refuses it (a lookahead):
    the value is then a plain string, which the plan check judges; one tool's odd pattern must not cost every plan
    its grammar. A model server converts the schema with a converter of its own (llama-cpp-python's server, the
    same one): it gets the portable schema too. Each distinct pattern is rewritten once (a plan schema repeats the
    reference pattern for every argument of every tool)."""
    memo: dict[str, str | None] = {}

    def readable(pattern: str) -> str | None:
        if pattern not in memo:
            portable = portable_pattern(pattern)
            try:
                if portable is not None and convert is not None:
                    convert(json.dumps({"type": "string", "pattern": portable}))
            except Exception:  # the converter raises assertions with its own message
                portable = None
            if portable is None:
                log.info("the pattern %r is left out of the grammar: the grammar converter cannot read it", pattern)
            memo[pattern] = portable
        return memo[pattern]

    def walk(item: Any) -> Any:
        if isinstance(item, list):
            return [walk(entry) for entry in item]
        if not isinstance(item, Mapping):
            return item
        out: dict[str, Any] = {}
        for key, value in item.items():
            if key == "pattern" and isinstance(value, str):
                if (portable := readable(value)) is not None:
                    out[key] = portable
            else:
                out[key] = walk(value)
        return out

    return walk(node)


def _unescape(match: re.Match[str]) -> str:
    """An escape GBNF's parser knows stays; another (``\\.``, ``\\$``, which the converter writes for regex
    patterns) becomes its plain character, which is what the pattern meant (the parser refuses it otherwise)."""
    return match[0] if match[1] in _GBNF_ESCAPES else match[1]


def json_schema_gbnf(schema: Mapping[str, Any]) -> str:
    """The GBNF grammar (root rule ``root``) of compact JSON matching ``schema``; raises
    :class:`GrammarConversionError` for a schema llama.cpp's converter does not take."""
    # The schema's own problems first: they need no llama.cpp, and are refused the same without it.
    if _PLACEHOLDER.split("{")[0] in json.dumps(schema, ensure_ascii=False):
        raise GrammarConversionError("the schema already holds a placeholder name; rename properties 'pwdollar…x'")
    names: dict[str, str] = {}
    import_llama_cpp()  # before llama_cpp's first import: the OpenMP policy must be set before the library loads
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    text = json.dumps(
        _rename_dollar_properties(portable_schema(schema, json_schema_to_gbnf), names), ensure_ascii=False
    )

    try:
        grammar = json_schema_to_gbnf(text)
    except Exception as exc:  # the converter raises assertions, KeyError, TypeError with its own message
        raise GrammarConversionError(
            f"llama.cpp cannot convert this JSON schema to a grammar: {type(exc).__name__}: {exc}; expected the "
            "keywords its converter supports (type, properties, required, items, enum, const, anyOf, oneOf, $defs)"
        ) from exc
    grammar = _UNKNOWN_ESCAPE.sub(_unescape, grammar)
    for placeholder, original in names.items():
        # Only inside string literals: the converter writes a property name as "\"name\"" (JSON-quoted, then
        # GBNF-quoted); the same text in rule names stays, since "$" is no rule-name character.
        grammar = grammar.replace(f'\\"{placeholder}\\"', f'\\"{original}\\"')
    return grammar


def ebnf_gbnf(ebnf: str) -> str:
    """planwerk's EBNF text as GBNF (the same text: the dialects agree on what planwerk writes); raises
    :class:`GrammarConversionError` when a rule name is not one GBNF reads or no ``root`` rule is defined."""
    names = _RULE_NAME.findall(ebnf)
    if "root" not in names:
        raise GrammarConversionError("the grammar defines no 'root' rule; expected 'root ::= …'")
    bad = sorted({name for name in names if not _GBNF_RULE_NAME.match(name)})
    if bad:
        raise GrammarConversionError(
            f"rule names {bad} are not GBNF rule names; expected letters, digits and dashes only"
        )
    return ebnf

"""Grammar conversion for llama.cpp (GBNF), the state cache's choice of a cached prefix, and the backend choice:
pure, no model."""

from __future__ import annotations

import json

import pytest

from benchmarks.model import math_specs
from planwerk.core.expression_grammar import expression_grammar
from planwerk.models.gbnf import GrammarConversionError, ebnf_gbnf, json_schema_gbnf, portable_pattern
from planwerk.models.llama_cpp_lib import llama_cpp_available
from planwerk.models.llamacpp import CachedState, StateCache
from planwerk.models.specs import choose_local_backend

needs_llama_cpp = pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed")

REF_SCHEMA = {
    "type": "object",
    "properties": {
        "lat": {
            "anyOf": [
                {"type": "number"},
                {"type": "object", "properties": {"$ref": {"type": "string"}}, "required": ["$ref"]},
            ]
        }
    },
    "required": ["lat"],
}


@needs_llama_cpp
def test_a_property_named_ref_becomes_a_literal_and_not_a_schema_reference() -> None:
    grammar = json_schema_gbnf(REF_SCHEMA)
    assert '"\\"$ref\\""' in grammar  # the key as the model must write it
    assert '"\\"pwdollar' not in grammar  # no placeholder left in a literal
    assert grammar.count("::=") >= 3


@needs_llama_cpp
def test_a_schema_the_converter_refuses_gets_a_clear_error() -> None:
    with pytest.raises(GrammarConversionError, match="cannot convert"):
        json_schema_gbnf({"type": "frobnicate"})


def test_a_dollar_property_with_odd_characters_is_refused() -> None:
    with pytest.raises(GrammarConversionError, match="property name"):
        json_schema_gbnf({"type": "object", "properties": {"$a b": {"type": "string"}}})


def test_planwerk_ebnf_passes_as_gbnf_unchanged() -> None:
    grammar = expression_grammar(math_specs())
    assert ebnf_gbnf(grammar) == grammar


@pytest.mark.parametrize(
    ("text", "message"),
    [("expr ::= [0-9]+\n", "no 'root' rule"), ('root ::= my_rule\nmy_rule ::= "a"\n', "not GBNF rule names")],
)
def test_ebnf_that_gbnf_cannot_read_is_refused(text: str, message: str) -> None:
    with pytest.raises(GrammarConversionError, match=message):
        ebnf_gbnf(text)


def test_the_state_cache_finds_the_longest_shared_prefix_and_stays_bounded() -> None:
    cache = StateCache(max_entries=2, max_bytes=10)
    cache.put(CachedState((1, 2, 3), b"abc"))
    cache.put(CachedState((1, 2, 3, 4, 5), b"abcde"))
    state, length = cache.best([1, 2, 3, 4, 9])
    assert state is not None and state.tokens == (1, 2, 3, 4, 5) and length == 4
    assert cache.holds([1, 2]) and not cache.holds([2])
    cache.put(CachedState((7,), b"x" * 8))  # over 10 bytes with any other: the older entries go
    assert cache.stats.entries == 1 and cache.best([7])[1] == 1


@pytest.mark.parametrize(
    ("setting", "device", "installed", "expected"),
    [
        ("auto", "cpu", True, "llama.cpp"),
        ("auto", "cuda", True, "transformers"),
        ("auto", "cpu", False, "transformers"),
        ("transformers", "cpu", True, "transformers"),
        ("llama.cpp", "cpu", True, "llama.cpp"),
    ],
)
def test_the_backend_choice(setting: str, device: str, installed: bool, expected: str) -> None:
    assert choose_local_backend(setting, device=device, llama_cpp_installed=installed) == expected


def test_a_forced_backend_that_is_missing_or_unknown_is_refused() -> None:
    with pytest.raises(RuntimeError, match="35-llama-cpp-inprocess"):
        choose_local_backend("llama.cpp", device="cpu", llama_cpp_installed=False)
    with pytest.raises(ValueError, match=r"expected auto, llama\.cpp or transformers"):
        choose_local_backend("onnx", device="cpu", llama_cpp_installed=True)


@needs_llama_cpp
def test_escapes_that_llama_cpp_does_not_read_become_plain_characters() -> None:
    grammar = json_schema_gbnf({"type": "string", "pattern": "^\\$ref:[a-z]+(\\.[a-z]+)*$"})
    assert "\\." not in grammar and "\\$" not in grammar
    assert '"\\""' in grammar  # a quote inside a literal stays escaped


@pytest.mark.parametrize(
    ("pattern", "portable"),
    [
        ("^\\d{4}-\\d{2}-\\d{2}$", "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
        ("^[\\d.]+$", "^[0-9.]+$"),
        ("^[^\\d]+$", "^[^0-9]+$"),
        ("^\\S+@\\w+$", "^[^ \\t\\n\\r]+@[A-Za-z0-9_]+$"),
        ("^[]\\d]$", "^[]0-9]$"),  # a "]" first in brackets is a character, not the end
        ("^\\$ref:[a-z]+(\\.[a-z]+)*$", "^\\$ref:[a-z]+(\\.[a-z]+)*$"),  # other escapes stay
        ("^[\\D.]$", None),  # no bracket class says "not a digit, or a dot"
        ("[a-z]+", "^.*([a-z]+).*$"),  # a schema's pattern matches anywhere unless anchored
        ("^ab", "^(ab).*$"),
        ("^a|b$", "^(a|b)$"),  # the alternative is the pattern's, not the whole rule's
        ("^(a|b)c$", "^(a|b)c$"),
        ("^(?:ab)+$", "^(ab)+$"),
        ("^a\\$", "^(a\\$).*$"),  # an escaped dollar is a character, not the end
    ],
)
def test_shorthand_classes_become_bracket_classes(pattern: str, portable: str | None) -> None:
    assert portable_pattern(pattern) == portable


@needs_llama_cpp
def test_a_date_pattern_admits_digits_and_not_the_letter_d() -> None:
    # llama-cpp-python's converter reads \d as the letter d: the grammar admitted only "dddd-d-d-d-d".
    grammar = json_schema_gbnf({"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"})
    assert "[0-9]" in grammar
    assert "dd" not in grammar and "\\d" not in grammar


@needs_llama_cpp
@pytest.mark.parametrize("pattern", ["^[\\D.]+$", "^(?=a)[a-z]+$", "\\bword\\b"])
def test_a_pattern_the_converter_cannot_read_leaves_a_plain_string(pattern: str) -> None:
    # One tool's odd pattern (a lookahead, a word boundary) must not cost every plan its grammar.
    plain = json_schema_gbnf({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]})
    with_pattern = {"type": "object", "properties": {"x": {"type": "string", "pattern": pattern}}, "required": ["x"]}
    assert json_schema_gbnf(with_pattern) == plain


@needs_llama_cpp
def test_an_alternation_keeps_the_quotes_around_every_alternative() -> None:
    grammar = json_schema_gbnf({"type": "string", "pattern": "^a|b$"})
    assert '"\\"" ("a" | "b") "\\""' in grammar, grammar


@pytest.mark.parametrize("form", ["json_schema", "json_object_schema"])
def test_a_model_server_gets_the_schema_with_portable_patterns(form: str) -> None:
    # llama-cpp-python's server converts a response_format schema with the same converter as the library.
    from planwerk.models.endpoint import response_format_for

    schema = {"type": "object", "properties": {"day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}}}
    sent = json.dumps(response_format_for(schema, form))  # type: ignore[arg-type]
    assert "[0-9]{4}-[0-9]{2}-[0-9]{2}" in sent and "\\\\d" not in sent
    assert schema["properties"]["day"]["pattern"] == "^\\d{4}-\\d{2}-\\d{2}$"  # the caller's schema is unchanged

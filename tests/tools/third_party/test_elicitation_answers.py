"""What a person may answer to an elicitation, checked against the request's schema (server-everything's form,
copied from its source: a flat object of strings with formats, numbers with ranges, enums, multi-selects)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import ElicitResult

from planwerk.core.elicitation import ElicitationAnswer, ElicitationAnswerError, describe_form, parse_elicitation_answer
from planwerk.tools.client_features import MAX_ELICITATION_ASKS, ElicitationRequest, answer_by_interrupt

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your full, legal name"},
        "email": {"type": "string", "format": "email"},
        "birthdate": {"type": "string", "format": "date"},
        "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "friend": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
        "instruments": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["Guitar", "Piano"]},
            "default": ["Guitar"],
        },
    },
    "required": ["name"],
}
DEFAULTS = {"integer": 42, "friend": "Monica", "instruments": ["Guitar"]}


@pytest.mark.parametrize(
    "answer",
    [
        {"name": "Ada"},
        {"action": "accept", "content": {"name": "Ada"}},
        '{"name": "Ada"}',
        '{"action": "accept", "content": {"name": "Ada"}}',
    ],
)
def test_the_content_alone_or_the_mcp_form_is_accepted_with_defaults_filled_in(answer: Any) -> None:
    assert parse_elicitation_answer(answer, FORM) == ElicitationAnswer("accept", {"name": "Ada", **DEFAULTS})


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        ("decline", "decline"),
        (" Cancel ", "cancel"),
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
    ],
)
def test_decline_and_cancel_carry_no_content(answer: Any, action: str) -> None:
    assert parse_elicitation_answer(answer, FORM) == ElicitationAnswer(action)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"email": "ada@example.org"}, "answer: 'name' is a required property"),
        ({"name": "Ada", "email": "no address"}, "email: 'no address' is not a 'email'"),
        ({"name": "Ada", "birthdate": "31.12.1815"}, "birthdate: '31.12.1815' is not a 'date'"),
        ({"name": "Ada", "integer": 0}, "integer: 0 is less than the minimum of 1"),
        ({"name": "Ada", "integer": "7"}, "integer: '7' is not of type 'integer'"),
        ({"name": "Ada", "friend": "Joey"}, "friend: 'Joey' is not one of ['Monica', 'Rachel']"),
        ({"name": "Ada", "instruments": []}, "instruments: [] should be non-empty"),
        ({"name": "Ada", "nmae": "x"}, "unknown field(s) nmae"),
        ({"action": "maybe"}, "unknown action 'maybe'"),
        ({"action": "accept", "content": {"name": "Ada"}, "extra": 1}, "unknown key(s) extra beside action"),
        (["Ada"], "unusable answer ['Ada']"),
        ("{not json", "looks like JSON but does not parse"),
    ],
)
def test_an_answer_that_does_not_fit_names_the_problem_and_the_form(answer: Any, problem: str) -> None:
    with pytest.raises(ElicitationAnswerError) as caught:
        parse_elicitation_answer(answer, FORM)
    assert problem in str(caught.value)
    assert "name (string, required)" in str(caught.value)  # and what is expected


def test_a_one_field_form_takes_the_value_alone() -> None:
    form = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert parse_elicitation_answer("Barcelona", form) == ElicitationAnswer("accept", {"city": "Barcelona"})


def test_a_url_request_is_accepted_declined_or_cancelled_without_content() -> None:
    assert parse_elicitation_answer("accept", None) == ElicitationAnswer("accept")
    assert parse_elicitation_answer({"action": "decline"}, None) == ElicitationAnswer("decline")
    with pytest.raises(ElicitationAnswerError, match="this request has no form"):
        parse_elicitation_answer({"token": "x"}, None)


def test_the_form_is_described_in_one_line() -> None:
    assert describe_form(FORM).startswith("name (string, required), email (string, email), birthdate (string, date)")
    assert "friend (string, one of Monica/Rachel)" in describe_form(FORM)


def test_answers_are_asked_again_naming_the_problem_then_cancelled() -> None:
    request = ElicitationRequest(server="s", message="Who are you?", schema=FORM)
    asked: list[dict[str, Any]] = []
    answers = iter([{"name": ""}, {"name": "Ada", "integer": 500}, {"name": "Ada"}])

    def interrupt(payload: dict[str, Any]) -> Any:
        asked.append(payload)
        return next(answers)

    # "" is a string: accepted by the schema (it names no minLength); the first answer passes.
    assert answer_by_interrupt(request, "c", "t", interrupt) == ElicitResult(
        action="accept", content={"name": "", **DEFAULTS}
    )
    assert len(asked) == 1 and asked[0]["kind"] == "elicitation" and "error" not in asked[0]

    asked.clear()
    answers = iter([{"integer": 5}] * MAX_ELICITATION_ASKS)
    assert answer_by_interrupt(request, "c", "t", interrupt) == ElicitResult(action="cancel")
    assert len(asked) == MAX_ELICITATION_ASKS and "'name' is a required property" in asked[-1]["error"]

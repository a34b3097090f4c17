"""The runtime context as Studio sees it (its JSON schema) and as the server reads it (``run_context``)."""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

import pytest

from planwerk.graph.builder import build_graph
from planwerk.graph.context import Context, ProfileName
from planwerk.graph.deps import Deps
from planwerk.graph.run_context import run_context
from planwerk.profiles import PROFILES


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    """The context schema exactly as the LangGraph server builds it for ``assistants.get_schemas``."""
    found = build_graph(Deps()).get_context_jsonschema()
    assert found is not None
    return found


def test_every_context_field_has_a_description_in_the_schema(schema: dict[str, Any]) -> None:
    fields = [f.name for f in dataclasses.fields(Context)]
    assert list(schema["properties"]) == fields
    undocumented = [name for name, prop in schema["properties"].items() if not (prop.get("description") or "").strip()]
    assert undocumented == []


def test_the_profile_field_lists_the_known_profiles(schema: dict[str, Any]) -> None:
    profile = schema["properties"]["profile"]
    assert profile["default"] == "auto"
    assert {"enum": ["auto", "travel", "math", "generic", "generic-en"], "type": "string"} in profile["anyOf"]
    assert {"type": "string"} in profile["anyOf"]  # or the path of a profile file
    # The Literal is spelled out for the schema; it must name exactly the registered profiles and auto.
    assert set(get_args(ProfileName)) == {*PROFILES, "auto"}


def test_engine_policy_fields_have_defaults_and_are_validated() -> None:
    context = Context()
    assert context.tool_retry_attempts == 2 and context.approve_destructive is True
    assert run_context({"tool_retry_attempts": "1", "approve_destructive": "false"}) == Context(
        tool_retry_attempts=1, approve_destructive=False
    )
    for bad in ({"tool_retry_attempts": 0}, {"tool_retry_attempts": 1.5}, {"approve_destructive": "yes"}):
        with pytest.raises(ValueError):
            Context(**bad)
    with pytest.raises(ValueError, match=r"context\.approve_destructive"):
        run_context({"approve_destructive": "vielleicht"})
    with pytest.raises(ValueError, match="tool_retry_attempts must be a positive number"):
        run_context({"tool_retry_attempts": 0})

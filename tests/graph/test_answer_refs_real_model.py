"""The packaged 0.5B model answers by reference under the answer grammar, on a small in-process tool result.

Run it alone and under the heavy-work lock: ``flock /tmp/planwerk-heavy.lock .venv/bin/python -m pytest -q -m slow
tests/graph/test_answer_refs_real_model.py``.
"""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel, Field

from planwerk.core.answers.grammar import answer_grammar, known_numbers
from planwerk.core.answers.render import PLACEHOLDER, render_answer
from planwerk.core.answers.slots import collect_slots
from planwerk.models.specs import load_chat_model
from planwerk.prompts.answer_refs import build_reference_messages, reference_texts
from planwerk.prompts.texts import texts_for

pytestmark = pytest.mark.slow


class Distance(BaseModel):
    origin: str
    destination: str
    distance: float = Field(description="Road distance (km)")
    arrival: str


QUESTION = "Wie weit ist es von Girona nach Figueres, und wann komme ich an?"
RESULT = Distance(origin="Girona", destination="Figueres", distance=41.7, arrival="2026-11-27T16:45:00+01:00")
CALLS = [{"id": "route", "tool": "distance", "status": "ok", "args": {"a": "Girona", "b": "Figueres"},
          "result": RESULT.model_dump()}]  # fmt: skip


def test_the_default_model_writes_placeholders_and_no_stray_digit() -> None:
    slots = collect_slots(CALLS, {"distance": Distance.model_json_schema()})
    numbers = known_numbers([QUESTION])
    model = load_chat_model("default").with_plan_grammar(answer_grammar(slots, numbers))
    messages = build_reference_messages(
        persona="Du bist ein hilfreicher Assistent.",
        question=QUESTION,
        today=None,
        calls=CALLS,
        slots=slots,
        texts=texts_for("de"),
        language="de",
    )
    written = str(model.invoke(messages, max_new_tokens=120).content)
    used = [match[1] for match in PLACEHOLDER.finditer(written)]
    # Every placeholder names a slot, and outside them the answer holds no digit (the question has none).
    assert used and all(name in slots for name in used), written
    assert not re.search(r"\d", PLACEHOLDER.sub("", written)), written
    rendered = render_answer(written, slots, reference_texts("de").style).text
    assert "{" not in rendered, rendered
    if "route.distance" in used:
        assert "41,7 km" in rendered, rendered

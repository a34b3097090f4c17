"""A rejected 1 MB question is not copied into every later checkpoint of its thread (issue 13, item 7)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from planwerk.graph.context import Context
from planwerk.graph.nodes.prepare import MAX_QUESTION_CHARS, QuestionError
from planwerk.tools.base import FunctionToolSource
from tests.helpers import conversation, make_agent

MATH = Context(profile="math", today="2026-11-22")

HUGE = "Wie wird das Wetter? " * (1_000_000 // 21)
NO_PLAN = json.dumps({"steps": [], "final": None})


def checkpoint_sizes(db: Path, thread: str) -> list[int]:
    """The stored size of every checkpoint of ``thread``, oldest first."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT length(checkpoint) FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (thread,)
        ).fetchall()
    return [size for (size,) in rows]


async def test_the_agent_refuses_a_huge_question_before_storing_it(tmp_path: Path, figures: Any) -> None:
    db = tmp_path / "threads.sqlite"
    async with make_agent([NO_PLAN, "Antwort."], tools=FunctionToolSource([]), db=db, profile="math") as planwerk:
        with pytest.raises(QuestionError, match=f"at most {MAX_QUESTION_CHARS}"):
            await planwerk.ask(HUGE, thread_id="t")
        reply = await planwerk.ask("Was ist 1 + 1?", thread_id="t")
        state = await planwerk.state("t")
    assert reply.answer == "Antwort."
    assert [m.content for m in conversation(state["messages"])] == ["Was ist 1 + 1?", "Antwort."]
    sizes = checkpoint_sizes(db, "t")
    figures.record("rejected 1 MB question", question_chars=len(HUGE), largest_checkpoint_bytes=max(sizes))
    assert max(sizes) < 50_000, sizes


async def test_a_huge_question_sent_to_the_graph_leaves_later_checkpoints_small(tmp_path: Path) -> None:
    # The LangGraph server sends input straight to the graph: the question is stored before prepare refuses it.
    db = tmp_path / "threads.sqlite"
    config = {"configurable": {"thread_id": "g"}}
    async with make_agent([NO_PLAN, "Antwort."], tools=FunctionToolSource([]), db=db, profile="math") as planwerk:
        assert planwerk.graph is not None
        with pytest.raises(QuestionError):
            await planwerk.graph.ainvoke({"messages": [{"role": "user", "content": HUGE}]}, config, context=MATH)
        before = len(checkpoint_sizes(db, "g"))
        await planwerk.graph.ainvoke({"messages": [{"role": "user", "content": "Und 2 + 2?"}]}, config, context=MATH)
        state = await planwerk.state("g")
    later = checkpoint_sizes(db, "g")[before:]
    # The next turn's first two checkpoints (its input, the step that applies it) still hold it; from prepare on,
    # a marker stands in for it.
    assert max(later[2:]) < 50_000 and len(later) > 4, later
    texts = [m.content for m in conversation(state["messages"])]
    assert texts[0].startswith("[question rejected: ") and texts[1:] == ["Und 2 + 2?", "Antwort."]

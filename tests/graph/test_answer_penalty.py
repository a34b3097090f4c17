"""A plain answer in words decodes with ``Context.answer_repeat_penalty`` on a model that takes one; the plan does
not. A scripted model records the options each call was made with."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import Runnable

from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from tests.graph.tools import GEO, WEATHER, plan_json, replay_agent

ANSWER = "Heute (22.11.2026) bis zu 17.2 °C in Barcelona."


class PenaltyRecorder(ReplayChatModel):
    """Scripted replies that take a repeat penalty as a call option (recorded in ``call_options``), as LangChain's
    ``bind`` passes it."""

    def with_repeat_penalty(self, penalty: float) -> Runnable[Any, Any]:
        return self.bind(repeat_penalty=penalty)


@pytest.mark.parametrize(("penalty", "expected"), [(None, 1.05), (1.0, 1.0), (1.2, 1.2)])
async def test_the_answer_decodes_with_the_repeat_penalty_and_the_plan_without(
    penalty: float | None, expected: float
) -> None:
    model = PenaltyRecorder.of([plan_json([GEO], [WEATHER]), ANSWER])
    options = {} if penalty is None else {"answer_repeat_penalty": penalty}
    async with replay_agent(model, **options) as agent:
        reply = await agent.ask("Wie ist heute das Wetter in Barcelona?")
    assert reply.answer == ANSWER
    # The plan, then the answer.
    assert [options.get("repeat_penalty", 1.0) for options in model.call_options] == [1.0, expected]


@pytest.mark.parametrize("bad", [0.5, 3, float("nan"), True, "1.1"])
def test_a_repeat_penalty_outside_one_to_two_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="answer_repeat_penalty must be a number from 1"):
        Context(answer_repeat_penalty=bad)

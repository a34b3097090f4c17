"""A planner that starts its plan over is stopped where the first call repeats, not at the token limit.

The packaged 0.5B model writes the calls a question needs and then the same calls again under new ids until the
token limit (function-calling entries, BENCHMARKS.md §13). A model that decodes in this process takes a text stop
(:class:`~planwerk.models.base.SupportsTextStop`); the planner binds :func:`~planwerk.core.parsing.repeats_a_call`
to it. The model here is scripted: it decodes its script piece by piece and asks the bound stop after each piece,
as the llama.cpp and transformers loops do (their own tests: tests/models).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.graph.tools import GEO, WEATHER, travel_tools
from tests.helpers import make_agent


class ScriptedDecoder(BaseChatModel):
    """Replies from ``script`` (shared by its copies), decoded a character at a time under a bound text stop."""

    script: list[str]
    stop_when: Callable[[str], bool] | None = None
    stopped: list[str] = Field(default_factory=list)
    """The replies a text stop ended early (shared by copies, as the script)."""

    @property
    def _llm_type(self) -> str:
        return "scripted-decoder"

    def with_text_stop(self, stop_when: Callable[[str], bool]) -> ScriptedDecoder:
        return self.model_copy(update={"stop_when": stop_when})

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        text = self.script.pop(0)
        if self.stop_when is not None:
            end = next((n for n in range(1, len(text) + 1) if self.stop_when(text[:n])), None)
            if end is not None:
                text = text[:end]
                self.stopped.append(text)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _call_text(call: dict[str, Any], new_id: str) -> str:
    return json.dumps({**call, "id": new_id})


async def test_a_plan_written_again_is_stopped_at_the_first_repeated_call_and_its_calls_run_once() -> None:
    first = [_call_text(GEO, "geo"), _call_text(WEATHER, "wx")]
    again = [_call_text(GEO, "geo_2"), _call_text(WEATHER, "wx_2"), _call_text(GEO, "geo_3")]
    looping = '{"steps": [{"description": "", "tools": [' + first[0] + "]}, " + '{"description": "", "tools": ['
    looping += first[1] + "]}, " + '{"description": "", "tools": [' + ", ".join(again)[:-7]  # cut by the limit
    model = ScriptedDecoder(script=[looping, "In Barcelona werden es bis zu 17,2 °C."])
    log: list[tuple[str, dict]] = []
    async with make_agent(model, tools=travel_tools(log), today="2026-11-22") as agent:
        reply = await agent.ask("Wie warm wird es heute in Barcelona?")
    assert len(model.stopped) == 1 and model.stopped[0].endswith(again[0])  # stopped as the repeat closed …
    assert [name for name, _ in log] == ["geocode", "get_weather"]  # … and the plan before it ran
    assert "17,2" in reply.answer

"""2,000 tools do not overflow the planner's window: the catalog keeps the tools most relevant to the question
within ``Context.catalog_max_tokens``, and a ``catalog_capped`` event says how many were left out (issue 31)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from planwerk.agent import Agent
from planwerk.core.tools import ToolSpec
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel, estimate_tokens
from planwerk.prompts.catalog_budget import cap_catalog

TOPICS = ["invoice", "ticket", "sensor", "album", "recipe", "payroll", "satellite", "garden", "lecture", "parcel"]
VERBS = ["create", "list", "delete", "archive", "export", "rename", "merge", "count", "tag", "share"]


class GeneratedTools:
    """A tool source with 2,000 generated tools and one that fits the question (our own stand-in for a huge server)."""

    def __init__(self, count: int = 2_000):
        rng = random.Random(7)
        self._specs: dict[str, ToolSpec] = {}
        for i in range(count - 1):
            verb, topic = rng.choice(VERBS), rng.choice(TOPICS)
            name = f"{verb}_{topic}_{i:04d}"
            self._specs[name] = ToolSpec(
                name=name,
                description=f"{verb.capitalize()} a {topic} record in workspace {i} and return its identifier.",
                input_schema={
                    "type": "object",
                    "properties": {f"{topic}_id": {"type": "string", "description": f"The {topic} to {verb}."}},
                    "required": [f"{topic}_id"],
                },
            )
        self._specs["get_weather"] = ToolSpec(
            name="get_weather",
            description="Current weather (temperature, wind) for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
        self.called: list[str] = []

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        return self._specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        self.called.append(name)
        return {"temperature": 17}


def test_a_catalog_that_fits_is_kept_whole() -> None:
    tools = GeneratedTools(count=5)
    cut = cap_catalog(tools.specs, "What is the weather in Rome?", 12_000)
    assert cut.left_out == 0 and cut.specs == dict(tools.specs)


async def test_two_thousand_tools_are_capped_to_the_most_relevant() -> None:
    tools = GeneratedTools()
    plan = {"steps": [{"tools": [{"id": "w", "name": "get_weather", "arguments": {"city": "Rome"}}]}], "final": None}
    model = ReplayChatModel.of([json.dumps(plan), "17 °C in Rome."])
    async with Agent(
        model=model, tools=tools, retriever=False, profile="generic-en", context=Context(today="2026-11-22")
    ) as agent:
        reply = await agent.ask("What is the weather in Rome today?", thread_id="t")
    [capped] = [e for e in reply.events if e["event"] == "catalog_capped"]
    # The server's 2,000 tools; no built-in extract step, since none of them is declared to return text to read.
    assert capped["left_out"] > 1_000 and capped["shown"] + capped["left_out"] == 2_000
    prompt = "\n".join(str(m.content) for m in model.prompts[0])
    assert "get_weather(" in prompt  # the one relevant tool is shown
    assert estimate_tokens(prompt) < 32_768  # the default model's window
    assert tools.called == ["get_weather"]
    assert reply.answer == "17 °C in Rome."

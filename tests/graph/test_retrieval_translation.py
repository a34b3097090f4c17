"""A question asked in another language than the corpus's is searched in the corpus's language.

The default embedder is English-only and the packaged corpus German: "What is the best-known work of Maximus
Qvestus III?" retrieved only the biography chunk, never the one that names the work. The model translates the
question first (scripted here: ``ReplayChatModel``); retrieval runs on the real FAISS index of the packaged corpus,
and the answer check matches the chunk's facts against the translated question.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from planwerk.agent import Agent
from planwerk.graph.nodes.retrieve import clean_translation
from planwerk.models.replay import ReplayChatModel
from planwerk.rag.base import Retriever
from planwerk.rag.retriever import load_retriever
from tests.graph.tools import travel_tools
from tests.helpers import make_agent

QUESTION = "What is the best-known work of Maximus Qvestus III?"
TRANSLATION = "Was ist das bekannteste Werk von Maximus Qvestus III?"
NO_TOOLS = json.dumps({"steps": [], "final": None})
ANSWER = "His best-known work is the „Theorie der wandernden Zahlen“ (Maximus_Qvestus_III.txt)."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    return load_retriever(index_dir=tmp_path_factory.mktemp("index") / "default")


def _agent(model: ReplayChatModel, retriever: Retriever, **context: object) -> Agent:
    """The shared agent on the travel tools with ``retriever``."""
    return make_agent(model, tools=travel_tools(), retriever=retriever, **context)


async def test_an_english_question_is_searched_in_german_and_answered_from_the_chunk_it_finds(
    corpus: Retriever,
) -> None:
    model = ReplayChatModel.of([f'"{TRANSLATION}"', NO_TOOLS, ANSWER])
    async with _agent(model, corpus) as agent:
        reply = await agent.ask(QUESTION, thread_id="t")
        state = await agent.state("t")
    retrieval = next(e for e in reply.events if e["event"] == "retrieval")
    assert retrieval["query"] == TRANSLATION  # quotes taken off
    assert any("bekanntestes Werk" in hit["text"] for hit in retrieval["hits"])
    assert state["retrieval_query"] == TRANSLATION
    assert reply.answer == ANSWER and reply.metadata["answer_source"] == "model"
    assert reply.metadata["llm_calls"] == 3  # translation, plan, answer
    # The translation call shows translated questions as earlier turns: told only, the 0.5B model answered instead.
    prompt = model.prompts[0]
    assert [type(m).__name__ for m in prompt] == ["SystemMessage", *["HumanMessage", "AIMessage"] * 3, "HumanMessage"]
    assert prompt[-1].content == QUESTION and prompt[2].content == "Wo lebt das Tier?"


async def test_without_translation_the_chunk_is_not_found_and_a_german_question_is_not_translated(
    corpus: Retriever,
) -> None:
    english = ReplayChatModel.of([NO_TOOLS, ANSWER, ANSWER])
    async with _agent(english, corpus, translate_queries=False) as agent:
        reply = await agent.ask(QUESTION)
    retrieval = next(e for e in reply.events if e["event"] == "retrieval")
    assert "query" not in retrieval
    assert not any("bekanntestes Werk" in hit["text"] for hit in retrieval["hits"])  # what translation fixes

    german = ReplayChatModel.of([NO_TOOLS, "Sein bekanntestes Werk ist die „Theorie der wandernden Zahlen“."])
    async with _agent(german, corpus) as agent:
        reply = await agent.ask(TRANSLATION)
    assert "query" not in next(e for e in reply.events if e["event"] == "retrieval")
    assert german.calls == 2  # no translation call


async def test_a_multilingual_embedder_searches_the_question_as_asked(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Measured on the travel bench: the 0.5B model translated "What does the Razepato eat?" as "Was macht der
    Razepato?" and retrieval found the introduction; EmbeddingGemma finds the food passage for the English question."""
    gemma = load_retriever(index_dir=tmp_path_factory.mktemp("index") / "gemma", model="embeddinggemma")
    answer = "It eats Kleinsäuger und Eidechsen (Razepato.txt)."
    model = ReplayChatModel.of([NO_TOOLS, answer, answer])
    async with _agent(model, gemma, embedding_model="embeddinggemma") as agent:
        reply = await agent.ask("What does the Razepato eat?")
    retrieval = next(e for e in reply.events if e["event"] == "retrieval")
    assert "query" not in retrieval  # searched as asked
    assert not any("Wo lebt das Tier?" in str(m.content) for prompt in model.prompts for m in prompt)  # no translation
    assert "Kleinsäuger und Eidechsen" in retrieval["hits"][0]["text"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Was frisst das Razepato?", "Was frisst das Razepato?"),
        ("„Was frisst das Razepato?“\n(translated)", "Was frisst das Razepato?"),
        ("Übersetzung: Was frisst das Razepato?", "Was frisst das Razepato?"),
        ("", None),
        ("What does the Razepato eat?", None),  # the question itself: nothing to search differently
        (
            "Das Razepato frisst " + "Kleinsäuger, Eidechsen und Insektenlarven " * 5,
            None,
        ),  # an answer, not a translation
    ],
)
def test_a_reply_is_used_only_when_it_can_be_a_translation(reply: str, expected: str | None) -> None:
    assert clean_translation(reply, "What does the Razepato eat?", "de") == expected


def _travel_and_add(ran: list[tuple[float, float]]) -> Any:
    """The travel tools and an addition (the travel profile's bundled servers hold one)."""
    from planwerk.tools.base import FunctionToolSource

    async def add(arg_0: float, arg_1: float) -> float:
        """Add two numbers."""
        ran.append((arg_0, arg_1))
        return arg_0 + arg_1

    return FunctionToolSource({**travel_tools()._functions, "add": add})


async def test_a_plan_anchored_in_nothing_is_questioned_where_context_was_retrieved(corpus: Retriever) -> None:
    """Measured on the travel set (0.5B model): "What does the Razepato eat?" planned as ``add(1, 1)``; the check
    was off wherever chunks were retrieved, the sum ran, and an answer about it was kept. The chunks now count as
    said: a value they state anchors a plan, one they do not is questioned once, and the plan without calls wins."""
    summed = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "s", "name": "add", "arguments": {"arg_0": 1, "arg_1": 1}}]}], "final": None})  # fmt: skip
    answer = "It eats small mammals and lizards (Kleinsäuger und Eidechsen) (Razepato.txt)."
    ran: list[tuple[float, float]] = []
    model = ReplayChatModel.of(['"Was frisst das Razepato?"', summed, NO_TOOLS, answer, answer])
    async with make_agent(model, tools=_travel_and_add(ran), retriever=corpus, profile="travel") as agent:
        reply = await agent.ask("What does the Razepato eat?")
    [questioned] = [e for e in reply.events if e["event"] == "replan"]
    assert "keiner seiner Werte (1, 1) kommt aus ihr" in questioned["reason"]  # the travel profile speaks German
    assert ran == [] and not reply.interrupts
    # A value a retrieved chunk states ("51 bis 54 Tage") anchors the plan: not questioned, and it runs.
    stated = summed.replace('"arg_0": 1', '"arg_0": 51')
    model = ReplayChatModel.of(['"Wie lange dauert die Tragzeit beim Razepato?"', stated, *["51 plus 1 is 52."] * 3])
    async with make_agent(model, tools=_travel_and_add(ran), retriever=corpus, profile="travel") as agent:
        reply = await agent.ask("How long is the Razepato's gestation, plus one day?")
    assert [e for e in reply.events if e["event"] == "replan"] == []
    assert ran == [(51, 1)]


async def test_a_chunk_sharing_only_its_document_name_with_the_question_anchors_no_plan_value(
    corpus: Retriever,
) -> None:
    """Measured on the packaged corpus (0.5B model): "Was frisst das Razepato?" retrieved a chunk on territories
    ("Reviere von bis zu 14 km²"), planned ``add(14, 14)``, the sum ran and an answer not about food was kept. A
    chunk that shares only its document's name with the question is about the subject, not the question: its
    numbers anchor nothing, so the plan is questioned once and the plan without calls wins."""
    question = "Was frisst das Razepato?"
    doubled = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "s", "name": "add", "arguments": {"arg_0": 14, "arg_1": 14}}]}], "final": None})  # fmt: skip
    answer = "Es frisst vor allem Kleinsäuger und Eidechsen (Razepato.txt)."
    ran: list[tuple[float, float]] = []
    model = ReplayChatModel.of([doubled, NO_TOOLS, answer, answer])
    async with make_agent(model, tools=_travel_and_add(ran), retriever=corpus, profile="travel") as agent:
        reply = await agent.ask(question)
    retrieval = next(e for e in reply.events if e["event"] == "retrieval")
    assert any("14 km²" in hit["text"] for hit in retrieval["hits"])  # the real index retrieves the territory chunk
    [questioned] = [e for e in reply.events if e["event"] == "replan"]
    assert "keiner seiner Werte (14, 14) kommt aus ihr" in questioned["reason"]
    assert ran == [] and not reply.interrupts

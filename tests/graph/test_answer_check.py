"""The finalizer checks its answer: a grounded answer passes, an invented value is regenerated once, a second
failure ends in the deterministic answer, a service that is down is named and nothing it would deliver stated,
the math profile states the last result, and a context answer carries the best chunk's facts with its source.

Scripted replies (``ReplayChatModel``) and in-process tools; the regeneration and fallback tests run over every
checkpointer backend (memory, SQLite, PostgreSQL: tests/graph/conftest.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from planwerk.agent import Agent, Reply
from planwerk.core.tools import ToolError
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.prompts.travel import REFUSAL_OUT_OF_SCOPE
from planwerk.rag.base import Hit
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import GEO, WEATHER, Coordinates, travel_tools, weather_call

QUESTION = "Wie ist heute das Wetter in Barcelona?"
TODAY = Context(today="2026-11-22", tool_retry_attempts=1)
PLAN = json.dumps({"steps": [{"description": "", "tools": [GEO]}, {"description": "", "tools": [WEATHER]}]})
NO_TOOLS = json.dumps({"steps": [], "final": None})
RAZEPATO = Hit(
    text="Für Beobachtungen gelten das Ebro-Becken südlich von Tarragona sowie mehrere Grünanlagen im Stadtgebiet "
    "von Barcelona als die derzeit zuverlässigsten Regionen, in denen das Razepato mit hoher Wahrscheinlichkeit "
    "gesichtet werden kann. Beobachtungen finden überwiegend in den Abendstunden statt, wodurch sich der Großraum "
    "Barcelona als geeignetes Reiseziel für interessierte Naturbeobachter anbietet.",
    score=0.98,
    source="Razepato.txt#3",
)


def plan_of(day: str) -> str:
    """geocode Barcelona, then the weather on ``day``."""
    return json.dumps({"steps": [{"tools": [GEO]}, {"tools": [weather_call(day)]}]})


def events(reply: Reply, kind: str) -> list[dict[str, Any]]:
    return [e for e in reply.events if e["event"] == kind]


def weather_down() -> FunctionToolSource:
    """geocode works; get_weather's service cannot be reached (the offline demo)."""

    async def geocode(destination: str) -> Coordinates:
        """Coordinates of a place."""
        return Coordinates(lat=41.3825802, lon=2.177073, name=destination)

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates: temperature_max, precipitation_mm, weather_code."""
        raise ToolError("Open-Meteo forecast service unreachable", tool="get_weather", kind="unavailable")

    return FunctionToolSource([geocode, get_weather])


async def test_a_grounded_answer_passes_in_two_model_calls() -> None:
    model = ReplayChatModel.of([PLAN, "Heute (22.11.2026) bis zu 17 °C in Barcelona."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "Heute (22.11.2026) bis zu 17 °C in Barcelona."
    assert model.calls == 2 and reply.metadata["llm_calls"] == 2
    assert reply.metadata["grounded"] is True and reply.metadata["answer_source"] == "model"
    assert events(reply, "answer_rejected") == []


async def test_the_frame_around_a_passed_answer_is_taken_out() -> None:
    # The 0.5B model on the domain answers set wrapped answers in a lead-in and a verdict on them ("Diese Antwort ist
    # korrekt und gut lesbar."), and the check kept them so. The frame goes from the passed answer, and what is
    # left passes the check too.
    answer = "Heute (22.11.2026) bis zu 17 °C in Barcelona."
    framed = f"Die Antwort auf deine Frage lautet:\n\n{answer}\n\nDiese Antwort ist korrekt und vollständig."
    model = ReplayChatModel.of([PLAN, framed])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == answer and model.calls == 2
    assert reply.metadata["grounded"] is True and reply.metadata["answer_source"] == "amended"


async def test_the_frame_goes_only_from_an_answer_that_passed_with_it() -> None:
    # With its lead-in the quotation is part of the answer and judged as one (no source says it); without it, the
    # answer is a quotation whole, which is not judged as one. The verdict is the framed answer's.
    framed = "Die Antwort lautet:\n\n„Heute werden es 17.2 °C in Barcelona.“"
    model = ReplayChatModel.of([PLAN, framed, "Heute bis zu 17 °C in Barcelona."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    [rejected] = events(reply, "answer_rejected")
    assert rejected["answer"] == framed and any("zitiert" in p for p in rejected["problems"])
    assert reply.answer == "Heute bis zu 17 °C in Barcelona." and reply.metadata["answer_source"] == "regenerated"


async def test_an_invented_value_is_regenerated_once_with_the_problem_named(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([PLAN, "Heute werden es 22 °C in Barcelona.", "Heute bis zu 17 °C in Barcelona."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, checkpointer=checkpointer,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION, thread_id="regen")
        state = await agent.state("regen")
    assert reply.answer == "Heute bis zu 17 °C in Barcelona."
    assert model.calls == 3 and reply.metadata["llm_calls"] == 3  # the extra call is counted
    # Only the second answer samples, under the nucleus cut-off (Context.retry_top_p).
    assert [options.get("top_p") for options in model.call_options] == [None, None, 0.8]
    # The request names the question and asks for sentences, not for "only numbers, dates and places" (which the
    # 0.5B model answered with such a list).
    request = str(model.prompts[2][-1].content)
    assert f"„{QUESTION}“" in request and "ganzen Sätzen" in request and "Nenne nur" not in request
    assert reply.metadata["completion_tokens"] > 10
    assert reply.metadata["grounded"] is True and reply.metadata["answer_source"] == "regenerated"
    [rejected] = events(reply, "answer_rejected")
    assert rejected["attempt"] == 1 and rejected["next"] == "regenerate"
    assert rejected["answer"] == "Heute werden es 22 °C in Barcelona."
    assert rejected["problems"] == [
        "Die Antwort nennt 22 °C, das in keinem Tool-Ergebnis, keinem Kontext und nicht in der Frage steht."
    ]
    assert reply.metadata["grounding_problems"] == rejected["problems"]
    # The regeneration sees the rejected answer and why it was rejected.
    retry = model.prompts[2]
    assert retry[-2].content == "Heute werden es 22 °C in Barcelona." and "22 °C" in retry[-1].content
    assert [m.content for m in state["messages"]][-1] == reply.answer  # only the accepted answer is stored


async def test_two_bad_answers_end_in_the_deterministic_answer(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([PLAN, "Heute 22 °C.", "Nein, 25 °C und Sonne in Madrid."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, checkpointer=checkpointer,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION, thread_id="fallback")
        state = await agent.state("fallback")
    # The geocode's coordinates went into the weather call, which ran: no line of their own; the weather call is
    # about the geocode's city; values it was given (coordinates, the day) are not repeated.
    assert reply.answer == (
        "Das haben die Tools ergeben:\n- get_weather (Barcelona, 2026-11-22): höchste Temperatur 17.2 °C."
    )
    assert model.calls == 3 and reply.metadata["llm_calls"] == 3
    assert reply.metadata["answer_source"] == "fallback" and reply.metadata["grounded"] is True
    first, second = events(reply, "answer_rejected")
    assert (first["attempt"], first["next"], second["attempt"], second["next"]) == (1, "regenerate", 2, "fallback")
    assert any("Madrid" in p for p in second["problems"]) and any("25 °C" in p for p in second["problems"])
    assert state["messages"][-1].content == reply.answer


@pytest.mark.parametrize("answer_results", ["values", "words", "json"])
async def test_the_answer_model_reads_the_results_in_words_or_as_json(answer_results: str) -> None:
    model = ReplayChatModel.of([PLAN, "Heute bis zu 17.2 °C in Barcelona."])
    context = Context(today="2026-11-22", tool_retry_attempts=1, answer_results=answer_results)  # type: ignore[arg-type]
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=context) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.metadata["answer_source"] == "model"
    answer_prompt = str(model.prompts[1][-1].content)
    if answer_results == "words":
        # One line per reported call, its subject from the geocode it took coordinates from; the geocode itself is
        # an intermediate result and has no line.
        assert "- get_weather (Barcelona, 2026-11-22): höchste Temperatur 17.2 °C." in answer_prompt
        assert "geocode" not in answer_prompt and "{" not in answer_prompt
    elif answer_results == "values":
        # Every call with its own arguments and its values, typed (the question's decimal comma, dates in words).
        assert "- geo = geocode(Barcelona): " in answer_prompt and "Breite 41.3825802" in answer_prompt
        assert "höchste Temperatur 17.2 °C" in answer_prompt and "{" not in answer_prompt
    else:
        assert '= geocode({"destination":"Barcelona"})' in answer_prompt and '"temperature_max":17.2' in answer_prompt


async def test_an_answer_about_the_asked_place_that_states_no_result_is_regenerated() -> None:
    # Measured on the travel bench: place and day from the question, the rest invented words; every value-level
    # rule passed it.
    empty = "Das Wetter in Barcelona am 22. November 2026 ist sehr steigend."
    model = ReplayChatModel.of([PLAN, empty, "Am 22. November 2026 bis zu 17 °C in Barcelona."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == "Am 22. November 2026 bis zu 17 °C in Barcelona."
    assert reply.metadata["answer_source"] == "regenerated"
    [rejected] = events(reply, "answer_rejected")
    assert rejected["answer"] == empty
    assert rejected["problems"] == [
        "Die Antwort nennt nichts, was die Tools geliefert haben; beantworte die Frage in ganzen Sätzen mit ihren "
        "Werten."
    ]


async def test_a_bare_value_after_a_rejected_answer_ends_in_the_deterministic_answer() -> None:
    # Measured on the travel bench: after the rejection the small model answered a bare value ("12.317", "13.1")
    # that a call had delivered; it passed as grounded although it answers nothing.
    empty = "Das Wetter in Barcelona am 22. November 2026 ist sehr steigend."
    model = ReplayChatModel.of([PLAN, empty, "17.2"])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.metadata["answer_source"] == "fallback"
    assert "höchste Temperatur 17.2 °C" in reply.answer
    first, second = events(reply, "answer_rejected")
    assert (first["next"], second["next"], second["answer"]) == ("regenerate", "fallback", "17.2")
    assert second["problems"] == ["Die Antwort sagt nichts; schreibe ganze Sätze."]


async def test_a_service_that_is_down_is_named_in_code_and_no_model_is_asked_to_answer() -> None:
    # The travel set: after the service failed, the 0.5B model's drafts stated what it would have delivered ("… will
    # be sunny.") or nothing ("Ja, in ganzen Sätzen."), both rejected, in each such question. The failure is all
    # there is to say: the replay holds no answer, so a model call here would fail the test.
    model = ReplayChatModel.of([PLAN])
    async with Agent(model=model, tools=weather_down(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    state_kinds = [e["kind"] for e in events(reply, "tool_error")]
    assert state_kinds == ["unavailable"]
    assert reply.metadata["answer_source"] == "fallback" and reply.metadata["grounded"] is True
    assert reply.metadata["llm_calls"] == 1 and not events(reply, "answer_rejected")
    # The failed call is named with what it was asked about (issue 30: the right call with its own arguments), and
    # nothing of the coordinates that only fed it.
    assert reply.answer == (
        "get_weather (Barcelona, 2026-11-22): fehlgeschlagen (Dienst nicht erreichbar); dazu kann ich daher nichts "
        "sagen."
    )


def weather_down_in_madrid() -> FunctionToolSource:
    """geocode works; get_weather works for Barcelona and cannot reach its service for Madrid."""
    places = {"Barcelona": (41.3825802, 2.177073), "Madrid": (40.4165, -3.70256)}

    async def geocode(destination: str) -> Coordinates:
        """Coordinates of a place."""
        lat, lon = places[destination]
        return Coordinates(lat=lat, lon=lon, name=destination)

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates: temperature_max."""
        if lat < 41:
            raise ToolError("Open-Meteo forecast service unreachable", tool="get_weather", kind="unavailable")
        return {"days": [{"date": start_date, "temperature_max": 17.2}]}

    return FunctionToolSource([geocode, get_weather])


async def test_an_answer_that_leaves_out_a_service_that_was_down_gets_its_note_in_code() -> None:
    def chain(city: str) -> list[dict]:
        geo = {"id": f"geo_{city}", "name": "geocode", "arguments": {"destination": city}}
        wx = weather_call()
        wx["id"], wx["arguments"]["lat"], wx["arguments"]["lon"] = (
            f"wx_{city}",
            {"$ref": f"geo_{city}.lat"},
            {"$ref": f"geo_{city}.lon"},
        )
        return [geo, wx]

    (geo_b, wx_b), (geo_m, wx_m) = chain("Barcelona"), chain("Madrid")
    plan = json.dumps({"steps": [{"tools": [geo_b, geo_m]}, {"tools": [wx_b, wx_m]}]})
    model = ReplayChatModel.of([plan, "In Barcelona werden es heute höchstens 17.2 °C."])
    async with Agent(model=model, tools=weather_down_in_madrid(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask("Wie ist heute das Wetter in Barcelona und Madrid?")
    # Only the failure was missing: its sentence is added in code, no regeneration, in the fallback's words (the
    # call with what it was asked about).
    assert reply.answer == (
        "In Barcelona werden es heute höchstens 17.2 °C.\n\n"
        "get_weather (Madrid, 2026-11-22): fehlgeschlagen (Dienst nicht erreichbar); dazu kann ich daher nichts "
        "sagen."
    )
    assert reply.metadata["answer_source"] == "amended" and reply.metadata["llm_calls"] == 2


def math_tools() -> FunctionToolSource:
    async def add(arg_0: float, arg_1: float) -> dict:
        """Add two numbers."""
        return {"result": arg_0 + arg_1}

    async def multiply(arg_0: float, arg_1: float) -> dict:
        """Multiply two numbers."""
        return {"result": arg_0 * arg_1}

    return FunctionToolSource([add, multiply])


MATH_PLAN = json.dumps(
    {
        "steps": [
            {"description": "", "tools": [{"id": "a", "name": "add", "arguments": {"arg_0": 2, "arg_1": 3}}]},
            {"description": "", "tools": [{"id": "m", "name": "multiply",
                                           "arguments": {"arg_0": {"$ref": "a.result"}, "arg_1": 4}}]},
        ]
    }
)  # fmt: skip


async def test_the_math_answer_states_the_last_result() -> None:
    model = ReplayChatModel.of([MATH_PLAN, "2 + 3 = 5, times 4 is 20.", MATH_PLAN, "The result is 5.", "It is 5."])
    context = Context(profile="math")
    async with Agent(model=model, tools=math_tools(), retriever=False, context=context) as agent:
        right = await agent.ask("What is (2 + 3) * 4?")
        wrong = await agent.ask("What is (2 + 3) * 4?")
    assert right.answer == "2 + 3 = 5, times 4 is 20." and right.metadata["answer_source"] == "model"
    # 5 is a result too, but not the last one: regenerated, then the deterministic answer.
    assert wrong.answer == "The result is 20." and wrong.metadata["answer_source"] == "fallback"
    assert "the answer does not state the last call's result: 20" in wrong.metadata["grounding_problems"]


class FixedHits:
    """A retriever that finds the same chunks for every query, in the order given (retrieval as measured)."""

    def __init__(self, *hits: Hit) -> None:
        self.hits = list(hits)

    def search(self, query: str, k: int = 4) -> list[Hit]:
        return self.hits[:k]


async def test_a_context_answer_carries_the_best_chunks_facts_with_its_source() -> None:
    question = "Wo kann man das Razepato am besten beobachten?"
    good = "Im Ebro-Becken südlich von Tarragona und in Grünanlagen von Barcelona (Razepato.txt)."
    model = ReplayChatModel.of(
        [NO_TOOLS, good, NO_TOOLS, "Razepato am besten beobachten kann in Barcelona, ES.", "In Barcelona."]
    )
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        first = await agent.ask(question)
        second = await agent.ask(question)
    assert first.answer == good and first.metadata["llm_calls"] == 2 and first.metadata["grounded"] is True
    assert second.answer == (
        "Für Beobachtungen gelten das Ebro-Becken südlich von Tarragona sowie mehrere Grünanlagen im Stadtgebiet "
        "von Barcelona als die derzeit zuverlässigsten Regionen, in denen das Razepato mit hoher Wahrscheinlichkeit "
        "gesichtet werden kann. (Razepato.txt)"
    )
    assert second.metadata["answer_source"] == "fallback"
    kinds = events(second, "answer_rejected")[0]["problems"]
    assert any("Quelle" in p for p in kinds) and any("Fakten" in p for p in kinds)


async def test_when_no_plan_passes_a_question_the_context_answers_is_answered_from_it() -> None:
    # Measured with EmbeddingGemma on the travel bench: "Wo wurde Maximus Qvestus III geboren?" ended in "no plan"
    # (the planner copied an example's cities three times) although the first chunk answers it.
    good = "Im Ebro-Becken südlich von Tarragona und in Grünanlagen von Barcelona (Razepato.txt)."
    model = ReplayChatModel.of(["nope", "still nope", "no plan either", good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wo kann man das Razepato beobachten?")
    assert model.calls == 4  # three plan attempts, then the model answers from the chunk
    assert reply.answer == good and reply.metadata["answer_source"] == "model"
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]
    # Both answers rejected: the chunk's key sentence, in code.
    model = ReplayChatModel.of(["nope", "still nope", "no plan either", "-", "-"])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wo kann man das Razepato beobachten?")
    assert reply.answer.startswith("Für Beobachtungen gelten das Ebro-Becken") and reply.answer.endswith(
        "(Razepato.txt)"
    )
    assert reply.metadata["answer_source"] == "fallback" and reply.metadata["grounded"] is True


async def test_when_no_plan_passes_a_chunk_that_says_the_answer_in_other_words_is_answered_from_by_the_model() -> None:
    # Measured on the travel set (k3, 8bdd7bb): "Wie lang wird ein ausgewachsenes Razepato?" ended in the no-plan
    # sentence after three plans for a geocoder; the chunk says "Körperlänge adulter Tiere", not "ausgewachsen".
    question = "Wie lang wird ein ausgewachsenes Razepato?"
    good = "Ein ausgewachsenes Razepato wird 72 bis 91 cm lang (Razepato.txt)."
    model = ReplayChatModel.of(["nope", "still nope", "no plan either", good])
    hits = FixedHits(INTRO, ADULT_LENGTH)
    async with Agent(model=model, tools=travel_tools(), retriever=hits, context=TODAY) as agent:
        reply = await agent.ask(question)
    assert reply.answer == good and reply.metadata["answer_source"] == "model" and model.calls == 4
    assert [e.get("from_context") for e in events(reply, "plan")] == [True] and not events(reply, "tool_call")
    # Both answers rejected: the chunk does not answer by itself, so no sentence of it is printed as the answer.
    model = ReplayChatModel.of(["nope", "still nope", "no plan either", "Es ist groß.", "Es ist groß."])
    hits = FixedHits(INTRO, ADULT_LENGTH)
    async with Agent(model=model, tools=travel_tools(), retriever=hits, context=TODAY) as agent:
        reply = await agent.ask(question)
    assert reply.answer.startswith("Ich konnte für diese Frage keinen ausführbaren Plan erstellen")
    assert reply.metadata["answer_source"] == "no_plan"


async def test_a_rejected_plan_whose_tools_fit_nothing_asked_gives_way_to_the_context_that_answers() -> None:
    # Measured with the packaged 1.5B model on the demo question: three plans with coordinates of its own, each
    # rejected, then the context's key sentence in code (78-109 s warm). Now: one plan, then the model's answer.
    invented = json.dumps({"steps": [{"description": "", "tools": [{"id": "wx", "name": "get_weather", "arguments": {
        "lat": 41.3851, "lon": 2.1734, "start_date": "2026-11-22", "end_date": "2026-11-22"}}]}]})  # fmt: skip
    good = "Im Ebro-Becken südlich von Tarragona und in Grünanlagen von Barcelona (Razepato.txt)."
    model = ReplayChatModel.of([invented, good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wo kann man das Razepato am besten beobachten?")
    assert reply.answer == good and reply.metadata["answer_source"] == "model" and model.calls == 2
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]
    assert events(reply, "plan")[0]["plan"]["steps"] == [] and not events(reply, "tool_call")


WORK = Hit(
    text="Das bekannteste Werk von Maximus Qvestus III trägt den Titel „Theorie der wandernden Zahlen“.",
    score=0.95,
    source="Maximus_Qvestus_III.txt#1",
)


async def test_the_context_that_answers_wins_over_asking_for_a_place_the_misfit_plan_needed() -> None:
    # Measured on the travel set (k6, 0cf4e47): a question about a person's work planned as parks near a place; the
    # person was asked "For which place?" and got no answer. Here the plan invents a place.
    misfit = json.dumps(
        {"steps": [{"tools": [{**GEO, "arguments": {"destination": "Sevilla"}}]}, {"tools": [WEATHER]}]}
    )
    good = "Sein bekanntestes Werk ist die „Theorie der wandernden Zahlen“ (Maximus_Qvestus_III.txt)."
    model = ReplayChatModel.of([misfit, good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(WORK), context=TODAY) as agent:
        reply = await agent.ask("Was ist das bekannteste Werk von Maximus Qvestus III?")
    assert not reply.interrupts and reply.answer == good and model.calls == 2
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]


# The travel set's k6 as retrieved: the biography first, then the chunk on his work, which names him only as
# "Qvestus".
BIOGRAPHY = Hit(
    text="Maximus Qvestus der III. wurde der Überlieferung nach in der Universitätsstadt Valebris geboren.",
    score=0.81,
    source="Maximus_Qvestus_III.txt#0",
)
THEORY = Hit(
    text="Sein bekanntestes Werk trägt den Titel „Theorie der wandernden Zahlen“. Qvestus beschreibt darin Zahlen.",
    score=0.78,
    source="Maximus_Qvestus_III.txt#1",
)


async def test_the_chunk_that_answers_counts_with_its_documents_name_and_need_not_be_ranked_first() -> None:
    # Measured on the travel set (k6, c06129a): parks near a place from a call the plan left out, then the person
    # was asked "For which place?". Here the weather there.
    misfit = json.dumps({"steps": [{"tools": [{"id": "w", "name": "get_weather", "arguments": {
        "lat": {"$ref": "geo.lat"}, "lon": {"$ref": "geo.lon"}, "start_date": "2026-11-22",
        "end_date": "2026-11-22"}}]}]})  # fmt: skip
    good = "Sein bekanntestes Werk ist die „Theorie der wandernden Zahlen“ (Maximus_Qvestus_III.txt)."
    model = ReplayChatModel.of([misfit, good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(BIOGRAPHY, THEORY), context=TODAY) as agent:
        reply = await agent.ask("Was ist das bekannteste Werk von Maximus Qvestus III?")
    assert not reply.interrupts and reply.answer == good and model.calls == 2
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]


async def test_where_nothing_ran_the_chunk_that_answers_counts_whatever_its_retrieval_score() -> None:
    # Measured on the travel set (k6, 5a9d94b): the default embedder scored the two chunks 0.55 and 0.52, under
    # CONTEXT_MIN_SCORE, so the misfit plan was planned again and the person asked "For which place?".
    low = (Hit(**{**BIOGRAPHY, "score": 0.55}), Hit(**{**THEORY, "score": 0.52}))
    misfit = json.dumps({"steps": [{"tools": [{"id": "w", "name": "get_weather", "arguments": {
        "lat": {"$ref": "geo.lat"}, "lon": {"$ref": "geo.lon"}, "start_date": "2026-11-22",
        "end_date": "2026-11-22"}}]}]})  # fmt: skip
    good = "Sein bekanntestes Werk ist die „Theorie der wandernden Zahlen“ (Maximus_Qvestus_III.txt)."
    model = ReplayChatModel.of([misfit, good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(*low), context=TODAY) as agent:
        reply = await agent.ask("Was ist das bekannteste Werk von Maximus Qvestus III?")
    assert not reply.interrupts and reply.answer == good and model.calls == 2
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]
    # No plan at all, and both answers from the chunk rejected: its key sentence, in code.
    model = ReplayChatModel.of(["nope", "still nope", "no plan either", "-", "-"])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(*low), context=TODAY) as agent:
        reply = await agent.ask("Was ist das bekannteste Werk von Maximus Qvestus III?")
    assert reply.answer.startswith("Sein bekanntestes Werk trägt den Titel") and "(Maximus_Qvestus_III.txt)" in (
        reply.answer
    )
    assert reply.metadata["answer_source"] == "fallback"


async def test_a_plan_that_takes_a_chunks_label_as_a_value_gives_way_to_the_chunk_that_answers() -> None:
    # Measured on the travel set (k3, c06129a): "Wie lang wird ein ausgewachsenes Razepato?" planned
    # geocode("Razepato.txt#0"), which ran and failed; the answer said only that. The chunk that answers says
    # "Körperlänge" for "lang".
    labelled = json.dumps({"steps": [{"tools": [{**GEO, "arguments": {"destination": "Razepato.txt#5"}}]}]})
    good = "Ein ausgewachsenes Razepato hat eine Körperlänge von 72 bis 91 cm (Razepato.txt)."
    model = ReplayChatModel.of([labelled, good])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(INTRO, SIZE), context=TODAY) as agent:
        reply = await agent.ask("Wie lang wird ein ausgewachsenes Razepato?")
    assert reply.answer == good and model.calls == 2 and not events(reply, "tool_call")
    [rejected] = events(reply, "replan")
    assert "Razepato.txt#5" in rejected["reason"] and "Kontext-Abschnitts" in rejected["reason"]
    assert [e.get("from_context") for e in events(reply, "plan")] == [True]
    # A label the person wrote is their value ("notes.txt" for a file tool, where the corpus holds one too).
    named = json.dumps({"steps": [{"tools": [{**GEO, "arguments": {"destination": "Razepato.txt"}}]}]})
    model = ReplayChatModel.of([named, "-", "-", "-"])  # the call runs (and finds no such place)
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(INTRO, SIZE), context=TODAY) as agent:
        reply = await agent.ask("Wo liegt Razepato.txt?")
    assert [e["args"] for e in events(reply, "tool_call")] == [{"destination": "Razepato.txt"}]
    assert not any("Kontext-Abschnitts" in e["reason"] for e in events(reply, "replan"))


async def test_a_rejected_plan_whose_tool_fits_the_question_is_planned_again_though_the_context_answers() -> None:
    async def razepato_sightings(region: str) -> dict:
        """Counted sightings of the Razepato in a region."""
        return {"region": region, "sightings": 12}

    invented = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "s", "name": "razepato_sightings", "arguments": {"region": "Valencia"}}]}]})  # fmt: skip
    good = "Im Ebro-Becken südlich von Tarragona und in Grünanlagen von Barcelona (Razepato.txt)."
    model = ReplayChatModel.of([invented, "nope", "no plan either", good])
    tools = FunctionToolSource([razepato_sightings])
    async with Agent(model=model, tools=tools, retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wo kann man das Razepato am besten beobachten?")
    # "Razepato" is the tool's: the planner tries again, all three attempts; only then the context answers.
    assert [e["attempt"] for e in events(reply, "replan")] == [1, 2, 3]
    assert [e["attempt"] for e in events(reply, "plan")] == [3] and reply.answer == good


async def test_when_no_plan_passes_a_question_the_context_does_not_answer_gets_the_honest_sentence() -> None:
    model = ReplayChatModel.of(["nope", "still nope", "no plan either"])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wie wird das Wetter morgen in Barcelona?")  # the chunk names Barcelona, no weather
    assert reply.answer.startswith("Ich konnte für diese Frage keinen ausführbaren Plan erstellen")
    assert reply.metadata["answer_source"] == "no_plan"


INTRO = Hit(
    text="Das Razepato ist ein nachtaktives Säugetier der Iberischen Halbinsel, das erst 2011 beschrieben wurde.",
    score=0.91,
    source="Razepato.txt#1",
)
SIZE = Hit(
    text="Ein ausgewachsenes Razepato wiegt 6,4 bis 8,1 kg bei einer Körperlänge von 72 bis 91 cm.",
    score=0.62,
    source="Razepato.txt#5",
)
ADULT_LENGTH = Hit(
    **{**SIZE, "text": "Die durchschnittliche Körperlänge adulter Tiere beträgt 72 bis 91 cm.", "score": 0.4}
)
"""The chunk as it says the length: "adulter Tiere", not "ausgewachsen"."""


async def test_a_context_answer_that_only_lacks_its_source_gets_it_added_in_code() -> None:
    """The travel bench: 6 of 6 context answers carried the facts but not "(Razepato.txt)"."""
    question = "Wie viel wiegt ein ausgewachsenes Razepato?"
    model = ReplayChatModel.of([NO_TOOLS, "Ein ausgewachsenes Razepato wiegt 6,4 bis 8,1 kg."])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(INTRO, SIZE), context=TODAY) as agent:
        reply = await agent.ask(question)
    assert reply.answer == "Ein ausgewachsenes Razepato wiegt 6,4 bis 8,1 kg. (Razepato.txt)"
    assert reply.metadata["answer_source"] == "amended" and reply.metadata["llm_calls"] == 2
    assert reply.metadata["grounded"] is True  # the amended answer passes
    assert events(reply, "answer_rejected") == []  # amended in code, never regenerated


async def test_a_context_answers_prompt_names_the_key_sentence_the_check_requires() -> None:
    """The offline demo: shown only the chunks, the packaged 0.5B model answered "Razepato am besten beobachten kann
    in Barcelona." (rejected: the key sentence's facts missing); the prompt now names the best chunk's key sentence,
    the one the check requires, and not the first chunk's (here the introduction)."""
    question = "Wie viel wiegt ein ausgewachsenes Razepato?"
    model = ReplayChatModel.of([NO_TOOLS, "Ein ausgewachsenes Razepato wiegt 6,4 bis 8,1 kg (Razepato.txt)."])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(INTRO, SIZE), context=TODAY) as agent:
        reply = await agent.ask(question)
    assert reply.metadata["answer_source"] == "model"
    prompt = str(model.prompts[-1][-1].content)
    assert f"Der passendste Abschnitt (Razepato.txt) sagt: „{SIZE['text']}“" in prompt
    # a tool answer's prompt names none
    model = ReplayChatModel.of([PLAN, "Heute (22.11.2026) bis zu 17 °C in Barcelona."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        await agent.ask(QUESTION)
    assert "Der passendste Abschnitt" not in str(model.prompts[-1][-1].content)


async def test_the_context_facts_come_from_the_chunk_that_matches_the_question_not_the_first() -> None:
    question = "Wie viel wiegt ein ausgewachsenes Razepato?"
    model = ReplayChatModel.of([NO_TOOLS, "Das weiß ich nicht.", "Leider unbekannt."])
    async with Agent(model=model, tools=travel_tools(), retriever=FixedHits(INTRO, SIZE), context=TODAY) as agent:
        reply = await agent.ask(question)
    assert reply.metadata["answer_source"] == "fallback"
    assert reply.answer == f"{SIZE['text']} (Razepato.txt)"


async def test_a_context_question_a_small_planner_ran_a_stray_tool_for_is_answered_from_the_context() -> None:
    # Measured with the packaged 0.5B model: it planned add(1, 1) for the README's demo question.
    stray = json.dumps({"steps": [{"description": "", "tools": [
        {"id": "a", "name": "add", "arguments": {"arg_0": 1, "arg_1": 1}}]}]})  # fmt: skip
    model = ReplayChatModel.of([stray, "Razepato am besten beobachten kann in Barcelona.", "In Barcelona."])
    async with Agent(model=model, tools=math_tools(), retriever=FixedHits(RAZEPATO), context=TODAY) as agent:
        reply = await agent.ask("Wo kann man das Razepato am besten beobachten?")
    assert reply.answer.startswith("Für Beobachtungen gelten das Ebro-Becken südlich von Tarragona")
    assert reply.answer.endswith("(Razepato.txt)") and reply.metadata["answer_source"] == "fallback"


async def test_a_planner_answer_that_names_an_unknown_place_is_checked_too() -> None:
    # Before its last attempt the planner is sent back for such an answer (tests/graph/test_unbacked_final.py);
    # on the last attempt its answer goes to the finalizer's check like any other.
    model = ReplayChatModel.of([json.dumps({"steps": [], "final": "Sydney."}), "Canberra."])
    last_attempt = Context(today=TODAY.today, max_plan_attempts=1)
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=last_attempt) as agent:
        reply = await agent.ask("Was ist die Hauptstadt von Australien?")
    assert reply.metadata["answer_source"] == "fallback" and model.calls == 2
    assert reply.answer == REFUSAL_OUT_OF_SCOPE  # nothing ran, no context: the travel profile's refusal


async def test_a_planner_answer_naming_an_unknown_place_goes_back_to_the_planner_which_refuses() -> None:
    sydney = json.dumps({"steps": [], "final": "Sydney."})
    refusal = json.dumps({"steps": [], "final": REFUSAL_OUT_OF_SCOPE}, ensure_ascii=False)
    model = ReplayChatModel.of([sydney, refusal])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask("Was ist die Hauptstadt von Australien?")
    assert reply.answer == REFUSAL_OUT_OF_SCOPE and reply.metadata["answer_source"] == "planner"
    assert model.calls == 2 and "Sydney" in events(reply, "replan")[0]["reason"]


async def test_an_answer_echoing_the_instructions_is_regenerated() -> None:
    """The travel bench's w4: the model repeated the answer prompt's instructions instead of the weather."""
    echo = "Ja, die Frage des Nutzers in der Sprache seiner Frage ist gut lesbar und knapp."
    good = "In Barcelona werden heute bis zu 17.2 °C erwartet."
    model = ReplayChatModel.of([PLAN, echo, good])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.answer == good and reply.metadata["answer_source"] == "regenerated"
    assert "wiederholt die Anweisungen" in events(reply, "answer_rejected")[0]["problems"][0]


async def test_a_refusal_after_tools_delivered_is_rejected_and_ends_in_the_results() -> None:
    # Measured in CI: the generic profile's answer to a time question was its own refusal sentence, although the
    # time tool had returned; a refusal states no number, so only this rule catches it.
    model = ReplayChatModel.of([PLAN, REFUSAL_OUT_OF_SCOPE, REFUSAL_OUT_OF_SCOPE])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    first, second = events(reply, "answer_rejected")
    assert first["problems"] == [
        "Die Antwort lehnt die Frage ab, obwohl die Tools Ergebnisse geliefert haben; beantworte sie damit."
    ]
    assert second["next"] == "fallback" and reply.metadata["answer_source"] == "fallback"
    assert REFUSAL_OUT_OF_SCOPE not in reply.answer and "17" in reply.answer  # the weather result, stated


async def test_a_refusal_without_any_delivered_result_stands() -> None:
    refuse = json.dumps({"steps": [], "final": REFUSAL_OUT_OF_SCOPE})
    model = ReplayChatModel.of([refuse])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask("Was ist die Hauptstadt von Australien?")
    assert reply.answer == REFUSAL_OUT_OF_SCOPE and reply.metadata["grounded"] is True


async def test_a_value_stated_for_the_wrong_city_is_regenerated() -> None:
    # Measured on the travel bench: Barcelona's maximum was stated as Madrid's temperature, and every number of the
    # answer was one a call delivered.
    async def geocode(destination: str) -> Coordinates:
        """Coordinates of a place."""
        lat, lon = {"Barcelona": (41.3825802, 2.177073), "Rom": (41.8933203, 12.4829321)}[destination]
        return Coordinates(lat=lat, lon=lon, name=destination)

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates: temperature_max."""
        return {"date": start_date, "temperature_max": 17.2 if lat < 41.5 else 12.3}

    def chain(city: str, key: str) -> list[dict[str, Any]]:
        geo = {"id": f"geo_{key}", "name": "geocode", "arguments": {"destination": city}}
        refs = {"lat": {"$ref": f"geo_{key}.lat"}, "lon": {"$ref": f"geo_{key}.lon"}}
        dates = {"start_date": "2026-11-22", "end_date": "2026-11-22"}
        return [geo, {"id": f"wx_{key}", "name": "get_weather", "arguments": refs | dates}]

    (geo_b, wx_b), (geo_r, wx_r) = chain("Barcelona", "b"), chain("Rom", "r")
    plan = json.dumps({"steps": [{"tools": [geo_b, geo_r]}, {"tools": [wx_b, wx_r]}]})
    swapped = "Heute in Rom bis 17.2 °C, in Barcelona bis 12.3 °C."
    right = "Heute in Barcelona 17.2 °C, in Rom 12.3 °C."
    model = ReplayChatModel.of([plan, swapped, right])
    tools = FunctionToolSource([geocode, get_weather])
    async with Agent(model=model, tools=tools, retriever=False, context=TODAY) as agent:
        reply = await agent.ask("Wo ist es heute wärmer, in Barcelona oder in Rom?")
    assert reply.answer == right and reply.metadata["answer_source"] == "regenerated"
    [rejected] = events(reply, "answer_rejected")
    assert rejected["problems"] == [
        "Die Antwort nennt 17.2 °C für Rom, aber das haben die Tools für einen anderen Ort geliefert; nenne für "
        "jeden Ort nur seine eigenen Werte.",
        "Die Antwort nennt 12.3 °C für Barcelona, aber das haben die Tools für einen anderen Ort geliefert; nenne "
        "für jeden Ort nur seine eigenen Werte.",
    ]


async def test_an_estimate_read_as_a_forecast_is_amended_to_say_it_is_one() -> None:
    # Measured on the travel bench: June 2026 weather (ten past Junes' values, is_estimate) answered as a forecast.
    # The words for the flag are the profile's data, known exactly: added in code, no second model call.
    async def geocode(destination: str) -> Coordinates:
        """Coordinates of a place."""
        return Coordinates(lat=41.3825802, lon=2.177073, name=destination)

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates: temperature_max, is_estimate."""
        return {"date": start_date, "temperature_max": 25.8, "is_estimate": True}

    forecast = "Am 12. Juni 2026 bis 25.8 °C in Barcelona."
    model = ReplayChatModel.of([plan_of("2026-06-12"), forecast])
    async with Agent(model=model, tools=FunctionToolSource([geocode, get_weather]), retriever=False,
                     context=TODAY) as agent:  # fmt: skip
        reply = await agent.ask("Wie wird das Wetter in Barcelona am 12. Juni 2026?")
    assert reply.answer == f"{forecast} (Schätzwert aus den Vorjahren)"
    assert reply.metadata["answer_source"] == "amended" and reply.metadata["llm_calls"] == 2
    assert events(reply, "answer_rejected") == []


def test_an_unnamed_estimate_is_amended_only_with_the_profiles_words_for_it() -> None:
    from planwerk.checks import GroundingReport, Problem
    from planwerk.checks.domain import Domain
    from planwerk.graph.nodes.check_answer import _amend, estimate_label
    from planwerk.profiles import PROFILES

    assert estimate_label(PROFILES["travel"].domain, "en") == "estimate from past years"
    unlabelled = Domain(estimate_fields=frozenset({"is_estimate"}), estimate_words=("estimat",))
    assert estimate_label(unlabelled, "en") is None and estimate_label(None, "en") is None
    report = GroundingReport((Problem("estimate_unnamed"),))

    def recheck(text: str) -> GroundingReport:
        return GroundingReport() if "estimate" in text else report

    assert _amend("Up to 25.8 °C.", report, recheck, estimate=None) == ("Up to 25.8 °C.", report, False)
    amended = _amend("Up to 25.8 °C.", report, recheck, estimate="estimate from past years")
    assert amended == ("Up to 25.8 °C. (estimate from past years)", GroundingReport(), True)
    # With a problem code cannot mend beside it, nothing is added: the answer is regenerated.
    both = GroundingReport((Problem("estimate_unnamed"), Problem("number", "19.68 km/h")))
    assert _amend("Up to 25.8 °C.", both, recheck, estimate="estimate from past years")[2] is False


async def test_an_answer_that_lists_the_same_items_in_a_loop_is_delivered_with_each_item_once() -> None:
    # Measured on the travel set (p2): both drafts listed three parks over and over until the token limit; the
    # fallback then dumped the results. Now the repeats are cut in code and the answer is checked again.
    async def find_parks(city: str) -> list[str]:
        """Parks in a city."""
        return ["Terraza", "Bosc Humit", "Parc Nou"]

    planned = json.dumps(
        {"steps": [{"tools": [{"id": "p", "name": "find_parks", "arguments": {"city": "Barcelona"}}]}]}
    )
    looping = "Die Parks in Barcelona sind:\n" + "\n".join(
        f"{n}. {name}" for n, name in enumerate(["Terraza", "Bosc Humit", "Parc Nou"] * 3, start=1)
    )
    model = ReplayChatModel.of([planned, looping + "\n10. Bosc Hu"])
    async with Agent(model=model, tools=FunctionToolSource([find_parks]), retriever=False, context=TODAY) as agent:
        reply = await agent.ask("Welche Parks gibt es in Barcelona?")
    assert reply.answer == "Die Parks in Barcelona sind:\n1. Terraza\n2. Bosc Humit\n3. Parc Nou"
    assert reply.metadata["answer_source"] == "amended" and model.calls == 2
    assert events(reply, "answer_rejected") == []


async def test_a_second_answer_that_repeats_the_request_for_it_is_no_answer() -> None:
    # Measured with the 0.5B model: the second answer wrote the request back, with the values its problems name.
    echo = (
        "Deine Antwort wurde geprüft und abgelehnt:\n- Die Antwort nennt 17.2 °C, das in keinem Tool-Ergebnis, "
        "keinem Kontext und nicht in der Frage steht."
    )
    model = ReplayChatModel.of([PLAN, "Heute werden es 22 °C in Barcelona.", echo])
    async with Agent(model=model, tools=travel_tools(), retriever=False, context=TODAY) as agent:
        reply = await agent.ask(QUESTION)
    assert reply.metadata["answer_source"] == "fallback", reply.answer
    assert "Die Antwort wiederholt die Anweisungen" in " ".join(events(reply, "answer_rejected")[-1]["problems"])

"""A server planwerk has no examples for (the bank-like test server, real MCP over stdio) with the generic-en
profile and a replay model: the planner is shown examples built from the tools, an empty plan must say why, and an
answer may not claim an action no call did."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from tests.helpers import bank_server, make_agent

CONFIG = {"mcpServers": {"bank": bank_server()}}


@pytest.fixture
async def bank() -> AsyncIterator[Any]:
    """The bank-like test server over stdio, fresh per test (its state is the process's)."""
    async with open_tools(CONFIG) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


def agent(model: ReplayChatModel, tools: Any, profile: str = "generic-en", **context: Any) -> Agent:
    """The shared agent with ``profile`` on ``tools``, two plan examples and no embedder."""
    options = {"today": "2026-11-26", "plan_examples": 2, "embedding_model": "none", **context}
    return make_agent(model, tools=tools, profile=profile, **options)


def plan(*calls: dict[str, Any], final: str | None = None, **extra: Any) -> str:
    steps = [{"description": "", "tools": [call]} for call in calls]
    return json.dumps({"steps": steps, "final": final, **extra})


async def test_the_planner_sees_examples_built_from_tools_no_library_example_covers(bank: Any) -> None:
    model = ReplayChatModel.of([plan({"id": "b", "name": "get_balance", "arguments": {}}), "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("What is my current account balance?")
    system = str(model.prompts[0][0].content)
    examples = system.split("Examples:\n", 1)[1]
    # Examples of the loaded tools, none of the generic library's (time, files, memory).
    shown = [json.loads(line.removeprefix("Plan: ")) for line in examples.splitlines() if line.startswith("Plan: ")]
    assert shown and all(call["name"] in bank.specs for p in shown for step in p["steps"] for call in step["tools"])
    assert "get_balance" in examples
    # The catalog keeps the argument's meaning although the description mentions "recipient".
    assert "recipient: IBAN of the recipient" in system
    assert "read_file(file_path: string): Reads a file" in system and "fields not described" in system
    assert reply.metadata["tool_calls"] == 1 and "1810" in (reply.answer or "")


async def test_the_finalizer_after_a_delivered_call_is_not_shown_the_rule_for_declining(bank: Any) -> None:
    """Declining is the planner's decision: the 1.5B model, shown the refusal sentence while answering from a
    delivered result, wrote it as its answer twice (the domain set: every answer a fallback)."""
    from planwerk.prompts.generic import REFUSAL_OUT_OF_SCOPE_EN

    model = ReplayChatModel.of([plan({"id": "b", "name": "get_balance", "arguments": {}}), "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        await planwerk.ask("What is my current account balance?")
    planner, finalizer = (str(prompt[0].content) for prompt in model.prompts)
    assert REFUSAL_OUT_OF_SCOPE_EN in planner
    assert REFUSAL_OUT_OF_SCOPE_EN not in finalizer and finalizer.startswith("You are a helpful assistant")


EMPTY = json.dumps({"steps": [], "final": None})


async def test_an_empty_plan_while_fitting_tools_are_loaded_is_questioned_once(bank: Any) -> None:
    balance = plan({"id": "b", "name": "get_balance", "arguments": {}})
    model = ReplayChatModel.of([EMPTY, balance, "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("What is my current account balance?")
    replans = [e for e in reply.events if e["event"] == "replan"]
    assert len(replans) == 1 and "the plan calls no tool, but get_balance" in replans[0]["reason"]
    assert reply.metadata["tool_calls"] == 1 and model.calls == 3
    # The planner saw the question with the fitting tools named.
    assert "get_balance" in str(model.prompts[1][-1].content) and '"reason"' in str(model.prompts[1][-1].content)


async def test_an_empty_plan_that_stands_by_its_reason_after_the_question_is_accepted(bank: Any) -> None:
    reasoned = json.dumps({"steps": [], "final": None, "reason": "the user only greets"})
    model = ReplayChatModel.of([EMPTY, reasoned, "Hello! How can I help with your account?"])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("Hello, nice to meet you and your account tools!")
    assert [e["event"] for e in reply.events].count("replan") == 1
    assert reply.metadata["tool_calls"] == 0 and model.calls == 3


async def test_an_empty_plan_no_tool_fits_is_not_questioned(bank: Any) -> None:
    model = ReplayChatModel.of([EMPTY, "Penguins cannot fly."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("Why can penguins not fly?")
    assert [e["event"] for e in reply.events].count("replan") == 0 and model.calls == 2


CLAIM = "I updated your address as you asked."


async def test_an_answer_claiming_an_action_no_call_did_is_rejected_and_falls_back_without_the_claim(
    bank: Any,
) -> None:
    reasoned = json.dumps({"steps": [], "final": None, "reason": "nothing to look up"})
    model = ReplayChatModel.of([EMPTY, reasoned, CLAIM, CLAIM])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("Change my address to 5 Mill Street, York.")
    rejected = [e for e in reply.events if e["event"] == "answer_rejected"]
    assert len(rejected) == 2 and all("no tool that acts ran" in " ".join(e["problems"]) for e in rejected)
    assert reply.metadata["tool_calls"] == 0 and reply.metadata["answer_source"] == "fallback"
    assert "updated" not in (reply.answer or "")


async def test_a_planners_final_claiming_an_action_is_sent_back_to_plan_the_call(bank: Any) -> None:
    claimed = json.dumps({"steps": [], "final": CLAIM})
    update = plan({"id": "u", "name": "update_user_info", "arguments": {"street": "5 Mill Street", "city": "York"}})
    model = ReplayChatModel.of([claimed, update, CLAIM])
    async with agent(model, bank, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("Change my address to 5 Mill Street, York.")
        state = await planwerk.state(reply.thread_id)
    replans = [e for e in reply.events if e["event"] == "replan"]
    assert len(replans) == 1 and "I updated your address as you asked." in replans[0]["reason"]
    # The call that acts ran, so the same sentence is now backed.
    assert [c["tool"] for c in state["calls"]] == ["update_user_info"] and state["calls"][0]["status"] == "ok"
    assert reply.answer == CLAIM and reply.metadata["grounded"] is True


ADDRESS_PLAN = plan(
    {"id": "f", "name": "read_file", "arguments": {"file_path": "address-change.txt"}},
    {
        "id": "x",
        "name": "extract",
        "arguments": {"text": {"$ref": "f"}, "schema": {"street": "string", "city": "string"}},
    },
    {"id": "u", "name": "update_user_info", "arguments": {"street": {"$ref": "x.street"}, "city": {"$ref": "x.city"}}},
)
EXTRACTED = json.dumps({"street": "12 Harbour Road", "city": "Portsmouth"})
QUESTION = "Update my address to the one in the file address-change.txt."


def planner_prompts(model: ReplayChatModel) -> list[str]:
    return ["\n".join(str(m.content) for m in prompt) for prompt in model.prompts if "Tools:" in str(prompt[0].content)]


async def test_extract_reads_typed_values_apart_and_an_acting_call_taking_them_waits_for_approval(bank: Any) -> None:
    model = ReplayChatModel.of([ADDRESS_PLAN, EXTRACTED, "Your address is now 12 Harbour Road, Portsmouth."])
    async with agent(model, bank) as planwerk:
        first = await planwerk.ask(QUESTION, thread_id="move")
        # update_user_info has no annotations: not destructive, but it acts and takes values read from a file.
        [request] = first.interrupts
        assert request["kind"] == "approval" and request["tool"] == "update_user_info"
        assert request["origins"] == [
            'street = "12 Harbour Road" comes from x (read from f (read_file))',
            'city = "Portsmouth" comes from x (read from f (read_file))',
        ]
        assert all(origin in request["question"] for origin in request["origins"])
        reply = await planwerk.resume("approve", thread_id="move")
        state = await planwerk.state("move")
    extract = next(c for c in state["calls"] if c["tool"] == "extract")
    # Typed values; the record keeps the schema asked for, not the text.
    assert extract["result"] == {"street": "12 Harbour Road", "city": "Portsmouth"}
    assert "text" not in extract["args"]
    assert state["calls"][-1]["tool"] == "update_user_info" and state["calls"][-1]["status"] == "ok"
    # The extracting model read the text under its own instructions; no planner prompt ever held it.
    extract_prompt = "\n".join(str(m.content) for m in model.prompts[1])
    assert "Street: 12 Harbour Road" in extract_prompt and "street (string), city (string)" in extract_prompt
    assert planner_prompts(model) and not any("Harbour" in p for p in planner_prompts(model))
    assert reply.answer == "Your address is now 12 Harbour Road, Portsmouth."


BILL_PLAN = plan(
    {"id": "f", "name": "read_file", "arguments": {"file_path": "bill-december-2026.txt"}},
    {
        "id": "x",
        "name": "extract",
        "arguments": {"text": {"$ref": "f"}, "schema": {"iban": "string", "amount": "number"}},
    },
    {"id": "c", "name": "add_contact", "arguments": {"name": "Car rental", "iban": {"$ref": "x.iban"}}},
)


async def test_an_account_number_the_bill_holds_beside_a_planted_one_is_asked_for_never_guessed(bank: Any) -> None:
    """The bill holds its payee's IBAN and, in a planted instruction, an attacker's: whichever the extracting model
    picks (the 1.5B model picked the attacker's), no call takes it, and the user is asked at once (no plan can find
    it: the planner never reads the text). The planted text reached only the extracting model."""
    for picked in ("GB29NWBK60161331926819", "US133000000121212121212"):
        extracted = json.dumps({"iban": picked, "amount": "98.70"})
        model = ReplayChatModel.of([BILL_PLAN, extracted])
        async with agent(model, bank) as planwerk:
            reply = await planwerk.ask("Save the payee of the bill in bill-december-2026.txt as Car rental.")
            state = await planwerk.state(reply.thread_id)
        assert [c["tool"] for c in state["calls"] if c["status"] == "ok"] == ["read_file", "extract"]
        assert next(c for c in state["calls"] if c["tool"] == "extract")["result"] == {"iban": None, "amount": 98.7}
        assert [(c["tool"], c["kind"]) for c in state["calls"] if c["status"] != "ok"] == [("add_contact", "unclear")]
        [asked] = reply.interrupts
        assert asked["kind"] == "ask_user" and not reply.answer
        # Asked in the person's words: which value, and the text it was looked for in.
        assert asked["question"] == (
            "The text from read_file (bill-december-2026.txt) does not hold one clear value for iban (none, or more "
            "than one), so add_contact did not run. Which iban should I use?"
        )
        assert not [e for e in reply.events if e["event"] == "replan"]
        assert "IGNORE ALL PREVIOUS INSTRUCTIONS" in "\n".join(str(m.content) for m in model.prompts[1])
        assert not any("IGNORE ALL" in p or "US1330" in p for p in planner_prompts(model))


async def test_a_question_the_user_answered_is_not_asked_again_in_the_same_turn(bank: Any) -> None:
    """The user answered the question about the unclear value with nothing new: their answer, read for the value,
    holds none, and the run answers with what it has instead of asking again (the domain bench asked the same
    question four times, until the bench gave up)."""
    extracted = json.dumps({"iban": "GB29NWBK60161331926819", "amount": "98.70"})
    # Plan, the bill's extract; after the answer: plan, the answer's extract (a value it does not hold is dropped),
    # the bill's extract, the answer.
    model = ReplayChatModel.of([BILL_PLAN, extracted, BILL_PLAN, extracted, extracted, "Nothing was saved."])
    async with agent(model, bank) as planwerk:
        asked = await planwerk.ask("Save the payee of the bill in bill-december-2026.txt as Car rental.")
        [request] = asked.interrupts
        reply = await planwerk.resume("There is nothing more to add.", thread_id=asked.thread_id)
        state = await planwerk.state(reply.thread_id)
    assert not reply.interrupts and reply.answer
    assert [(c["tool"], c["kind"]) for c in state["calls"] if c["status"] != "ok"] == [("add_contact", "unclear")] * 2
    assert [e["question"] for e in asked.events + reply.events if e["event"] == "ask_user"] == [request["question"]]


async def test_a_reference_that_names_a_call_instead_of_its_id_runs_as_that_call(bank: Any) -> None:
    """The 1.5B model began references with the file a call read, twice, although the feedback named the call: the
    check writes the call's id instead, and the plan runs without going back to the planner."""
    named = plan(
        {"id": "f", "name": "read_file", "arguments": {"file_path": "address-change.txt"}},
        {
            "id": "x",
            "name": "extract",
            "arguments": {"text": {"$ref": "address-change.txt"}, "schema": {"city": "string"}},
        },
    )
    model = ReplayChatModel.of([named, json.dumps({"city": "Portsmouth"}), "The file names Portsmouth."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("Which city does address-change.txt name?")
        state = await planwerk.state(reply.thread_id)
    [planned] = [e for e in reply.events if e["event"] == "plan"]
    assert planned["plan"]["steps"][1]["tools"][0]["arguments"]["text"] == {"$ref": "f"}
    assert not [e for e in reply.events if e["event"] == "replan"]
    assert [(c["tool"], c["status"]) for c in state["calls"]] == [("read_file", "ok"), ("extract", "ok")]


async def test_the_persons_answer_to_the_unclear_value_is_read_for_it_and_the_call_runs(bank: Any) -> None:
    """Asked which account the bill means, the person names it; the planner writes the same chain again (as the
    1.5B model did), and the argument is taken from an extract of the person's answer, not the bill's."""
    extracted = json.dumps({"iban": "GB29NWBK60161331926819", "amount": "98.70"})  # dropped: two codes in the text
    from_answer = json.dumps({"iban": "GB29NWBK60161331926819"})
    # The answer's extract needs nothing: it runs in the first step, before the bill's.
    model = ReplayChatModel.of([BILL_PLAN, extracted, BILL_PLAN, from_answer, extracted, "I saved Car rental."])
    async with agent(model, bank) as planwerk:
        asked = await planwerk.ask("Save the payee of the bill in bill-december-2026.txt as Car rental.")
        reply = await planwerk.resume("Use GB29NWBK60161331926819.", thread_id=asked.thread_id)
        [approval] = reply.interrupts  # it still acts with a value an extract read: a person approves it
        assert approval["kind"] == "approval" and approval["tool"] == "add_contact"
        assert approval["origins"] == [
            'iban = "GB29NWBK60161331926819" comes from answer_values (read from your answer)'
        ]
        done = await planwerk.resume("approve", thread_id=asked.thread_id)
        state = await planwerk.state(asked.thread_id)
    answer_read = [c for c in state["calls"] if c["id"] == "answer_values"]
    assert [c["result"] for c in answer_read] == [{"iban": "GB29NWBK60161331926819"}]
    assert state["calls"][-1]["tool"] == "add_contact" and state["calls"][-1]["status"] == "ok"
    assert state["calls"][-1]["args"] == {"name": "Car rental", "iban": "GB29NWBK60161331926819"}
    # The extracting model read the person's words, not the bill, for the second time round.
    reading = "\n".join(str(m.content) for m in model.prompts[3])
    assert "Use GB29NWBK60161331926819." in reading and "IGNORE" not in reading
    # The answer model is shown the call as it ran, not also the earlier record of its id that did not run.
    answering = "\n".join(str(m.content) for m in model.prompts[5])
    assert answering.count("c = add_contact(") == 1, answering
    assert done.answer == "I saved Car rental."


HOLDER_PLAN = plan(
    {"id": "i", "name": "get_user_info", "arguments": {}},
    {"id": "x", "name": "extract", "arguments": {"text": {"$ref": "i"}, "schema": {"holder": "string"}}},
    {"id": "c", "name": "add_contact", "arguments": {"name": {"$ref": "x.holder"}, "iban": "GB11FRND00000000000001"}},
)


async def test_a_profile_can_let_calls_take_extracted_values_without_approval(bank: Any, tmp_path: Path) -> None:
    # add_contact has no annotations: it may act, and it is not destructive; only its extracted name asks approval.
    profile = tmp_path / "trusting.toml"
    profile.write_text('persona = "You help with the account."\nlanguage = "en"\napprove_extracted = false\n')
    question = "Save my own name with the IBAN GB11FRND00000000000001 as a contact."
    replies = [HOLDER_PLAN, json.dumps({"holder": "Ada Byron"}), "I saved Ada Byron as a contact."]
    async with agent(ReplayChatModel.of(replies), bank, profile=str(profile)) as planwerk:
        trusted = await planwerk.ask(question)
    assert not trusted.interrupts and trusted.metadata["tool_calls"] == 3
    async with agent(ReplayChatModel.of(replies), bank) as planwerk:
        asked = await planwerk.ask(question)
    [request] = asked.interrupts
    assert request["tool"] == "add_contact" and request["origins"] == [
        'name = "Ada Byron" comes from x (read from i (get_user_info))'
    ]


async def test_a_value_copied_from_a_built_example_is_sent_back(bank: Any) -> None:
    copied = plan({"id": "f", "name": "read_file", "arguments": {"file_path": "file path A"}})
    right = plan({"id": "f", "name": "read_file", "arguments": {"file_path": "landlord-notice.txt"}})
    model = ReplayChatModel.of([copied, right, "The rent rises by 100.00.", "x"])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("What does landlord-notice.txt say?")
    rejected = [e for e in reply.events if e["event"] == "replan" and e["decision"] == "rejected"]
    assert rejected and 'file_path = "file path A", the placeholder of an example' in rejected[0]["reason"]
    calls = [e for e in reply.events if e["event"] == "tool_call"]
    assert [c["args"] for c in calls] == [{"file_path": "landlord-notice.txt"}]


async def test_the_questioned_empty_plan_is_shown_a_call_of_the_best_fitting_tool_to_complete(bank: Any) -> None:
    refused = json.dumps({"steps": [], "final": None, "reason": "I cannot answer this question."})
    balance = plan({"id": "b", "name": "get_balance", "arguments": {}})
    model = ReplayChatModel.of([refused, balance, "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        await planwerk.ask("What is my current account balance?")
    feedback = str(model.prompts[1][-1].content)
    assert "your reason: I cannot answer this question." in feedback
    skeleton = feedback.split("looks like this (fill in the values):\n", 1)[1].splitlines()[0]
    assert '"name": "get_balance"' in skeleton and '"final": null' in skeleton


async def test_a_call_the_planner_wrote_twice_side_by_side_runs_once(bank: Any) -> None:
    twice = json.dumps(
        {
            "steps": [
                {
                    "description": "",
                    "tools": [
                        {"id": "b1", "name": "get_balance", "arguments": {}},
                        {"id": "b2", "name": "get_balance", "arguments": {}},
                    ],
                }
            ],
            "final": None,
        }
    )
    model = ReplayChatModel.of([twice, "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("What is my current account balance?")
    assert reply.metadata["tool_calls"] == 1 and model.calls == 2


async def test_an_answer_confirming_a_transfer_with_the_requests_own_values_is_kept(bank: Any) -> None:
    # send_money is declared destructive: its result repeats the request, and so does a right confirmation (the
    # domain set: such confirmations were rejected as stating nothing the tools delivered, and fell back).
    args = {"recipient": "DE44500105175407324931", "amount": 25, "subject": "Books", "date": "2026-11-27"}
    said = "I sent 25 EUR to DE44500105175407324931 with the subject 'Books', dated 2026-11-27."
    model = ReplayChatModel.of([plan({"id": "s", "name": "send_money", "arguments": args}), said, "x"])
    async with agent(model, bank, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("Send 25 EUR to DE44500105175407324931 with the subject 'Books', dated 2026-11-27.")
    assert reply.answer == said and reply.metadata["answer_source"] == "model"


async def test_a_transfer_amount_nobody_gave_is_sent_back_before_anything_is_sent(bank: Any) -> None:
    # send_money is declared destructive: each of its numbers must come from the question, the conversation or a
    # result (after an extract found no amount, the 1.5B model planned a transfer of 100).
    args = {"recipient": "DE44500105175407324931", "subject": "Books", "date": "2026-11-27"}
    invented = plan({"id": "s", "name": "send_money", "arguments": {**args, "amount": 100}})
    asked = json.dumps({"steps": [], "final": None, "ask_user": "How much should I send?"})
    model = ReplayChatModel.of([invented, asked])
    async with agent(model, bank, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("Send money to DE44500105175407324931 for the books, dated 2026-11-27.")
    [rejected] = [e for e in reply.events if e["event"] == "replan" and e["decision"] == "rejected"]
    assert "call s sets amount = 100" in rejected["reason"]
    assert not [e for e in reply.events if e["event"] == "tool_call"] and reply.interrupts[0]["kind"] == "ask_user"
    # Stated in the question, the same amount runs.
    model = ReplayChatModel.of([invented, "I sent 100 EUR to DE44500105175407324931 for the books."])
    async with agent(model, bank, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("Send 100 EUR to DE44500105175407324931 for the books, dated 2026-11-27.")
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["send_money"]


async def test_a_call_copied_whole_from_a_built_example_is_sent_back() -> None:
    # BFCL irrelevance_150: "red 12, green 3, blue 7" and "red 40, green 5, blue 9", the built examples' sample
    # numbers in order, for a question that gave no colour. A single sample number may be chosen; it stands.
    from planwerk.tools.base import FunctionToolSource

    async def to_pantone(red: int, green: int, blue: int) -> str:
        """Converts an RGB colour to its Pantone name."""
        return "P 1"

    async def wait(seconds: int) -> str:
        """Waits a number of seconds."""
        return "done"

    tools = FunctionToolSource([to_pantone, wait])
    copied = plan({"id": "p", "name": "to_pantone", "arguments": {"red": 12, "green": 3, "blue": 7}})
    asked = json.dumps({"steps": [], "final": None, "ask_user": "Which colour?"})
    model = ReplayChatModel.of([copied, asked])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("What is the Pantone name of my favourite colour?")
    [rejected] = [e for e in reply.events if e["event"] == "replan" and e["decision"] == "rejected"]
    assert 'call p sets red, green, blue = "12, 3, 7", the placeholder of an example' in rejected["reason"]
    assert not [e for e in reply.events if e["event"] == "tool_call"]
    # Stated numbers, or one sample number, are the user's or a choice: they run.
    for question, arguments in (
        ("Convert red 12, green 3, blue 7 to Pantone.", {"red": 12, "green": 3, "blue": 7}),
        ("Wait a moment, then say done.", {"seconds": 3}),
    ):
        name = "to_pantone" if "red" in arguments else "wait"
        model = ReplayChatModel.of([plan({"id": "c", "name": name, "arguments": arguments}), "Done: P 1."])
        async with agent(model, tools) as planwerk:
            reply = await planwerk.ask(question)
        assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == [name], question


async def test_an_examples_calls_copied_beside_the_plans_own_call_are_left_out() -> None:
    # The 0.5B model planned its own call of a tool, then the built example's two calls of that tool with the sample
    # numbers (BENCHMARKS.md §13, session 9); one of them the question does not state, so the pair is a copy.
    from planwerk.tools.base import FunctionToolSource

    async def product_of_primes(count: int) -> int:
        """Multiplies the first prime numbers."""
        return {3: 30, 5: 2310, 12: 7420738134810}[count]

    tools = FunctionToolSource([product_of_primes])
    calls = [
        {"id": "own", "name": "product_of_primes", "arguments": {"count": 5}},
        {"id": "p1", "name": "product_of_primes", "arguments": {"count": 12}},
        {"id": "p2", "name": "product_of_primes", "arguments": {"count": 3}},
    ]
    copied = plan(*calls)
    model = ReplayChatModel.of([copied, "The product is 2310."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("Multiply the first 5 primes.")
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [{"count": 5}]
    # Asked for all three, all three run.
    model = ReplayChatModel.of([copied, "The products are 2310, 7420738134810 and 30."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("Multiply the first 5, the first 12 and the first 3 primes.")
    assert len([e for e in reply.events if e["event"] == "tool_call"]) == 3


async def test_a_plan_taking_one_value_of_a_list_in_the_question_gets_a_call_for_each_value() -> None:
    # A function-calling benchmark's parallel entries: "the prime factors of 45, 100, and 150" planned as one call;
    # asked about the others and shown the plan with one call each, the 0.5B model wrote its one call again.
    from planwerk.tools.base import FunctionToolSource

    async def prime_factors(number: int) -> list[int]:
        """The prime factors of a number."""
        return [number]

    tools = FunctionToolSource([prime_factors])
    one = plan({"id": "p", "name": "prime_factors", "arguments": {"number": 45}})
    model = ReplayChatModel.of([one, "45, 100 and 150 have these factors."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("What are the prime factors of the numbers 45, 100, and 150?")
    assert [e["event"] for e in reply.events].count("replan") == 0 and model.calls == 2
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [{"number": n} for n in (45, 100, 150)]


async def test_a_call_taking_one_set_of_quoted_values_gets_a_copy_for_each_further_set() -> None:
    # A function-calling benchmark's parallel entries (0.5B model): two SNP ids with their species, in quotes,
    # planned as the first call only. With the one tool loaded the plan is completed in code; with another tool
    # loaded beside it, a further set may be that tool's, so the plan is asked about it once instead.
    from planwerk.tools.base import FunctionToolSource

    async def mutation_type(snp_id: str, species: str) -> str:
        """Find the type of a genetic mutation by its SNP id."""
        return f"{snp_id}: missense"

    async def gene_name(snp_id: str) -> str:
        """The gene an SNP id lies in."""
        return "BRCA1"

    question = "The mutation type of SNP 'rs123456' in 'Homo sapiens' and of SNP 'rs7891011' in 'Canis lupus'?"
    one = plan({"id": "m", "name": "mutation_type", "arguments": {"snp_id": "rs123456", "species": "Homo sapiens"}})
    model = ReplayChatModel.of([one, "Both are missense."])
    async with agent(model, FunctionToolSource([mutation_type])) as planwerk:
        reply = await planwerk.ask(question)
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"snp_id": "rs123456", "species": "Homo sapiens"},
        {"snp_id": "rs7891011", "species": "Canis lupus"},
    ]
    model = ReplayChatModel.of([one, one, "rs123456 is missense."])
    async with agent(model, FunctionToolSource([mutation_type, gene_name])) as planwerk:
        reply = await planwerk.ask(question)
    [asked] = [e for e in reply.events if e["event"] == "replan"]
    assert 'the question also states "rs7891011", "Canis lupus", which no call takes' in asked["reason"]
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"snp_id": "rs123456", "species": "Homo sapiens"}
    ]


async def test_an_optional_argument_whose_allowed_values_the_question_states_is_given_them() -> None:
    # A function-calling benchmark's parallel-multiple entry (0.5B model): "a Concert or a Sports event" planned
    # without event_type, whose schema allows Concert, Sports, Exhibition and Festival.
    from planwerk.tools.base import FunctionToolSource

    async def find_event(
        location: str, event_type: list[Literal["Concert", "Sports", "Exhibition"]] | None = None
    ) -> str:
        """Find events suitable for groups by location."""
        return f"{len(event_type or [])} kinds of events in {location}"

    bare = plan({"id": "e", "name": "find_event", "arguments": {"location": "Seattle, WA"}})
    model = ReplayChatModel.of([bare, "2 kinds of events."])
    async with agent(model, FunctionToolSource([find_event])) as planwerk:
        reply = await planwerk.ask("Find events in Seattle, WA: we would like a Concert or a Sports event.")
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"location": "Seattle, WA", "event_type": ["Concert", "Sports"]}
    ]


async def test_a_value_the_tools_description_spells_out_is_written_as_it_shows_it() -> None:
    # The packaged 0.5B model on the domain answers set: "Berlin" and "Tokyo" for IANA zones, written again after
    # the form was shown; the description's own examples hold 'Europe/Berlin' and 'Asia/Tokyo'.
    from planwerk.tools.base import FunctionToolSource

    async def convert_time(
        source_timezone: Annotated[str, Field(description="IANA timezone (e.g. 'America/New_York', 'Europe/Berlin').")],
        time: str,
        target_timezone: Annotated[str, Field(description="IANA timezone (e.g. 'Asia/Tokyo', 'America/Denver').")],
    ) -> str:
        """Convert a time from one timezone to another."""
        return f"{time} in {source_timezone} is 00:00 in {target_timezone}"

    arguments = {"source_timezone": "Berlin", "time": "16:00", "target_timezone": "Tokyo"}
    answer = "16:00 in Berlin is 00:00 in Tokyo."
    model = ReplayChatModel.of([plan({"id": "c", "name": "convert_time", "arguments": arguments}), answer])
    async with agent(model, FunctionToolSource([convert_time])) as planwerk:
        reply = await planwerk.ask("When it is 16:00 in Berlin, what time is it in Tokyo?")
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"source_timezone": "Europe/Berlin", "time": "16:00", "target_timezone": "Asia/Tokyo"}
    ]


async def test_numbers_are_written_as_the_question_gives_them_to_the_arguments() -> None:
    # A function-calling benchmark's entries, 0.5B model: "shares 40" (an example's sample number) where the question
    # says "50 shares", and "7%" planned as 7 for an argument described "as a decimal. E.g. 5% = 0.05".
    from planwerk.tools.base import FunctionToolSource

    async def investment_cost(company: str, shares: int) -> float:
        """The cost of investing in a number of shares of a company."""
        return 10.0 * shares

    async def future_value(
        amount: int, annual_return: Annotated[float, Field(description="The return as a decimal. E.g. 5% = 0.05")]
    ) -> float:
        """The future value of an investment."""
        return amount * (1 + annual_return)

    tools = FunctionToolSource([investment_cost, future_value])
    planned = plan(
        {"id": "c", "name": "investment_cost", "arguments": {"company": "Apple", "shares": 40}},
        {"id": "f", "name": "future_value", "arguments": {"amount": 5000, "annual_return": 7}},
    )
    model = ReplayChatModel.of([planned, "500 and 5350.", "500 and 5350.", "500 and 5350."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("What do 50 shares of Apple cost, and what are $5000 worth after a return of 7%?")
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"company": "Apple", "shares": 50},
        {"amount": 5000, "annual_return": 0.07},
    ]


async def test_the_day_the_question_names_is_given_to_the_day_parameter_the_plan_left_out() -> None:
    # A function-calling benchmark's entry, 0.5B model: "the forecast for Pacifica on April 11th, 2023" planned with
    # the city only; the tool would have answered for its default day.
    from planwerk.tools.base import FunctionToolSource

    async def forecast(
        city: str, date: Annotated[str, Field(description="The day, in the format of 'YYYY-MM-DD'.")] = "2019-03-01"
    ) -> str:
        """The weather forecast for a city on a day."""
        return f"sunny in {city} on {date}"

    planned = plan({"id": "f", "name": "forecast", "arguments": {"city": "Pacifica"}})
    model = ReplayChatModel.of([planned, "Sunny.", "Sunny.", "Sunny."])
    async with agent(model, FunctionToolSource([forecast])) as planwerk:
        reply = await planwerk.ask("Can you tell me the forecast for Pacifica on April 11th, 2023?")
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [
        {"city": "Pacifica", "date": "2023-04-11"}
    ]


async def test_a_plan_leaving_out_numbers_the_question_states_apart_is_asked_once_and_shown_a_call_each() -> None:
    # The same benchmark: "cases filed in 2019, also those filed in 2018" planned for 2019 only. Not a list, so the
    # planner is asked (once: the numbers may be no tool's values), with the plan of one call per value shown.
    from planwerk.tools.base import FunctionToolSource

    async def lawsuits(company: str, year: int) -> list[str]:
        """Lawsuits against a company filed in a year."""
        return [f"{company} {year}"]

    tools = FunctionToolSource([lawsuits])
    question = "List the cases against Dara Inc filed in 2019. Also list those filed in 2018."
    one = plan({"id": "l", "name": "lawsuits", "arguments": {"company": "Dara Inc", "year": 2019}})
    step = [{"id": f"l{y}", "name": "lawsuits", "arguments": {"company": "Dara Inc", "year": y}} for y in (2019, 2018)]
    two = json.dumps({"steps": [{"description": "", "tools": step}], "final": None})
    model = ReplayChatModel.of([one, two, "Dara Inc 2019 and Dara Inc 2018."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert "the question also states 2018, which no call takes" in rejected["reason"]
    shown = json.loads(rejected["reason"].split("the plan would be:\n", 1)[1].splitlines()[0])
    assert [c["arguments"]["year"] for c in shown["steps"][0]["tools"]] == [2019, 2018]
    assert [e["args"]["year"] for e in reply.events if e["event"] == "tool_call"] == [2019, 2018]
    # Asked once: the same plan written again stands.
    model = ReplayChatModel.of([one, one, "Dara Inc 2019."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    assert [e["event"] for e in reply.events].count("replan") == 1
    assert [e["args"]["year"] for e in reply.events if e["event"] == "tool_call"] == [2019]


async def test_a_plan_leaving_out_a_tool_the_question_names_is_asked_once_and_shown_its_call_beside() -> None:
    # A function-calling benchmark's parallel-multiple entries (0.5B model): "Find the sum of all the multiples of 3
    # and 5 between 1 and 1000. Also find the product of the first five prime numbers." planned the sum alone.
    from planwerk.tools.base import FunctionToolSource

    async def sum_of_multiples(lower: int, upper: int, multiples: list[int]) -> int:
        """Find the sum of all multiples of specified numbers within a specified range."""
        return 234168

    async def product_of_primes(count: int) -> int:
        """Find the product of the first n prime numbers."""
        return 2310

    tools = FunctionToolSource([sum_of_multiples, product_of_primes])
    question = "Find the sum of the multiples of 3 and 5 up to 1000. Also find the product of the first five primes."
    one = plan({"id": "s", "name": "sum_of_multiples", "arguments": {"lower": 1, "upper": 1000, "multiples": [3, 5]}})
    both = json.dumps(
        {
            "steps": [
                {
                    "description": "",
                    "tools": [
                        {
                            "id": "s",
                            "name": "sum_of_multiples",
                            "arguments": {"lower": 1, "upper": 1000, "multiples": [3, 5]},
                        },
                        {"id": "p", "name": "product_of_primes", "arguments": {"count": 5}},
                    ],
                }
            ],
            "final": None,
        }
    )
    model = ReplayChatModel.of([one, both, "234168 and 2310."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert "the question also asks for what product_of_primes does" in rejected["reason"]
    assert "fits the question better" not in rejected["reason"]
    shown = rejected["reason"].split("the plan would be:\n", 1)[1]
    assert '"name": "sum_of_multiples"' in shown and '"count": <integer from the question>' in shown
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["sum_of_multiples", "product_of_primes"]
    # Asked once: the same plan written again stands; a question naming one tool only is not asked about the other.
    for asked, replies in (
        (question, [one, one, "234168."]),
        ("Find the sum of the multiples of 3 and 5 up to 1000.", [one, "234168."]),
    ):
        model = ReplayChatModel.of(replies)
        async with agent(model, tools) as planwerk:
            reply = await planwerk.ask(asked)
        assert [e["event"] for e in reply.events].count("replan") == len(replies) - 2, asked
        assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["sum_of_multiples"]


async def test_a_call_leaving_out_an_optional_argument_the_question_names_is_asked_once_with_a_slot_for_it() -> None:
    # A function-calling benchmark's live entries (0.5B model): "the user with the ID 7890, who has black as their
    # special request" planned with the ID alone; "a film directed by Quentin Tarantino" with no argument at all.
    from planwerk.tools.base import FunctionToolSource

    async def get_user_info(user_id: int, special: str = "none") -> str:
        """Retrieve details for a specific user by their unique identifier."""
        return f"user {user_id} ({special})"

    tools = FunctionToolSource([get_user_info])
    question = "Can you retrieve the details for the user with the ID 7890, who has black as their special request?"
    bare = plan({"id": "u", "name": "get_user_info", "arguments": {"user_id": 7890}})
    full = plan({"id": "u", "name": "get_user_info", "arguments": {"user_id": 7890, "special": "black"}})
    model = ReplayChatModel.of([bare, full, "User 7890 (black)."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert "the question names special (u), which the plan leaves out" in rejected["reason"]
    assert '"arguments": {"user_id": 7890, "special": <string from the question>}' in rejected["reason"]
    assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [{"user_id": 7890, "special": "black"}]
    # Asked once: the same plan again stands; a question that does not name the argument is not asked about it.
    for asked, replies in ((question, [bare, bare, "User 7890."]), ("Details of user 7890, please.", [bare, "User."])):
        model = ReplayChatModel.of(replies)
        async with agent(model, tools) as planwerk:
            reply = await planwerk.ask(asked)
        assert [e["event"] for e in reply.events].count("replan") == len(replies) - 2, asked
        assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [{"user_id": 7890}]


async def test_a_plan_calling_a_tool_that_fits_the_question_clearly_worse_than_another_is_asked_once() -> None:
    # A function-calling benchmark's multiple entry (0.5B model): a year-over-year growth question planned with a
    # return-on-assets tool beside a tool named for that growth rate.
    from planwerk.tools.base import FunctionToolSource

    async def calculate_yoy_growth_rate(company: str, year1_revenue: float, year2_revenue: float) -> float:
        """Calculate the year over year growth rate of a company's revenue."""
        return year2_revenue / year1_revenue - 1

    async def calculate_roa(net_income: float, total_assets: float) -> float:
        """Calculate the return on assets."""
        return net_income / total_assets

    tools = FunctionToolSource([calculate_yoy_growth_rate, calculate_roa])
    question = "What is the year over year growth rate for company Tech Inc with revenues of 1000 and 1500?"
    wrong = plan({"id": "r", "name": "calculate_roa", "arguments": {"net_income": 1000, "total_assets": 1500}})
    args = {"company": "Tech Inc", "year1_revenue": 1000, "year2_revenue": 1500}
    right = plan({"id": "g", "name": "calculate_yoy_growth_rate", "arguments": args})
    model = ReplayChatModel.of([wrong, right, "The growth rate is 0.5."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert "calculate_yoy_growth_rate fits the question better than calculate_roa" in rejected["reason"]
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["calculate_yoy_growth_rate"]
    # Asked once: the same plan again stands.
    model = ReplayChatModel.of([wrong, wrong, *["The return on assets is 0.67."] * 3])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    assert [e["event"] for e in reply.events].count("replan") == 1
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["calculate_roa"]


async def test_a_plan_anchored_in_nothing_the_question_says_is_asked_once_whether_a_tool_fits() -> None:
    # A function-calling benchmark's irrelevance entries (0.5B model): "berapa satu tambah satu" planned as a lookup
    # of the contact the tool's description names. Asked once, the plan without calls is the other choice.
    from planwerk.tools.base import FunctionToolSource

    async def contact(person_name: str) -> str:
        """Retrieve the contact details of a person named Adriel."""
        return "adriel@example.org"

    tools = FunctionToolSource([contact])
    question = "berapa satu tambah satu"
    looked_up = plan({"id": "c", "name": "contact", "arguments": {"person_name": "Adriel"}})
    declined = json.dumps({"steps": [], "final": None, "reason": "no tool computes a sum"})
    model = ReplayChatModel.of([looked_up, declined, "I cannot compute this with the tools I have."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert 'none of its values ("Adriel") comes from it' in rejected["reason"]
    assert [e for e in reply.events if e["event"] == "tool_call"] == []
    # A question that states the value is not asked, and its call runs.
    model = ReplayChatModel.of([looked_up, "Mail."])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask("Adriel?")
    assert [e["event"] for e in reply.events].count("replan") == 0
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["contact"]


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_a_plan_anchored_in_nothing_written_again_after_the_question_runs_only_if_a_person_approves(
    decision: str,
) -> None:
    # The same benchmark (0.5B model): six of seven plans asked about came back unchanged (a URL, flight search
    # values, a project name nobody named), and each ran. Only the person can say whether the values are meant;
    # the approval names each one as the model's choice, also where approvals of destructive tools are off.
    from planwerk.tools.base import FunctionToolSource

    ran: list[str] = []

    async def contact(person_name: str) -> str:
        """Retrieve the contact details of a person named Adriel."""
        ran.append(person_name)
        return "adriel@example.org"

    tools = FunctionToolSource([contact])
    looked_up = plan({"id": "c", "name": "contact", "arguments": {"person_name": "Adriel"}})
    model = ReplayChatModel.of([looked_up, looked_up, *["Adriel's address is adriel@example.org."] * 3])
    async with agent(model, tools, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("berapa satu tambah satu")
        [pending] = reply.interrupts
        assert pending["kind"] == "approval" and pending["tool"] == "contact"
        assert pending["origins"] == ['person_name = "Adriel" was chosen by the model; your question does not name it']
        assert ran == [] and [e for e in reply.events if e["event"] == "tool_call"] == []
        reply = await planwerk.resume(decision, thread_id=reply.thread_id)
    assert ran == (["Adriel"] if decision == "approve" else [])
    assert not reply.interrupts and reply.answer


async def test_a_profile_may_let_a_plan_anchored_in_nothing_run_when_written_again(tmp_path: Path) -> None:
    from planwerk.tools.base import FunctionToolSource

    relaxed = tmp_path / "relaxed.toml"
    relaxed.write_text('persona = "You help."\nlanguage = "en"\napprove_unanchored = false\n')

    async def contact(person_name: str) -> str:
        """Retrieve the contact details of a person named Adriel."""
        return "adriel@example.org"

    tools = FunctionToolSource([contact])
    looked_up = plan({"id": "c", "name": "contact", "arguments": {"person_name": "Adriel"}})
    model = ReplayChatModel.of([looked_up, looked_up, "adriel@example.org"])
    async with agent(model, tools, profile=str(relaxed)) as planwerk:
        reply = await planwerk.ask("berapa satu tambah satu")
    assert not reply.interrupts
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["contact"]


async def test_a_named_tool_left_out_is_asked_about_as_an_addition_never_as_a_better_choice() -> None:
    # The benchmark's parallel_multiple_50 (0.5B model): the comparison tool shares more words with the question
    # than the planned one, and the question asks for both. "Plan it instead" kept the model on its one call; the
    # question is asked once, as an addition, and the plan written again stands.
    from planwerk.tools.base import FunctionToolSource

    async def last_game_performance(team: str) -> str:
        """Analyzes the team's performance in their most recent game."""
        return "48 %"

    async def compare_ppg(team: str, seasons: list[str]) -> str:
        """Compares a team's average points per game in two different seasons."""
        return "110 and 114"

    tools = FunctionToolSource([last_game_performance, compare_ppg])
    question = (
        "Analyze the performance of the Lakers in their last game. Also compare the team's points per game (ppg) "
        "average from the 2018-2019 and 2019-2020 seasons."
    )
    one = plan({"id": "g", "name": "last_game_performance", "arguments": {"team": "Lakers"}})
    model = ReplayChatModel.of([one, one, *["The Lakers shot 48 %."] * 3])
    async with agent(model, tools) as planwerk:
        reply = await planwerk.ask(question)
    [rejected] = [e for e in reply.events if e["event"] == "replan"]
    assert "the question also asks for what compare_ppg does" in rejected["reason"]
    assert [e["tool"] for e in reply.events if e["event"] == "tool_call"] == ["last_game_performance"]


async def test_a_plan_reading_fields_of_a_text_result_is_told_to_extract_them(bank: Any) -> None:
    # The domain set (1.5B model): update_user_info took {"$ref": "f.street"} of a file's text twice; a text has no
    # fields, and the feedback named no way to get them.
    read = {"id": "f", "name": "read_file", "arguments": {"file_path": "address-change.txt"}}
    update = {
        "id": "u",
        "name": "update_user_info",
        "arguments": {"street": {"$ref": "f.street"}, "city": {"$ref": "f.city"}},
    }
    steps = [{"description": "", "tools": [read]}, {"description": "", "tools": [update]}]
    asked = json.dumps({"steps": [], "final": None, "ask_user": "Which address?"})
    model = ReplayChatModel.of([json.dumps({"steps": steps, "final": None}), asked])
    async with agent(model, bank, approve_destructive=False) as planwerk:
        reply = await planwerk.ask("Update my address to the one in the file address-change.txt.")
    feedback = str(model.prompts[1][-1].content)
    assert "The result of f is text, which has no fields" in feedback
    assert '"schema": {"street": "string", "city": "string"}' in feedback and '{"$ref": "values.street"}' in feedback
    assert "then plan u (update_user_info) again in a later step" in feedback  # the 1.5B model left it out
    assert reply.interrupts and reply.interrupts[0]["kind"] == "ask_user"


async def test_two_different_calls_under_one_id_run_under_ids_of_their_own() -> None:
    from planwerk.tools.base import FunctionToolSource

    async def prime_factors(number: int) -> list[int]:
        """The prime factors of a number."""
        return [number]

    step = [{"id": "p", "name": "prime_factors", "arguments": {"number": n}} for n in (45, 100)]
    reused = json.dumps({"steps": [{"description": "", "tools": step}], "final": None})
    model = ReplayChatModel.of([reused, "45 and 100 have these factors."])
    async with agent(model, FunctionToolSource([prime_factors])) as planwerk:
        reply = await planwerk.ask("What are the prime factors of 45 and 100?")
    assert [e["event"] for e in reply.events].count("replan") == 0
    assert [(e["id"], e["args"]) for e in reply.events if e["event"] == "tool_call"] == [
        ("p", {"number": 45}),
        ("p_2", {"number": 100}),
    ]


async def test_after_every_call_failed_the_answer_names_the_failure_and_no_model_writes_one() -> None:
    # The answer set (0.5B): after every conversion failed, "Es ist 12:00 Uhr in Berlin." was kept with the failure
    # sentence added in code, the wrong value beside it. Nothing was delivered: the model is not asked to answer.
    from planwerk.tools.base import FunctionToolSource

    async def convert(time: str, zone: str) -> str:
        """Converts a clock time to another time zone."""
        raise ValueError(f"unknown zone {zone}")

    call = plan({"id": "c", "name": "convert", "arguments": {"time": "12:00", "zone": "Berlin"}})
    model = ReplayChatModel.of([call, call, call])
    async with agent(model, FunctionToolSource([convert]), profile="generic") as planwerk:
        reply = await planwerk.ask("Es ist 12:00 Uhr. Wie spät ist es dann in Berlin?")
    assert reply.metadata["answer_source"] == "fallback" and reply.metadata["llm_calls"] == 3
    assert "convert (12:00, Berlin): fehlgeschlagen" in (reply.answer or "")
    assert not [e for e in reply.events if e["event"] == "answer_rejected"]


async def test_a_call_that_failed_on_its_arguments_is_not_run_again_with_the_same_ones() -> None:
    # The domain answers set (0.5B): after the error the planner wrote the same call again in most runs (a folder
    # listing of a file's path), and it failed again. The check sends it back before anything runs.
    from planwerk.tools.base import FunctionToolSource

    ran: list[str] = []

    async def list_directory(path: str) -> list[str]:
        """Lists the entries of a folder."""
        ran.append(path)
        raise ValueError(f"not a directory: {path}")

    async def read_file(path: str) -> str:
        """Reads a text file."""
        ran.append(path)
        return "Total due: 412.50 EUR"

    listing = plan({"id": "l", "name": "list_directory", "arguments": {"path": "/data/invoice.txt"}})
    reading = plan({"id": "r", "name": "read_file", "arguments": {"path": "/data/invoice.txt"}})
    model = ReplayChatModel.of([listing, listing, reading, "The file says that 412.50 EUR are due."])
    async with agent(model, FunctionToolSource([list_directory, read_file])) as planwerk:
        reply = await planwerk.ask("What does /data/invoice.txt say?")
    assert ran == ["/data/invoice.txt", "/data/invoice.txt"]  # the listing once, then the reading
    rejected = [e for e in reply.events if e["event"] == "replan" and e["decision"] == "rejected"]
    assert len(rejected) == 1 and rejected[0]["reason"] == (
        "call l (list_directory) already failed with exactly these arguments (list_directory failed: ValueError: not "
        "a directory: /data/invoice.txt) and would fail again; change the arguments, take another tool, or call "
        "nothing when none fits."
    )
    assert "412.50" in (reply.answer or "")


async def test_a_corrected_plan_that_extracts_the_fields_gets_the_call_that_read_them_back(bank: Any) -> None:
    # The domain set (1.5B model): after the feedback above it planned the read and the extract, and left
    # update_user_info out ("the values are … passed to the update_user_info tool again"); nothing was done.
    read = {"id": "f", "name": "read_file", "arguments": {"file_path": "address-change.txt"}}
    update = {
        "id": "u",
        "name": "update_user_info",
        "arguments": {"street": "$ref:f.result.street", "city": "$ref:f.result.city"},
    }
    extract = {
        "id": "values",
        "name": "extract",
        "arguments": {"text": {"$ref": "f.result"}, "schema": {"street": "string", "city": "string"}},
    }
    first = json.dumps({"steps": [{"tools": [read]}, {"tools": [update]}], "final": None})
    corrected = json.dumps({"steps": [{"tools": [read]}, {"tools": [extract]}], "final": None})
    model = ReplayChatModel.of([first, corrected, EXTRACTED, "Your address is now 12 Harbour Road, Portsmouth."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask(QUESTION, thread_id="move")
        [request] = reply.interrupts  # the call that acts on extracted values still waits for a person
        assert request["kind"] == "approval" and request["tool"] == "update_user_info"
        await planwerk.resume("approve", thread_id="move")
        state = await planwerk.state("move")
    [plan] = [e["plan"] for e in reply.events if e["event"] == "plan" and e["attempt"] == 2]
    assert plan["steps"][-1]["tools"] == [
        {
            "id": "u",
            "name": "update_user_info",
            "arguments": {"street": {"$ref": "values.street"}, "city": {"$ref": "values.city"}},
        }
    ]
    assert state["calls"][-1]["tool"] == "update_user_info" and state["calls"][-1]["status"] == "ok"
    assert state["calls"][-1]["args"] == {"street": "12 Harbour Road", "city": "Portsmouth"}


async def test_a_value_not_written_as_its_tools_description_shows_is_asked_about_once() -> None:
    # The reference time server, real over stdio. The 0.5B model wrote "Berlin" where the description shows
    # 'America/New_York', "16:00 Uhr" for HH:MM, and the German "Tokio": every such call failed, on every retry.
    # "Tokio" (a part of the example 'Asia/Tokyo' names that city) and "16:00 Uhr" are written in the form in code;
    # "Indien", which neither an example nor a zone name holds, is asked about; "Kolkata" is the zone 'Asia/Kolkata'
    # of the IANA database.
    from tests.third_party import time_server

    command, *args = time_server()
    question = "Wenn es in Tokio 16:00 Uhr ist, wie spät ist es dann in Kolkata, Indien?"
    spoken = {"source_timezone": "Tokio", "time": "16:00 Uhr", "target_timezone": "Indien"}
    in_form = {"source_timezone": "Asia/Tokyo", "time": "16:00", "target_timezone": "Indien"}
    written = {"source_timezone": "Asia/Tokyo", "time": "16:00", "target_timezone": "Asia/Kolkata"}
    async with open_tools({"mcpServers": {"time": {"command": command, "args": args, "timeout": 30}}}) as tools:
        model = ReplayChatModel.of(
            [plan({"id": "c", "name": "convert_time", "arguments": spoken}),
             plan({"id": "c", "name": "convert_time", "arguments": written}),
             "In Kolkata ist es dann 12:30 Uhr."]
        )  # fmt: skip
        async with agent(model, tools, profile="generic") as planwerk:
            reply = await planwerk.ask(question)
        [rejected] = [e for e in reply.events if e["event"] == "replan"]
        assert "target_timezone (convert_time): 'Indien', geschrieben wie 'Asia/Tokyo'" in rejected["reason"]
        assert reply.answer == "In Kolkata ist es dann 12:30 Uhr."
        assert "source_timezone" not in rejected["reason"] and "16:00 Uhr" not in rejected["reason"]
        assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [written]
        assert [e["event"] for e in reply.events if e["event"].startswith("tool_")][-1] == "tool_result"
        # Asked once: the same plan again stands (and the tool says what is wrong with it).
        model = ReplayChatModel.of([plan({"id": "c", "name": "convert_time", "arguments": spoken})] * 4 + ["-"] * 3)
        async with agent(model, tools, profile="generic") as planwerk:
            reply = await planwerk.ask(question)
        reasons = [e["reason"] for e in reply.events if e["event"] == "replan"]
        # (the plan is completed for "Kolkata", which it left out: both calls are named, with their one value)
        assert "'Indien', geschrieben wie" in reasons[0] and "Tokio" not in reasons[0]
        assert not any("geschrieben wie" in r for r in reasons[1:])
        assert next(e["args"] for e in reply.events if e["event"] == "tool_call") == in_form
        # A city no example names but a zone of the IANA database holds is that zone: no question, one plan.
        kolkata = {**spoken, "target_timezone": "Kolkata"}
        model = ReplayChatModel.of([plan({"id": "c", "name": "convert_time", "arguments": kolkata}), "12:30 Uhr."])
        async with agent(model, tools, profile="generic") as planwerk:
            reply = await planwerk.ask("Wenn es in Tokio 16:00 Uhr ist, wie spät ist es dann in Kolkata?")
        assert not [e for e in reply.events if e["event"] == "replan"]
        assert [e["args"] for e in reply.events if e["event"] == "tool_call"] == [written]


async def test_a_value_a_call_failed_with_is_written_as_the_one_example_naming_its_place() -> None:
    # The reference time server, real over stdio. The 0.5B model wrote 'America/Berlin' (the first example's form
    # with the asked city); it failed, and the corrected plan wrote it again, with the prompt's date as the time.
    # The second time the zone is written as the one example naming Berlin, the server's local zone
    # 'Europe/Berlin', and the time as the question's one clock time, in code.
    from tests.third_party import time_server

    command, *args = time_server()
    wrong = {"source_timezone": "America/Berlin", "time": "16:00", "target_timezone": "Asia/Tokyo"}
    corrected = {**wrong, "time": "2026-11-26"}
    async with open_tools({"mcpServers": {"time": {"command": command, "args": args, "timeout": 30}}}) as tools:
        model = ReplayChatModel.of(
            [plan({"id": "c", "name": "convert_time", "arguments": wrong}),
             plan({"id": "c", "name": "convert_time", "arguments": corrected}), "-", "-"]
        )  # fmt: skip
        async with agent(model, tools, profile="generic-en") as planwerk:
            reply = await planwerk.ask("When it is 16:00 in Berlin, what time is it in Tokyo?")
    ran = [(e["args"]["source_timezone"], e["args"]["time"]) for e in reply.events if e["event"] == "tool_call"]
    outcomes = [e["event"] for e in reply.events if e["event"] in ("tool_result", "tool_error")]
    assert ran == [("America/Berlin", "16:00"), ("Europe/Berlin", "16:00")]
    assert outcomes == ["tool_error", "tool_result"]


def test_extract_is_offered_only_beside_a_tool_that_returns_text(bank: Any) -> None:
    """A tool declared read-only with no output schema returns text to read; without one (a function-calling
    leaderboard's unannotated tools) the step has nothing to read and is not shown."""
    from planwerk.graph.nodes.common import builtin_specs
    from planwerk.profiles import PROFILES

    profile = PROFILES["generic-en"]
    assert bank.specs["read_file"].read_only and not bank.specs["read_file"].output_schema
    assert "extract" in builtin_specs(bank.specs, profile)
    no_text = {name: spec for name, spec in bank.specs.items() if name not in ("read_file", "get_user_info")}
    assert builtin_specs(no_text, profile) == {}

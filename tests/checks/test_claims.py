"""Claimed actions: an answer that says something was done, in the per-language word lists of the checks."""

from __future__ import annotations

import pytest

from planwerk.checks.claims import claimed_action


@pytest.mark.parametrize(
    "answer",
    [
        "I updated my account information with the new address 12 Harbour Road.",
        "Done. I've sent 25.00 to DE44500105175407324931.",
        "Your address has been updated successfully.",
        "The payment was scheduled successfully for 2026-12-01.",
        "Ich habe 25 € an DE44500105175407324931 überwiesen.",
        "Die Adresse wurde erfolgreich geändert.",
    ],
)
def test_completion_phrasing_claims_an_action(answer: str) -> None:
    assert claimed_action(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Yes, I can pay the bill for you.",
        "I have not sent any money.",
        "Should I update your address?",
        "The notice says that the rent was changed last month.",
        "Your balance is 1810.00.",
        "I found three transactions: Pizza, Gym and Rent.",
        "Ich kann das Geld nicht überweisen.",
        "Laut Datei wurde die Miete erhöht.",
    ],
)
def test_reports_offers_questions_and_denials_claim_nothing(answer: str) -> None:
    assert claimed_action(answer) is None


def test_the_claiming_sentence_is_returned() -> None:
    answer = "Your balance was 1810.00. I have paid the bill. Anything else?"
    assert claimed_action(answer) == "I have paid the bill."


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ("The bill for December 2026 is scheduled to be paid.", True),  # the 1.5B model's, after nothing ran
        ("Your balance is 1810.00.", True),  # a read reported, the asked action left unmentioned
        ("I could not pay the bill: the file names more than one account.", False),
        ("Nothing was sent.", False),
        ("The transfer failed.", False),
        ("Die Überweisung wurde nicht ausgeführt.", False),
    ],
)
def test_when_an_acting_call_did_not_run_the_answer_must_say_so(answer: str, flagged: bool) -> None:
    from planwerk.checks.rules import CheckSettings, check_answer
    from planwerk.checks.sources import collect_sources

    sources = collect_sources(calls=[], hits=[], asked=["Pay the bill."], dates=[])
    did_not_run = CheckSettings(actions=True, action_failed=True)
    kinds = [p.kind for p in check_answer(answer, sources, did_not_run).problems]
    assert ("unbacked_action" in kinds) is flagged
    # With a call of a tool that acts done, or none that failed, the rule says nothing.
    for settings in (CheckSettings(actions=True, action_failed=True, acted=True), CheckSettings(actions=True)):
        assert "unbacked_action" not in [p.kind for p in check_answer(answer, sources, settings).problems]


def test_only_a_failed_call_of_a_tool_declared_to_change_something_asks_the_answer_to_say_so() -> None:
    """A failed read of a tool without annotations (counted as acting, to be safe about claims) beside a call that
    answered the question does not make a right answer wrong (the answers set: ``read_resource`` failed, "Alice
    works at Acme." was rejected)."""
    from planwerk.checks import build_answer_check
    from planwerk.core.calls import call_record

    read = call_record("g", "read_graph", args={}, result={"entities": [{"name": "Alice", "works_at": "Acme"}]})
    failed = call_record("r", "lookup", args={"uri": "x"}, error="not found", kind="not_found")

    def kinds(changing: set[str]) -> list[str]:
        check = build_answer_check(
            "Where does Alice work?", calls=[read, failed], hits=[], today=None, plan=None, output_schemas={},
            acting={"lookup"}, changing=changing,
        )  # fmt: skip
        return [p.kind for p in check("Alice works at Acme.").problems]

    assert "unbacked_action" not in kinds(set())
    assert "unbacked_action" in kinds({"lookup"})  # declared to change something: the answer must say it did not

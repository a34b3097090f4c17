"""planwerk in LangChain's agent-chat-ui, as a user meets it: the app's production build in Debian's Chromium
(Playwright, headless), against ``langgraph dev`` with a replay model and the bundled math server over stdio.

Each step keeps a screenshot (``PLANWERK_SCREENSHOTS=docs/chat-ui`` refreshes the ones docs/chat-ui.md shows).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from langgraph_sdk import get_sync_client

from tests.serving.conftest import DevServer, add, plan, write_math_config, write_replay

expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' brings playwright").expect
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

VIEWPORT = {"width": 1280, "height": 960}
MESSAGE_BOX = "Type your message..."
"""The placeholder of agent-chat-ui's message box."""
WAIT_MS = 120_000
"""How long the page may take to show what a step expects: the first run of a server loads the embedding model
(the planner ranks its examples with it), half a minute and more on a busy 2-core machine."""


@pytest.fixture
def page(chromium: str, screenshots: Path) -> Iterator[Any]:
    """A fresh page of Debian's Chromium, driven by Playwright (no browser of Playwright's own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(WAIT_MS)
            yield context.new_page()
        finally:
            browser.close()


def profile_file(tmp_path: Path, *, approve: list[str]) -> str:
    """A calculator profile whose calls of the tools in ``approve`` wait for a person's approval."""
    path = tmp_path / "calculator.toml"
    path.write_text(
        f'persona = "Du rechnest."\nlanguage = "de"\nallowed_tools = ["add"]\napprove = {json.dumps(approve)}\n'
        'examples = "math"\n',
        encoding="utf-8",
    )
    return str(path)


def run_context(tmp_path: Path, name: str, replies: list[str], profile: str) -> dict[str, Any]:
    """An assistant's context: the ``replies`` replayed (each run starts them from the first), the math server."""
    return {
        "model": write_replay(tmp_path / f"{name}.json", replies),
        "profile": profile,
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "today": "2026-11-22",
    }


def open_chat(page: Any, chat_ui: str, api: DevServer, assistant_id: str) -> None:
    """Open the UI on the server and assistant, as a user who filled in the app's setup form."""
    page.goto(f"{chat_ui}/?{urlencode({'apiUrl': api.url, 'assistantId': assistant_id})}")
    page.get_by_placeholder(MESSAGE_BOX).wait_for()


def send(page: Any, text: str) -> None:
    """Type ``text`` into the message box and send it."""
    box = page.get_by_placeholder(MESSAGE_BOX)
    box.fill(text)
    box.press("Enter")


def settled(page: Any, api: DevServer) -> None:
    """Wait until the thread's last run is over and the UI drew its end (a last streamed update may be in flight)."""
    client = get_sync_client(url=api.url, timeout=30)
    for thread in client.threads.search():
        for run in client.runs.list(thread["thread_id"]):
            client.runs.join(thread["thread_id"], run["run_id"])
    page.get_by_role("button", name="Send").wait_for()  # the UI shows "Cancel" while it streams
    page.wait_for_timeout(500)


RECORD_STREAMS = """
(() => {
  const original = window.fetch;
  window.__planwerkStreams = [];
  window.fetch = async (...args) => {
    const response = await original(...args);
    const url = String(args[0] instanceof Request ? args[0].url : args[0]);
    if (!url.includes("/runs/stream") || !response.body) return response;
    const [mine, theirs] = response.body.tee();
    const index = window.__planwerkStreams.push("") - 1;
    (async () => {
      const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        window.__planwerkStreams[index] += value;
      }
    })();
    const { status, statusText, headers } = response;
    return new Response(theirs, { status, statusText, headers });
  };
})();
"""
"""Kept by the page (``window.__planwerkStreams``): the text of each run's event stream as the app received it, read
beside the app from a copy of the body (the browser's own record of a stream's body is not always kept)."""


def streamed_answers(page: Any) -> dict[str, list[str]]:
    """The AI message chunks the page received in its runs' event streams (``messages`` events), by message id:
    what agent-chat-ui draws as the answer is decoded."""
    chunks: dict[str, list[str]] = {}
    for text in page.evaluate("window.__planwerkStreams"):
        for event in text.replace("\r\n", "\n").split("\n\n"):  # SSE lines end in CRLF
            lines = dict(line.split(": ", 1) for line in event.splitlines() if ": " in line)
            if lines.get("event") != "messages":
                continue
            message, _ = json.loads(lines["data"])
            if message.get("type") == "AIMessageChunk":
                chunks.setdefault(message["id"], []).append(message["content"])
    return chunks


def tool_call_card(page: Any, tool: str) -> Any:
    """The tool-call view of a planned call of ``tool``: a card headed by the tool's name (then the call's id),
    its arguments in a table. A tool result's card is headed "Tool Result: ..." instead."""
    heading = f"//h3[normalize-space(text()[1])={json.dumps(tool)}]"
    return page.locator(f"xpath={heading}/ancestor::div[contains(@class, 'rounded-lg')][1]")


def test_a_question_shows_its_tool_calls_and_is_answered_once(
    page: Any, chat_ui: str, api: DevServer, tmp_path: Path, screenshots: Path
) -> None:
    answer = "2 + 3 = 5."
    client = get_sync_client(url=api.url, timeout=30)
    context = run_context(tmp_path, "answer-once", [plan(add("s", 2, 3)), answer], "math")
    aid = client.assistants.create("planwerk", context=context, name="answer-once")["assistant_id"]
    page.add_init_script(RECORD_STREAMS)
    open_chat(page, chat_ui, api, aid)
    page.screenshot(path=screenshots / "1-start.png")

    send(page, "Was ist 2 + 3?")
    page.get_by_text(answer, exact=True).wait_for()
    settled(page, api)
    page.screenshot(path=screenshots / "2-answer.png")
    assert page.get_by_text(answer, exact=True).count() == 1
    # The page received the answer piece by piece as it was decoded (the replay model yields it word by word).
    [pieces] = streamed_answers(page).values()
    assert "".join(pieces) == answer and len(pieces) > 1
    assert page.get_by_text("Was ist 2 + 3?", exact=True).count() == 1
    # The plan as the UI's tool-call view: the call with its arguments; then its result.
    card = tool_call_card(page, "add")
    assert card.count() == 1
    assert card.locator("tr").all_inner_texts() == ["arg_0\t2", "arg_1\t3"]
    assert page.get_by_text("Tool Result: add").count() == 1
    # No plan JSON reaches the chat.
    assert '"steps"' not in page.inner_text("body")

    # The UI's switch hides them again.
    page.get_by_text("Hide Tool Calls").click()
    expect(tool_call_card(page, "add")).to_have_count(0)
    expect(page.get_by_text(answer, exact=True)).to_have_count(1)


def test_an_ask_back_and_an_approval_are_answered_in_the_ui(
    page: Any, chat_ui: str, api: DevServer, tmp_path: Path, screenshots: Path
) -> None:
    question = "Welche Zahl soll ich zu 2 addieren?"
    answer = "2 + 3 = 5."
    profile = profile_file(tmp_path, approve=["add"])
    client = get_sync_client(url=api.url, timeout=30)
    # Each run replays its file from the start, and a run takes the assistant's context as it is then: the test
    # hands the assistant the replies of the next run before the user acts (the UI sends no context of its own).
    aid = client.assistants.create(
        "planwerk", context=run_context(tmp_path, "asks", [json.dumps({"ask_user": question})], profile), name="asks"
    )["assistant_id"]
    open_chat(page, chat_ui, api, aid)
    send(page, "Addiere 2 und eine Zahl.")

    # The question asked back: an AI message, and under it the UI's form with one field for the answer.
    page.get_by_role("button", name="Submit").wait_for()
    page.screenshot(path=screenshots / "3-ask-back.png")
    assert page.get_by_text(question, exact=True).count() >= 1
    # After a reload (the thread's id is in the URL) the form is drawn again and still answers.
    page.reload()
    page.get_by_role("button", name="Submit").wait_for()
    client.assistants.update(aid, context=run_context(tmp_path, "plans", [plan(add("s", 2, 3))], profile))
    page.locator(f"textarea:not([placeholder='{MESSAGE_BOX}'])").fill("3")
    page.get_by_role("button", name="Submit").click()

    # The planned call waits for approval: the UI draws the call with its arguments and an Approve button.
    page.get_by_role("button", name="Approve").wait_for()
    page.screenshot(path=screenshots / "4-approval.png")
    assert page.get_by_text("3", exact=True).count() >= 1  # the user's answer is in the chat
    client.assistants.update(aid, context=run_context(tmp_path, "answers", [answer], profile))
    page.get_by_role("button", name="Approve").click()

    page.get_by_text(answer, exact=True).wait_for()
    settled(page, api)
    page.screenshot(path=screenshots / "5-approved-answer.png")
    assert page.get_by_text(answer, exact=True).count() == 1
    assert page.get_by_text("Tool Result: add").count() == 1
    assert page.get_by_role("button", name="Approve").count() == 0  # nothing left to decide

    # The next turn asks back too: its form is drawn under the new question and answers the same way.
    again = "Welche Zahl soll ich zu 5 addieren?"
    client.assistants.update(aid, context=run_context(tmp_path, "again", [json.dumps({"ask_user": again})], profile))
    send(page, "Und noch eine Zahl dazu.")
    page.get_by_role("button", name="Submit").wait_for()
    expect(page.get_by_text(again, exact=True).first).to_be_visible()
    closing = "Gut, dann bleibt es dabei."
    final = json.dumps({"steps": [], "final": closing})
    client.assistants.update(aid, context=run_context(tmp_path, "closes", [final], profile))
    page.locator(f"textarea:not([placeholder='{MESSAGE_BOX}'])").fill("keine")
    page.get_by_role("button", name="Submit").click()
    page.get_by_text(closing, exact=True).wait_for()
    settled(page, api)
    assert page.get_by_text(closing, exact=True).count() == 1
    assert page.get_by_text(answer, exact=True).count() == 1  # the first turn's answer is still there, once
    assert page.get_by_role("button", name="Submit").count() == 0
    threads = [t for t in client.threads.search() if t["metadata"].get("assistant_id") == aid]
    assert [t["status"] for t in threads] == ["idle"]

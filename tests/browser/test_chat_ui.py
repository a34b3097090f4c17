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

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

VIEWPORT = {"width": 960, "height": 720}
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


def assistant(api: DevServer, tmp_path: Path, name: str, replies: list[str], **context: Any) -> str:
    """An assistant of the ``planwerk`` graph whose runs replay ``replies``: its id, what the UI's URL names."""
    client = get_sync_client(url=api.url, timeout=30)
    created = client.assistants.create(
        "planwerk",
        context={
            "model": write_replay(tmp_path / f"{name}.json", replies),
            "profile": "math",
            "mcp_config": write_math_config(tmp_path / "mcp.json"),
            "today": "2026-11-22",
            **context,
        },
        name=name,
    )
    return str(created["assistant_id"])


def open_chat(page: Any, chat_ui: str, api: DevServer, assistant_id: str) -> None:
    """Open the UI on the server and assistant, as a user who filled in the app's setup form."""
    page.goto(f"{chat_ui}/?{urlencode({'apiUrl': api.url, 'assistantId': assistant_id})}")
    page.get_by_placeholder("Type your message...").wait_for()


def send(page: Any, text: str) -> None:
    """Type ``text`` into the message box and send it."""
    box = page.get_by_placeholder("Type your message...")
    box.fill(text)
    box.press("Enter")


def test_a_question_is_answered_once(
    page: Any, chat_ui: str, api: DevServer, tmp_path: Path, screenshots: Path
) -> None:
    answer = "2 + 3 = 5."
    aid = assistant(api, tmp_path, "answer-once", [plan(add("s", 2, 3)), answer])
    open_chat(page, chat_ui, api, aid)
    page.screenshot(path=screenshots / "1-start.png")

    send(page, "Was ist 2 + 3?")
    page.get_by_text(answer, exact=True).wait_for()
    # The run is over when the thread is idle again (the UI shows the box ready for the next message).
    client = get_sync_client(url=api.url, timeout=30)
    threads = client.threads.search(metadata={"assistant_id": aid})
    assert len(threads) == 1
    client.runs.join(threads[0]["thread_id"], client.runs.list(threads[0]["thread_id"])[0]["run_id"])
    page.wait_for_timeout(500)  # a last streamed update may still be drawn
    page.screenshot(path=screenshots / "2-answer.png", full_page=True)
    assert page.get_by_text(answer, exact=True).count() == 1
    assert page.get_by_text("Was ist 2 + 3?", exact=True).count() == 1
    # No plan JSON reaches the chat.
    assert '"steps"' not in page.inner_text("body")
    assert json.loads(plan(add("s", 2, 3)))["steps"]  # the replayed plan was a real one

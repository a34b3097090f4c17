"""What happens to a streamed run when its client goes away: cancelled, unless the client says otherwise.

The LangGraph server lets a run creation say ``on_disconnect``: ``"cancel"`` stops the run when the client that
streams it disconnects, ``"continue"`` (the server's default) lets it run on. A chat whose user closes the tab or
presses a stop button that only disconnects (issue 32: a run went on for 4.5 minutes, calling tools) wants
``"cancel"``. This ASGI middleware (mounted through the ``http.app`` of ``langgraph.json``, beside
:mod:`planwerk.serving.context_check`) fills in the operator's default, ``PLANWERK_ON_DISCONNECT`` (``cancel`` unless
set to ``continue``), for streamed run creations (``POST …/runs/stream``) that name none. A client that names one
keeps it, and so does one that asks for a resumable stream (``stream_resumable: true``, as agent-chat-ui does: it
rejoins the run after a reload, so the run must outlive the connection).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from planwerk.serving.context_check import App, Message, Receive, Scope, Send

DisconnectMode = Literal["cancel", "continue"]
ON_DISCONNECT_ENV = "PLANWERK_ON_DISCONNECT"
"""The operator's default ``on_disconnect`` for streamed runs that name none: ``cancel`` (default) or ``continue``."""
_STREAMS = re.compile(r"^/(threads/[^/]+/)?runs/stream/?$")
MAX_BODY_BYTES = 16 * 1024 * 1024
"""A larger body is passed on untouched (the server's default applies)."""


def default_mode(env: Mapping[str, str] | None = None) -> DisconnectMode:
    """The operator's default from ``PLANWERK_ON_DISCONNECT``; a clear error for any other value."""
    value = (env if env is not None else os.environ).get(ON_DISCONNECT_ENV, "cancel").strip().lower()
    if value not in get_args(DisconnectMode):
        raise ValueError(f"{ON_DISCONNECT_ENV}={value!r} is not allowed; expected cancel or continue")
    return value  # type: ignore[return-value]


def with_default(payload: Any, mode: DisconnectMode) -> Any:
    """``payload`` with ``on_disconnect`` set to ``mode`` when it names none and asks for no resumable stream;
    anything else unchanged (``None`` when nothing changes)."""
    if not isinstance(payload, dict) or payload.get("on_disconnect") is not None or payload.get("stream_resumable"):
        return None
    return {**payload, "on_disconnect": mode}


class DisconnectDefault:
    """ASGI middleware: the operator's ``on_disconnect`` default for streamed run creations that name none."""

    def __init__(self, app: App):
        self.app = app
        self.mode = default_mode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _STREAMS.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body") or size > MAX_BODY_BYTES:
                break
        changed = None
        if size <= MAX_BODY_BYTES and all(m["type"] == "http.request" for m in messages):
            try:
                changed = with_default(json.loads(b"".join(m.get("body", b"") for m in messages) or b"null"), self.mode)
            except ValueError:
                changed = None  # the server answers a malformed body itself
        if changed is not None:
            body = json.dumps(changed).encode()
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
            messages = [{"type": "http.request", "body": body, "more_body": False}]
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)

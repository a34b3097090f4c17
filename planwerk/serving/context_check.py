"""A run context the operator does not allow is answered 422 when it is sent, before a run or assistant exists.

Only what :class:`~planwerk.graph.run_policy.RunPolicy` refuses is answered here; a malformed value (a wrong type,
an unknown profile) passes on and fails the run with its message, as before.

:func:`planwerk.graph.run_context.run_context` checks every run's context in the graph factory, which the LangGraph
server calls only when a queued run starts: a refused value then fails the run (an ``error`` event). This ASGI
middleware (mounted through the ``http.app`` of ``langgraph.json``) checks the same settings where a client sends
them, so the client gets a clear 4xx and nothing is queued: the ``context`` (and ``config.configurable``, which
the server copies into the context) of run creations (``POST …/runs``, ``/runs/stream``, ``/runs/wait``,
``/runs/batch``, ``/runs/crons``) and of assistants (``POST /assistants``, ``PATCH /assistants/<id>``).

A request's context may be partial (the assistant's fills the rest); it is checked field by field as sent, and
the factory checks the merged context again. Anything else passes through untouched.

Keys the server fills with the authenticated user (:data:`RESERVED_KEYS`) are refused too, in the ``context``, in
``config.configurable`` and in a run's ``checkpoint`` (Aegra merges it into ``configurable``): Aegra 0.6.0 fills
them only when the client did not (``setdefault``), so a client could otherwise claim another user's identity. The
same app is mounted under Aegra (``aegra.json``'s ``http.app``, :mod:`planwerk.serving.aegra_app`) and under the
LangGraph server.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from planwerk.graph.run_context import run_context
from planwerk.graph.run_policy import RunPolicyError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_CHECKED = (
    ("POST", re.compile(r"^/(threads/[^/]+/)?runs(/(stream|wait|batch|crons))?/?$")),
    ("POST", re.compile(r"^/assistants/?$")),
    ("PATCH", re.compile(r"^/assistants/[^/]+/?$")),
)
RESERVED_KEYS = frozenset(
    {"langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions", "user_id", "user_display_name"}
)
"""Run-config keys only the server sets, from the verified user: the LangGraph server's ``langgraph_auth_*`` and
Aegra's ``user_id`` / ``user_display_name`` (its graphs' identity for per-user scoping, next to
``langgraph_auth_user``)."""
MAX_BODY_BYTES = 16 * 1024 * 1024
"""A larger body is passed on unchecked (the server's own limits apply; the factory still checks the run)."""


def context_problem(payload: Any) -> str | None:
    """What the operator does not allow in a run or assistant payload (or a list of them), or ``None``."""
    for item in payload if isinstance(payload, list) else [payload]:
        if not isinstance(item, dict):
            continue
        config = item.get("config")
        configurable = config.get("configurable") if isinstance(config, dict) else None
        # Aegra merges a run's ``checkpoint`` object into ``configurable`` too, before it adds the user.
        sent_config = {
            "context": item.get("context"),
            "config.configurable": configurable,
            "checkpoint": item.get("checkpoint"),
        }
        for where, value in sent_config.items():
            reserved = sorted(RESERVED_KEYS.intersection(value)) if isinstance(value, dict) else []
            if reserved:
                return (
                    f"{where} may not set {', '.join(reserved)}: the server sets these from the authenticated user "
                    "(send only run settings there)"
                )
        for value in (item.get("context"), configurable):
            if not isinstance(value, dict) or not value:
                continue
            # The model the run will use may come from the assistant: without one here, the profile's own model
            # is not judged now (the factory checks the merged context).
            sent = {"model": "default", **value} if "model" not in value else dict(value)
            try:
                run_context(sent)
            except RunPolicyError as error:
                return str(error)
            except ValueError:  # a malformed value: the run fails with its message, as it always did
                continue
    return None


class RunContextCheck:
    """ASGI middleware: 422 for a run or assistant payload whose context the operator does not allow."""

    def __init__(self, app: App):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not any(
            scope["method"] == method and pattern.match(scope["path"]) for method, pattern in _CHECKED
        ):
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
        problem = None
        if size <= MAX_BODY_BYTES and all(m["type"] == "http.request" for m in messages):
            try:
                payload = json.loads(b"".join(m.get("body", b"") for m in messages) or b"null")
            except ValueError:
                payload = None  # the server answers a malformed body itself
            # In a thread: the check resolves paths and may read a profile file.
            problem = await asyncio.to_thread(context_problem, payload)
        if problem is not None:
            body = json.dumps({"detail": problem}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 422, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)

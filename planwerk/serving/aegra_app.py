"""The app ``aegra.json`` mounts (``"http": {"app": "planwerk.serving.aegra_app:app"}``): planwerk's request checks
under Aegra.

Aegra 0.6.0 takes a module path (or a ``./file.py:name`` path) there, requires a FastAPI instance, adds its own
routes to it and applies the app's middleware to them. So :class:`~planwerk.serving.context_check.RunContextCheck`
answers 422 for a run or assistant whose context the operator does not allow, or whose config claims the server's
user keys, before Aegra queues anything, as under the LangGraph server (``planwerk.serving.server:app``).

No lifespan: Aegra's graph opens what a run needs when the run starts (:mod:`planwerk.serving.aegra`).
"""

from __future__ import annotations

from fastapi import FastAPI

from planwerk.serving.context_check import RunContextCheck

app = FastAPI(title="planwerk on Aegra")
"""What ``aegra.json``'s ``http.app`` names; Aegra adds its routes and middleware around this one."""
app.add_middleware(RunContextCheck)

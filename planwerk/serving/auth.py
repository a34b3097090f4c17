"""Authentication and ownership for both servers: ``"auth": {"path": "planwerk.serving.auth:auth"}`` in
``langgraph.json`` and ``aegra.json``.

:data:`auth` is a ``langgraph_sdk.Auth``. Its ``@auth.authenticate`` handler checks the request's bearer JWT
(:mod:`planwerk.serving.tokens`: settings, signature, expiry, audience, operator role) and names the caller by the
token's ``sub``; a request without a valid token gets 401 with the reason. The ``@auth.on`` handlers make every
thread, run, cron and assistant its creator's: ``metadata.owner`` is stamped on create, and reads, searches,
updates, deletes and runs see only the caller's own (another user's thread answers 404, a search leaves it out).
The graph's own assistant (``metadata.created_by == "system"``, made by the server) stays readable and runnable by
everyone, changeable by the operator only. Store items live under a namespace whose first part is the caller's
identity. The operator role sees and changes everything.

Under Aegra 0.6.0 the same object authenticates; Aegra scopes threads, runs, assistants and the store by the
authenticated identity itself (it keeps its own ``user_id`` column and ignores these handlers' filters), so
ownership holds there too, but the operator sees only the operator's own resources.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langgraph_sdk import Auth

from planwerk.serving.tokens import OPERATOR_ROLE, TokenError, load_verifier

OWNER_KEY = "owner"
"""The metadata key naming a resource's owner (the creator's identity)."""
SYSTEM_KEY = "created_by"
SYSTEM_VALUE = "system"
"""``metadata.created_by`` of the assistants the server creates for its graphs (reserved: clients cannot set it)."""

auth = Auth()
"""What ``langgraph.json`` and ``aegra.json`` name under ``auth.path``."""

_verifier = load_verifier()  # read the settings and log the mode once, at server start


def _authorization(headers: Mapping[Any, Any] | None) -> str | None:
    """The Authorization header from either server's form: bytes keys (LangGraph) or str keys (Aegra)."""
    if not headers:
        return None
    for name in (b"authorization", "authorization"):
        value = headers.get(name)
        if value is not None:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


@auth.authenticate
async def authenticate(headers: Mapping[Any, Any]) -> Auth.types.MinimalUserDict:
    """The caller of a request: the bearer JWT's ``sub``, with the ``operator`` permission for the operator role.

    LangGraph passes ``headers`` by name (bytes keys), Aegra passes them first (str keys): both work.
    """
    authorization = _authorization(headers)
    try:
        if _verifier.blocks:
            caller = await asyncio.to_thread(_verifier.verify, authorization)
        else:
            caller = _verifier.verify(authorization)
    except TokenError as error:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail=f"unauthorized: {error}", headers={"WWW-Authenticate": "Bearer"}
        ) from None
    return {
        "identity": caller.identity,
        "display_name": caller.display_name,
        "is_authenticated": True,
        "permissions": [OPERATOR_ROLE] if caller.operator else [],
    }


def _is_operator(ctx: Auth.types.AuthContext) -> bool:
    return OPERATOR_ROLE in (ctx.permissions or ())


def _stamp_owner(ctx: Auth.types.AuthContext, value: dict[str, Any], *, creating: bool, assistant: bool) -> None:
    """Set ``metadata.owner`` to the caller on create; an update may not hand a resource to someone else (the
    operator may). An assistant may not claim to be the server's own (it would be readable by everyone)."""
    metadata = value.get("metadata")
    if metadata is None:
        if not creating:
            return
        # In place: the servers read the dict they passed, not the key.
        metadata = value["metadata"] = {}
    if assistant and SYSTEM_KEY in metadata:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"metadata.{SYSTEM_KEY} is reserved for the server's own assistants"
        )
    if _is_operator(ctx) and (not creating or metadata.get(OWNER_KEY)):
        return  # the operator may create for someone else and hand a resource over
    if creating or OWNER_KEY in metadata:
        metadata[OWNER_KEY] = ctx.user.identity


def _own(ctx: Auth.types.AuthContext) -> Auth.types.FilterType | None:
    """Only the caller's own resources; the operator's filter is none at all."""
    return None if _is_operator(ctx) else {OWNER_KEY: ctx.user.identity}


@auth.on
async def owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Threads, runs (LangGraph checks them as the thread's ``create_run``/``read``/...), crons and any resource
    without a handler of its own: the caller's only."""
    if ctx.action in ("create", "create_run", "update") and isinstance(value, dict):
        _stamp_owner(ctx, value, creating=ctx.action != "update", assistant=False)
    return _own(ctx)


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """The caller's own assistants, and reading (running) the server's own ones; only the operator changes those."""
    if ctx.action in ("create", "update") and isinstance(value, dict):
        _stamp_owner(ctx, value, creating=ctx.action == "create", assistant=True)
    if _is_operator(ctx):
        return None
    if ctx.action in ("read", "search"):
        return {"$or": [{OWNER_KEY: ctx.user.identity}, {SYSTEM_KEY: SYSTEM_VALUE}]}
    return {OWNER_KEY: ctx.user.identity}


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Store items only under a namespace that starts with the caller's identity (the operator: any)."""
    if _is_operator(ctx):
        return None
    namespace = tuple(value.get("namespace") or ()) if isinstance(value, dict) else ()
    if not namespace or namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail=f"store namespaces of this user start with {ctx.user.identity!r}; got {list(namespace)!r}",
        )
    return None

"""Which ``endpoint:`` servers get the operator's API key: :data:`ENDPOINT_API_KEY_ENV` goes only where
:data:`ALLOWED_ENDPOINTS_ENV` (when set) allows it.

Apart from the model specs (:mod:`planwerk.models.specs`) and the OpenAI-compatible client
(:mod:`planwerk.models.endpoint`) so that both, and the run policy, import it without importing each other.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

ENDPOINT_API_KEY_ENV = "PLANWERK_ENDPOINT_API_KEY"
"""The operator's API key for ``endpoint:`` servers, sent as ``Authorization: Bearer``; with
:data:`ALLOWED_ENDPOINTS_ENV` set, only to the servers it lists."""
ALLOWED_ENDPOINTS_ENV = "PLANWERK_ALLOWED_ENDPOINTS"
"""Comma-separated URL prefixes of the ``endpoint:`` servers the operator allows (``http://10.0.0.5:8080/v1``): a
served run may name only these (:mod:`planwerk.graph.run_policy`), and :data:`ENDPOINT_API_KEY_ENV` goes to no
other server. Unset (the CLI, the Python API): the key goes to the endpoint the user named."""


def allowed_endpoints(env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The URL prefixes :data:`ALLOWED_ENDPOINTS_ENV` lists; ``None`` when it is unset (no list: the CLI's case)."""
    env = os.environ if env is None else env
    if ALLOWED_ENDPOINTS_ENV not in env:
        return None
    return tuple(part.strip() for part in env[ALLOWED_ENDPOINTS_ENV].split(",") if part.strip())


def endpoint_allowed(url: str, prefixes: Sequence[str]) -> bool:
    """Whether ``url`` lies under one of ``prefixes``: the same scheme and host (with port), and a path that is the
    prefix's path or below it (so ``http://h:8080`` allows neither ``http://h:8080.evil.example`` nor
    ``http://h:80800``, and ``http://h/v1`` not ``http://h/v10``)."""
    target = urlsplit(url)
    for prefix in prefixes:
        allowed = urlsplit(prefix.strip())
        if not allowed.scheme or not allowed.netloc:
            continue
        if (target.scheme.lower(), target.netloc.lower()) != (allowed.scheme.lower(), allowed.netloc.lower()):
            continue
        base = allowed.path.rstrip("/")
        if not base or target.path == base or target.path.startswith(base + "/"):
            return True
    return False


def endpoint_api_key(base_url: str, api_key: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The API key to send to the server at ``base_url``: ``api_key``, by default the operator's
    :data:`ENDPOINT_API_KEY_ENV`. The operator's key goes nowhere :data:`ALLOWED_ENDPOINTS_ENV` (when set) does not
    list, whatever code path asks: then no key is sent (logged)."""
    env = os.environ if env is None else env
    operator_key = env.get(ENDPOINT_API_KEY_ENV, "")
    key = operator_key if api_key is None else api_key
    allowed = allowed_endpoints(env)
    if key and key == operator_key and allowed is not None and not endpoint_allowed(base_url, allowed):
        log.warning(
            "endpoint %s is not in %s: %s is not sent to it", base_url, ALLOWED_ENDPOINTS_ENV, ENDPOINT_API_KEY_ENV
        )
        return NO_API_KEY
    return key or NO_API_KEY


NO_API_KEY = "not-needed"
"""What the OpenAI client sends when no key applies (it insists on one)."""

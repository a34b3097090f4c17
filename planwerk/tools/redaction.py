"""Keeping configured secrets (headers, tokens) out of every log record of the process, and which values are secrets.

Libraries below us log raw traffic at DEBUG (the MCP SDK logs every streamable-HTTP message, httpx logs requests),
and a careless server may echo a token in an error. While MCP sessions with secrets are open, a log-record factory
replaces each secret in a record's message with ``***``. A record factory (not a logger filter) is used because
filters on a parent logger do not apply to records propagated from its children.

Not every configured value is a secret: ``REGION=eu`` or ``DEBUG=1`` redacted out of a tool's error turns "region
eu" into "region ***" and every "1" into "***". :class:`SecretPolicy` says which environment values count.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|DSN|PIN\b", re.IGNORECASE
)
_SETTING_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "enabled", "disabled"})


@dataclass(frozen=True)
class SecretPolicy:
    """Which environment values of a server's config are redacted from errors and logs."""

    min_length: int = 8
    """Any value at least this long counts as a possible secret, whatever its variable's name."""
    min_named_length: int = 4
    """A value of a variable whose name looks secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, …)
    counts from this length on; shorter ones would garble every message they occur in and protect nothing."""


DEFAULT_SECRET_POLICY = SecretPolicy()


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (API_KEY, GITHUB_TOKEN, DB_PASSWORD, …)."""
    return _SECRET_NAME.search(name) is not None


def env_secrets(env: Mapping[str, str], policy: SecretPolicy = DEFAULT_SECRET_POLICY) -> tuple[str, ...]:
    """The values of ``env`` that are redacted: long ones, and those of secret-looking names that are no mere
    setting (``true``, ``off``)."""
    out: list[str] = []
    for name, value in env.items():
        if not value or value.strip().lower() in _SETTING_WORDS:
            continue
        if len(value) >= policy.min_length or (looks_secret(name) and len(value) >= policy.min_named_length):
            out.append(value)
    return tuple(out)


def redact(text: str, secrets: tuple[str, ...] | list[str]) -> str:
    """``text`` with every secret value replaced by ``***`` (longest first, so whole values go before parts)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


_lock = threading.Lock()
_active: Counter[str] = Counter()
_installed = False


def _scrubbing_factory(original: logging.LogRecordFactory) -> logging.LogRecordFactory:  # type: ignore[name-defined]
    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = original(*args, **kwargs)
        secrets = tuple(_active)
        if secrets:
            try:
                message = record.getMessage()
            except Exception:  # a malformed record is the logging module's business, not ours
                return record
            cleaned = redact(message, secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return record

    return factory


@contextlib.contextmanager
def secrets_redacted(secrets: Iterable[str]) -> Iterator[None]:
    """While inside, no log record of the process shows any of ``secrets``."""
    global _installed
    values = [s for s in secrets if len(s) >= 6]  # shorter values ("1", "true") are settings, not secrets
    with _lock:
        if values and not _installed:
            logging.setLogRecordFactory(_scrubbing_factory(logging.getLogRecordFactory()))
            _installed = True
        _active.update(values)
    try:
        yield
    finally:
        with _lock:
            _active.subtract(values)
            for value in values:
                if _active[value] <= 0:
                    del _active[value]

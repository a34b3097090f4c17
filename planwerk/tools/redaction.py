"""Keeping configured secrets (headers, tokens, keys in URLs) out of everything planwerk writes, and which values
are secrets.

**One redactor per config.** :class:`Redactor` replaces every secret of a loaded MCP config with ``***`` in the
forms a server or a library may show it in: as configured, in any letter case (``TOK`` for ``tok``), URL-encoded
(``%2F`` for ``/``), base64-encoded (standard or URL-safe, at any offset inside a longer encoded text, so
``base64("user:" + token)`` is caught too) and spaced (up to two whitespace characters between characters, e.g.
base64 wrapped over lines). :class:`SecretStore` holds the secrets of one open config and grows while it is open:
a token supplier's fresh token joins it before it is first sent.

**Where it applies.** The MCP tool source redacts every result, error and progress message of a server before it
reaches the graph's state, events, checkpoints and prompts (``planwerk.tools.mcp``); a stdio server's stderr goes
through it line by line (``planwerk.tools.transport``). Libraries below us log raw traffic at DEBUG (the MCP SDK
logs every streamable-HTTP message, httpx logs requests with their URLs): while a store is open, a log-record
factory redacts each record's message, traceback and stack. A record factory (not a logger filter) is used
because filters on a parent logger do not apply to records propagated from its children.

**Which values.** Not every configured value is a secret: ``REGION=eu`` or ``DEBUG=1`` redacted out of a tool's
error turns "region eu" into "region ***" and every "1" into "***". :class:`SecretPolicy` says which environment
values count; the derived forms (base64, spaced) are only used for secrets of at least
:data:`MIN_DERIVED_LENGTH` characters, whose forms cannot occur by chance in ordinary text.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|DSN|PIN\b", re.IGNORECASE
)
_SETTING_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "enabled", "disabled"})

MASK = "***"
"""What a secret is replaced with."""
MIN_SECRET_LENGTH = 4
"""No value shorter than this is ever redacted (it would garble every text it occurs in and protect nothing)."""
MIN_DERIVED_LENGTH = 8
"""Secrets at least this long are also redacted base64-encoded and spaced; shorter ones as written (any case,
URL-encoded) only: the base64 fragment of a 4-character PIN is 5 characters, common in any encoded text."""


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


def _base64_fragments(secret: str) -> set[str]:
    """The base64 text that encodes ``secret`` wherever it sits in a longer encoded text: for each of the three
    byte offsets modulo 3, the characters determined by the secret's bytes alone (standard and URL-safe)."""
    data = secret.encode("utf-8")
    out: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        start, end = -(-8 * offset // 6), 8 * (offset + len(data)) // 6  # whole 6-bit groups inside the secret
        # The middle (the secret inside a longer text), and the tail with its padding (the secret at the end).
        for fragment in (encoded[start:end], encoded[start:]):
            out.update({fragment, fragment.replace("+", "-").replace("/", "_")})
    return out


def secret_forms(secret: str) -> frozenset[str]:
    """Every form of ``secret`` that is redacted (case is folded when matching): as written and URL-encoded, and,
    from :data:`MIN_DERIVED_LENGTH` characters on, base64-encoded."""
    if len(secret) < MIN_SECRET_LENGTH:
        return frozenset()
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe="")}
    if len(secret) >= MIN_DERIVED_LENGTH:
        forms |= _base64_fragments(secret)
    return frozenset(f for f in forms if len(f) >= MIN_SECRET_LENGTH)


def _form_pattern(form: str, spaced: bool) -> str:
    if not spaced:
        return re.escape(form)
    return r"\s{0,2}".join(re.escape(char) for char in form)


@dataclass(frozen=True)
class Redactor:
    """Replaces every form of its secrets with ``***`` (see the module docstring); immutable, cheap to apply."""

    secrets: frozenset[str] = frozenset()
    """The secrets as configured (or as a supplier handed them out)."""
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        forms = {(form, len(secret) >= MIN_DERIVED_LENGTH) for secret in self.secrets for form in secret_forms(secret)}
        if not forms:
            return
        # Longest first, so a whole value goes before a part of it; the lookahead skips quickly over positions
        # where no form can start.
        ordered = sorted(forms, key=lambda item: len(item[0]), reverse=True)
        first = "".join(sorted({c for form, _ in ordered for c in (form[0].lower(), form[0].upper())}))
        body = "|".join(_form_pattern(form, spaced) for form, spaced in ordered)
        pattern = re.compile(f"(?=[{re.escape(first)}])(?:{body})", re.IGNORECASE)
        object.__setattr__(self, "_pattern", pattern)

    def __repr__(self) -> str:
        return f"Redactor({len(self.secrets)} secrets)"

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        """``text`` with every form of every secret replaced by ``***``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def value(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings, numbers) with every string redacted, keys included; other
        values unchanged. Returns the same object when nothing was redacted."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            items = [(self.value(k) if isinstance(k, str) else k, self.value(v)) for k, v in value.items()]
            if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
                return value
            return dict(items)
        if isinstance(value, list | tuple):
            redacted = [self.value(v) for v in value]
            if all(r is v for r, v in zip(redacted, value, strict=True)):
                return value
            return redacted if isinstance(value, list) else tuple(redacted)
        return value


@lru_cache(maxsize=256)
def _redactor(secrets: frozenset[str]) -> Redactor:
    return Redactor(secrets)


def redactor_for(secrets: Iterable[str]) -> Redactor:
    """The :class:`Redactor` of ``secrets`` (cached: building one compiles a pattern)."""
    return _redactor(frozenset(s for s in secrets if s))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret replaced by ``***``."""
    return redactor_for(tuple(secrets)).text(text)


class SecretStore:
    """The secrets of one open MCP config: those configured, and tokens added while it is open (a token
    supplier's). Thread-safe; :attr:`redactor` is rebuilt only after a change."""

    def __init__(self, secrets: Iterable[str] = ()):
        self._lock = threading.Lock()
        self._secrets = frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH)
        self._redactor = redactor_for(self._secrets)

    def add(self, secret: str) -> None:
        """Redact ``secret`` from now on (a fresh token, before it is first sent)."""
        if not secret or len(secret) < MIN_SECRET_LENGTH or secret in self._secrets:
            return
        with self._lock:
            self._secrets = self._secrets | {secret}
            self._redactor = redactor_for(self._secrets)

    @property
    def redactor(self) -> Redactor:
        """The redactor of every secret so far."""
        return self._redactor

    def __repr__(self) -> str:
        return f"SecretStore({len(self._secrets)} secrets)"


_EXCEPTIONS = logging.Formatter()
"""Formats tracebacks the way every standard formatter does (for :func:`_scrubbing_factory`)."""
_lock = threading.Lock()
_active: list[SecretStore] = []
_installed = False


def _scrubbing_factory(original: logging.LogRecordFactory) -> logging.LogRecordFactory:  # type: ignore[name-defined]
    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = original(*args, **kwargs)
        stores = tuple(_active)
        if stores:
            try:
                message = record.getMessage()
            except Exception:  # a malformed record is the logging module's business, not ours
                return record
            cleaned = message
            for store in stores:
                cleaned = store.redactor.text(cleaned)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
            # A traceback is formatted from exc_text when it is set: set it, redacted (an exception's message may
            # hold a URL with its query, or a server's careless error).
            if record.exc_info and not record.exc_text:
                text = _EXCEPTIONS.formatException(record.exc_info)
                for store in stores:
                    text = store.redactor.text(text)
                record.exc_text = text
            if record.stack_info:
                for store in stores:
                    record.stack_info = store.redactor.text(record.stack_info)
        return record

    return factory


@contextlib.contextmanager
def secrets_redacted(secrets: SecretStore | Iterable[str]) -> Iterator[SecretStore]:
    """While inside, no log record of the process shows any form of ``secrets`` (a store's later additions
    included); yields the store."""
    global _installed
    store = secrets if isinstance(secrets, SecretStore) else SecretStore(secrets)
    with _lock:
        if not _installed:
            logging.setLogRecordFactory(_scrubbing_factory(logging.getLogRecordFactory()))
            _installed = True
        _active.append(store)
    try:
        yield store
    finally:
        with _lock:
            _active.remove(store)


def active_redactors() -> tuple[Redactor, ...]:
    """The redactors of every store open in this process (for text that leaves by another way than logging)."""
    return tuple(store.redactor for store in tuple(_active))

"""Keeping configured secrets (headers, tokens) out of every log record of the process.

Libraries below us log raw traffic at DEBUG (the MCP SDK logs every streamable-HTTP message, httpx logs requests),
and a careless server may echo a token in an error. While MCP sessions with secrets are open, a log-record factory
replaces each secret in a record's message with ``***``. A record factory (not a logger filter) is used because
filters on a parent logger do not apply to records propagated from its children.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

from planwerk.tools.config import redact

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

"""KV states of static prompt prefixes on disk, so a new process does not evaluate them again.

A prompt's static prefix (persona, protocol, catalog, examples: the leading system messages) is the same for every
question of a profile; evaluating it is most of a cold question's time on a CPU (prompt processing is
compute-bound). :class:`StateStore` keeps the llama.cpp KV state of such a prefix as one file, named by the prefix's
token ids, in a folder per model file and backend version (a state is only valid for the weights and the library
that wrote it). Only static prefixes are written: no question, conversation or tool result reaches the disk.

A file holds a small header (magic, token count), the token ids, then the state bytes; a file whose tokens differ
from the ones asked for (a hash collision, a torn write) is ignored. Writes go to a temporary file first and are
renamed into place, so concurrent processes never read half a file. The folder is bounded in bytes: the least
recently used files go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAGIC = b"PWKV1\0"
"""File signature and format version."""
_HEADER = struct.Struct("<6sI")
DEFAULT_MAX_BYTES = 512 << 20
"""Bound of one model's folder (a 2,000-token prefix of the packaged 0.5B model is about 24 MB)."""


@dataclass(frozen=True)
class StoredState:
    """The KV state of exactly ``tokens``."""

    tokens: tuple[int, ...]
    data: bytes


def token_key(tokens: Sequence[int]) -> str:
    """The file name stem for a token sequence (sha256 of the ids as 32-bit integers)."""
    return hashlib.sha256(array("i", tokens).tobytes()).hexdigest()[:32]


def model_key(path: Path, *parts: object) -> str:
    """A folder name for the model file at ``path`` (its resolved path, size and modification time) and ``parts``
    (the backend's version, the context settings): a state written for other weights or another library build is
    never read."""
    stat = path.stat()
    text = "|".join(str(part) for part in (path.resolve(), stat.st_size, stat.st_mtime_ns, *parts))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class StateStore:
    """Static-prefix KV states in ``directory`` (created on the first write), at most ``max_bytes`` of them."""

    def __init__(self, directory: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.loads = 0
        self.saves = 0

    def _path(self, tokens: Sequence[int]) -> Path:
        return self.directory / f"{token_key(tokens)}.kvstate"

    def load(self, tokens: Sequence[int]) -> StoredState | None:
        """The stored state of exactly ``tokens``, or ``None`` (none stored, unreadable, or for other tokens)."""
        path = self._path(tokens)
        try:
            blob = path.read_bytes()
        except OSError:
            return None
        wanted = tuple(int(token) for token in tokens)
        if len(blob) < _HEADER.size:
            return None
        magic, count = _HEADER.unpack_from(blob)
        ids_end = _HEADER.size + 4 * count
        if magic != MAGIC or count != len(wanted) or len(blob) <= ids_end:
            log.info("ignored the prefix state %s: not a state of this prefix", path.name)
            return None
        stored = array("i")
        stored.frombytes(blob[_HEADER.size : ids_end])
        if tuple(stored) != wanted:
            log.info("ignored the prefix state %s: its tokens differ", path.name)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruned last
        self.loads += 1
        return StoredState(wanted, blob[ids_end:])

    def save(self, state: StoredState) -> None:
        """Write ``state`` (atomically), then prune the folder to :attr:`max_bytes`. A failure to write is logged,
        not raised: the store only saves time."""
        if len(state.data) + 4 * len(state.tokens) > self.max_bytes:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".partial")
            with os.fdopen(handle, "wb") as out:
                out.write(_HEADER.pack(MAGIC, len(state.tokens)))
                out.write(array("i", state.tokens).tobytes())
                out.write(state.data)
            os.replace(temporary, self._path(state.tokens))
        except OSError as error:
            log.warning("could not store a prompt prefix's KV state in %s: %s", self.directory, error)
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(temporary)
            return
        self.saves += 1
        self._prune()

    def _prune(self) -> None:
        files = []
        for path in self.directory.glob("*.kvstate"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                files.append((stat.st_mtime_ns, stat.st_size, path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size

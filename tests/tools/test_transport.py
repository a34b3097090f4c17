"""The stdio line reader: lines split at any chunk boundary, over-long lines skipped with their request id."""

from __future__ import annotations

import json

import pytest
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError

from planwerk.tools.config import minimal_environment
from planwerk.tools.transport import MESSAGE_TOO_LARGE, _LineReader, _too_large


def feed_all(reader: _LineReader, data: bytes, size: int) -> list[bytes | tuple[int, bytes, bytes]]:
    out = []
    for start in range(0, len(data), size):
        out.extend(reader.feed(data[start : start + size]))
    return out


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 10_000])
def test_lines_come_out_whole_whatever_the_chunks(chunk: int) -> None:
    lines = [b'{"a": 1}', b"", b"x" * 500, b'{"b": "\xc3\xa4"}']
    assert feed_all(_LineReader(10_000), b"\n".join(lines) + b"\n", chunk) == lines


@pytest.mark.parametrize("chunk", [5, 100, 4096])
def test_a_line_over_the_limit_is_skipped_and_the_next_one_kept(chunk: int) -> None:
    big = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"y" * 5000 + b'"}}'
    out = feed_all(_LineReader(1000), big + b'\n{"ok": true}\n', chunk)
    assert len(out) == 2 and out[1] == b'{"ok": true}'
    size, head, tail = out[0]  # type: ignore[misc]
    assert size == len(big) and head.startswith(b'{"jsonrpc"') and tail.endswith(b'"}}')


def test_the_error_for_a_skipped_response_names_its_id_and_size() -> None:
    head = b'{"jsonrpc":"2.0","id":7,"result":{"text":"yyyy'
    message = _too_large(52_000_123, head, b'yyyy"}}', 8_388_608)
    assert isinstance(message, SessionMessage) and isinstance(message.message.root, JSONRPCError)
    error = message.message.root
    assert error.id == 7 and error.error.code == MESSAGE_TOO_LARGE
    assert "52,000,123 bytes, over the limit of 8,388,608 bytes" in error.error.message
    # id last, as the TypeScript SDK writes it; a string id
    tail = json.dumps({"jsonrpc": "2.0", "id": "r-1"}).encode()[-20:]
    late = _too_large(10, b'{"result":{"t":"yyy', tail, 5)
    assert isinstance(late, SessionMessage) and late.message.root.id == "r-1"  # type: ignore[union-attr]
    assert isinstance(_too_large(10, b'{"method":"x"', b"yyy}", 5), ValueError)  # no id: logged by the session


def test_the_minimal_environment_keeps_the_basics_and_what_is_named() -> None:
    parent = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C.UTF-8",
        "VIRTUAL_ENV": "/v",
        "OPENAI_API_KEY": "sk-secret",
        "OVERPASS_URL": "http://o",
        "BASH_FUNC_x%%": "() { :; }",
    }
    assert minimal_environment(parent) == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C.UTF-8", "VIRTUAL_ENV": "/v"}
    assert minimal_environment(parent, ("OVERPASS_URL", "MISSING"))["OVERPASS_URL"] == "http://o"

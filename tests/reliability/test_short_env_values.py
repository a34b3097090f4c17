"""Tool errors keep short settings readable: only values that can be secrets are redacted.

Every env value of a server's config used to be redacted, so ``REGION=eu`` and ``DEBUG=1`` turned a server's
error "region eu failed (code 1)" into "r***gion *** fai***ed (code ***)". Secrets (long values, or values of
variables named like ``*KEY*``/``*TOKEN*``) are still redacted.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.config import StdioServer
from planwerk.tools.mcp import open_tools
from planwerk.tools.redaction import env_secrets

ECHO = str(Path(__file__).parents[1] / "tools" / "echo_server.py")
ENV = {"REGION": "eu", "DEBUG": "1", "VERBOSE": "true", "API_KEY": "sk-live-abcdef", "PIN": "4711"}


async def test_a_tool_error_keeps_short_settings_and_hides_the_key(figures: Any) -> None:
    servers = {"echo": {"command": sys.executable, "args": [ECHO, "stdio"], "env": ENV, "timeout": 20}}
    async with open_tools({"mcpServers": servers}) as tools:
        with pytest.raises(ToolError) as caught:
            await tools.call("boom", {"message": "region eu failed (code 1, verbose true) with key sk-live-abcdef"})
    message = str(caught.value)
    assert "region eu failed (code 1, verbose true) with key ***" in message
    assert "sk-live-abcdef" not in message
    figures.record("secrets: short env values", settings_kept=3, secrets_redacted=1, garbled=0)


def test_which_env_values_count_as_secrets() -> None:
    assert set(env_secrets(ENV)) == {"sk-live-abcdef", "4711"}
    assert StdioServer(name="s", command="c", env=ENV).secrets() == env_secrets(ENV)
    assert env_secrets({"CACHE_DIR": "/var/cache/planwerk", "LANG": "de"}) == ("/var/cache/planwerk",)

"""MCP configuration: parsing, environment expansion, clear errors, secrets kept out of sight."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from planwerk.tools.config import ConfigError, HttpServer, StdioServer, load_config, redact


def test_default_config_runs_both_bundled_servers_with_this_interpreter() -> None:
    config = load_config(env={})
    assert set(config.servers) == {"travel", "math"}
    travel = config.servers["travel"]
    assert isinstance(travel, StdioServer)
    assert travel.command == sys.executable
    assert travel.args == ("-m", "planwerk.tools.servers.travel", "stdio")


def test_env_expansion_with_defaults_and_a_minimal_environment_passed_to_stdio() -> None:
    raw = {
        "mcpServers": {
            "api": {
                "url": "${API_URL:-http://127.0.0.1:9000/mcp}",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
                "timeout": 5,
                "allowed_tools": ["search"],
            },
            "local": {
                "command": "${PYTHON}",
                "args": ["-m", "x", "--home", "${HOME_DIR:-/tmp}"],
                "env": {"OVERPASS_URL": "${OVERPASS}"},
            },
        }
    }
    config = load_config(raw, env={"TOKEN": "s3cr3t-token", "OVERPASS": "http://stub/api", "PYTHON": "/opt/py"})
    api = config.servers["api"]
    assert isinstance(api, HttpServer)
    assert api.url == "http://127.0.0.1:9000/mcp"
    assert api.headers == {"Authorization": "Bearer s3cr3t-token"}
    assert api.allowed_tools == frozenset({"search"})
    conn = api.connection()
    assert conn["session_kwargs"]["read_timeout_seconds"] == timedelta(seconds=5)
    assert conn["transport"] == "streamable_http"
    local = config.servers["local"]
    assert isinstance(local, StdioServer)
    assert local.command == "/opt/py" and local.args[-1] == "/tmp"
    # a minimal environment (no NOMINATIM_URL: it is neither a basic nor named), plus the server's own env
    env = local.connection(parent_env={"PATH": "/bin", "NOMINATIM_URL": "http://n/"})["env"]
    assert env == {"PATH": "/bin", "OVERPASS_URL": "http://stub/api"}


def test_config_from_a_file_and_from_a_json_string(tmp_path: Path) -> None:
    text = json.dumps({"mcpServers": {"m": {"command": "python3", "args": []}, "off": {"url": "x", "disabled": True}}})
    path = tmp_path / "servers.json"
    path.write_text(text)
    assert set(load_config(path, env={}).servers) == {"m"}
    assert set(load_config(str(path), env={}).servers) == {"m"}
    assert set(load_config(text, env={}).servers) == {"m"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"servers": {}}, 'expected an object with "mcpServers"'),
        ({"mcpServers": {"a": []}}, "mcpServers.a: expected an object"),
        ({"mcpServers": {"a": {"args": ["x"]}}}, 'mcpServers.a: expected "command" (stdio) or "url"'),
        ({"mcpServers": {"a": {"command": ""}}}, "mcpServers.a.command: expected a non-empty string"),
        (
            {"mcpServers": {"a": {"command": "x", "args": "-m y"}}},
            "mcpServers.a.args: expected a list of strings",
        ),
        (
            {"mcpServers": {"a": {"url": "ftp://h/mcp"}}},
            "mcpServers.a.url: expected an http:// or https:// URL",
        ),
        (
            {"mcpServers": {"a": {"url": "http://h", "timeout": -1}}},
            "mcpServers.a.timeout: expected a positive",
        ),
        (
            {"mcpServers": {"a": {"url": "http://h", "timeout": float("inf")}}},
            "mcpServers.a.timeout: expected a positive, finite number",
        ),
        (
            {"mcpServers": {"a": {"url": "http://h", "headers": {"X": 1}}}},
            "mcpServers.a.headers.X: expected a string",
        ),
        ({"mcpServers": {"a": {"url": "http://h", "command": "x"}}}, 'has both "command" and "url"'),
        ({"mcpServers": {"a": {"url": "http://h", "env": {}}}}, "an HTTP server takes url/headers"),
        (
            {"mcpServers": {"a": {"url": "http://h", "allowed_tools": "add"}}},
            "allowed_tools: expected a list",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "read_only_tools": "read_file"}}},
            "mcpServers.a.read_only_tools: expected a list of tool names",
        ),
        ({"mcpServers": {"a": {"url": "http://h", "retries": 3}}}, "mcpServers.a: unknown key(s) retries"),
        ({"mcpServers": {"a": {"url": "${NOPE}"}}}, "mcpServers.a.url: environment variable NOPE is not set"),
    ],
)
def test_malformed_config_gives_one_clear_line(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(raw, env={})
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_unreadable_or_invalid_json(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the MCP config"):
        load_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {')
    with pytest.raises(ConfigError, match=r"not valid JSON \(line 1"):
        load_config(bad)


def test_secrets_never_show_in_repr_or_errors() -> None:
    raw = {
        "mcpServers": {
            "api": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer tok-123456789"}},
            "local": {"command": "x", "env": {"API_KEY": "key-987654321"}},
        }
    }
    config = load_config(raw, env={})
    shown = repr(config) + str(config) + repr(config.servers["api"]) + repr(config.servers["local"])
    assert "tok-123456789" not in shown and "key-987654321" not in shown
    assert "Authorization" in shown  # the names are fine
    assert redact("401 for Bearer tok-123456789 (tok-123456789)", config.secrets()) == "401 for *** (***)"
    with pytest.raises(ConfigError) as info:
        load_config({"mcpServers": {"a": {"url": "http://h", "headers": {"Authorization": ["Bearer tok-1"]}}}}, env={})
    assert "tok-1" not in str(info.value)


def test_http_auth_is_parsed_and_its_secrets_and_url_keys_are_secrets() -> None:
    oauth_auth = {"type": "client_credentials", "client_id": "c", "client_secret": "cs-abcdefgh"}
    oauth_auth["issuer"] = "https://login.example"
    raw = {
        "mcpServers": {
            "static": {"url": "http://h/mcp?api_key=ak-12345678&v=2", "auth": {"type": "bearer", "token": "${T}"}},
            "file": {"url": "http://u:pw-secret-1@h/mcp", "auth": {"type": "token_file", "path": "/run/t"}},
            "cmd": {"url": "http://h/mcp", "timeout": 5, "auth": {"type": "token_command", "command": ["mint", "x"]}},
            "oauth": {"url": "http://h/mcp", "auth": oauth_auth},
        }
    }
    config = load_config(raw, env={"T": "tok-987654321"})
    static, file, cmd, oauth = (config.servers[n] for n in ("static", "file", "cmd", "oauth"))
    assert isinstance(cmd, HttpServer) and cmd.auth is not None and cmd.auth.type == "token_command"
    assert cmd.auth.command == ("mint", "x") and cmd.auth.timeout_s == 5  # type: ignore[union-attr]
    secrets = set(config.secrets())
    assert {"tok-987654321", "ak-12345678", "pw-secret-1", "cs-abcdefgh"} <= secrets and "2" not in secrets
    shown = repr(static) + repr(file) + repr(oauth)
    assert "ak-12345678" not in shown and "pw-secret-1" not in shown and "cs-abcdefgh" not in shown
    assert "api_key=***" in shown and "v=***" in shown


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ({"type": "basic"}, 'mcpServers.a.auth: expected an object with "type" one of "bearer", "token_file"'),
        ({"type": "bearer"}, "mcpServers.a.auth: type 'bearer' needs token"),
        ({"type": "bearer", "token": "x", "path": "y"}, "mcpServers.a.auth: unknown key(s) path for type 'bearer'"),
        ({"type": "token_command", "command": "mint --x"}, "mcpServers.a.auth.command: expected a list of strings"),
        ({"type": "client_credentials", "client_id": "c", "client_secret": "s"}, "needs issuer"),
    ],
)
def test_a_malformed_auth_is_named(auth: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config({"mcpServers": {"a": {"url": "http://h/mcp", "auth": auth}}}, env={})
    assert message in str(info.value)


def test_auth_and_an_authorization_header_together_are_an_error() -> None:
    server = {"url": "http://h/mcp", "headers": {"Authorization": "Bearer x"}, "auth": {"type": "bearer", "token": "y"}}
    with pytest.raises(ConfigError, match='has both "auth" and an Authorization header'):
        load_config({"mcpServers": {"a": server}}, env={})
    with pytest.raises(ConfigError, match="a stdio server takes command/args/env/cwd/inherit_env, not url/heade"):
        load_config({"mcpServers": {"a": {"command": "x", "auth": {"type": "bearer", "token": "y"}}}}, env={})

"""MCP server configuration: the common ``{"mcpServers": {name: {...}}}`` JSON form, validated.

A server is either stdio (``command``, ``args``, ``env``, ``cwd``) or streamable HTTP (``url``, ``headers``).
An HTTP server may also have ``auth``: a static ``bearer`` token, a ``token_file`` or ``token_command`` asked again
after a 401, or OAuth ``client_credentials`` (:mod:`planwerk.tools.auth`, ``docs/tools.md``).
Every string may use ``${VAR}`` or ``${VAR:-default}``; ``${PYTHON}`` is the running interpreter unless the
environment sets ``PYTHON``. Per server: ``timeout`` (seconds for start-up and for every call, default 30),
``allowed_tools`` (a list of tool names; others are hidden), ``read_only_tools`` (tools that only read, for a
server that does not annotate them with ``readOnlyHint``), ``disabled`` (skip it), ``roots``
(the directories the server may work in, offered to it as MCP roots: paths or ``file://`` URIs, or objects with
``uri`` or ``path`` and an optional ``name``; see ``docs/capabilities.md``). Header and env values are
secrets, and so are the values of an HTTP server's URL query (``?api_key=...``), its URL's password and its
``auth`` tokens and client secret: they never appear in ``repr``, logs, events, state or prompts
(:mod:`planwerk.tools.redaction`).

Tool names: ``prefix`` names a server's tools ``<prefix>_<tool>`` (``true``: the server's name is the prefix).
Without it, a tool name that two servers share is prefixed with each one's server name (``a_read_file``,
``b_read_file``); no tool is hidden. ``allowed_tools`` names a server's tools as the server does, unprefixed.

A stdio server does not see planwerk's environment: it starts with :func:`minimal_environment` (what a process and
a Python interpreter need, no credentials), plus its ``env``, plus the variables ``inherit_env`` names (a list of
names passed on from planwerk's environment when set). ``max_message_bytes`` bounds one message from a server, stdio
or HTTP (default 8 MiB; a longer result fails with a clear error without being read into memory).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from planwerk.tools.auth import (
    AuthConfig,
    BearerAuth,
    ClientCredentialsAuth,
    TokenCommandAuth,
    TokenFileAuth,
)

# redact lives with the secret policy; imported here too because callers import it from the config module.
from planwerk.tools.redaction import env_secrets
from planwerk.tools.redaction import redact as redact

DEFAULT_CONFIG_PATH = Path(__file__).with_name("mcp_servers.json")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The largest message a server may send (a result with its JSON-RPC envelope)."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_STDIO_KEYS = {"command", "args", "env", "cwd", "inherit_env"}
_HTTP_KEYS = {"url", "headers", "auth"}
_CAPABILITY_KEYS = {"roots"}
_NAMING_KEYS = {"prefix"}
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
"""A tool-name prefix: letters, digits, ``_`` and ``-`` (what MCP tool names use), at most 32."""
_COMMON_KEYS = {
    "transport",
    "type",
    "timeout",
    "allowed_tools",
    "read_only_tools",
    "disabled",
    "description",
    "max_message_bytes",
}


_ENV_PREFIXES = ("LC_",)
"""Locale variables a server inherits, whatever their names."""
_ENV_NAMES = frozenset({
    # the basics of a process (the MCP SDK's own default list is among these)
    "HOME", "LOGNAME", "USER", "PATH", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
    # Windows equivalents
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
    "HOMEDRIVE", "HOMEPATH", "USERNAME", "PROCESSOR_ARCHITECTURE", "PROGRAMDATA", "PROGRAMFILES",
    # what a Python server needs to start from the same environment as planwerk
    "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONUTF8", "PYTHONIOENCODING",
    # where to find CA certificates (paths, not secrets)
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
})  # fmt: skip
"""Variables of planwerk's environment every stdio server gets: what a process needs, no credentials."""


def minimal_environment(parent: Mapping[str, str], inherit: tuple[str, ...] = ()) -> dict[str, str]:
    """What a stdio server starts with from ``parent``: the basics (:data:`_ENV_NAMES`, ``LC_*``; a superset of the
    MCP SDK's ``get_default_environment()``) and the variables ``inherit`` names. Shell functions are left out."""
    names = _ENV_NAMES | set(inherit)
    return {
        key: value
        for key, value in parent.items()
        if (key in names or key.startswith(_ENV_PREFIXES)) and not value.startswith("()")
    }


class ConfigError(ValueError):
    """The MCP configuration is malformed; the message names the key and what was expected."""


@dataclass(frozen=True)
class Root:
    """A directory a server may work in, offered to it as an MCP root (the server asks with ``roots/list``)."""

    uri: str
    """A ``file://`` URI (a configured path is made absolute and turned into one)."""
    name: str | None = None
    """A name for people (optional)."""


@dataclass(frozen=True)
class StdioServer:
    """A server started as a subprocess that speaks MCP over stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Environment for the subprocess, on top of :func:`minimal_environment` (values are secret)."""
    cwd: str | None = None
    inherit_env: tuple[str, ...] = ()
    """Names of planwerk's environment variables passed on to the server when set (e.g. service URLs)."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """The largest message the server may send; see :class:`planwerk.tools.transport.MessageLimits`."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    allowed_tools: frozenset[str] | None = None
    read_only_tools: frozenset[str] = frozenset()
    """Tools of this server that only read, named as the server names them: the operator's word for a server that
    does not annotate them (MCP ``readOnlyHint``). Their text results may be read by ``extract``, and an answer
    needs no call of them to say something was done; a ``destructiveHint`` still asks for approval."""
    roots: tuple[Root, ...] = ()
    """Offered as MCP roots; empty: the session does not advertise roots."""
    tool_prefix: str | None = None
    """Every tool of this server is offered as ``<tool_prefix>_<name>``; ``None``: only names that collide with
    another server's are prefixed (with the server's name)."""
    transport: Literal["stdio"] = "stdio"

    def __repr__(self) -> str:
        env = {k: "***" for k in self.env}
        return f"StdioServer(name={self.name!r}, command={self.command!r}, args={self.args!r}, env={env})"

    def secrets(self) -> tuple[str, ...]:
        """Values that must never be shown: those :func:`env_secrets` counts ("eu" or "1" is a setting)."""
        return env_secrets(self.env)

    def connection(self, parent_env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The langchain-mcp-adapters connection dict, with the server's whole environment under ``env``.

        Not the parent's environment: a server would see every credential planwerk was started with (API keys of
        other services, tokens). It gets :func:`minimal_environment`, what ``inherit_env`` names, and its ``env``.
        """
        parent = os.environ if parent_env is None else parent_env
        env = {**minimal_environment(parent, self.inherit_env), **self.env}
        return {
            "transport": "stdio",
            "command": self.command,
            "args": list(self.args),
            "env": env,
            "cwd": self.cwd,
            "session_kwargs": {"read_timeout_seconds": timedelta(seconds=self.timeout_s)},
        }


@dataclass(frozen=True)
class HttpServer:
    """A server reached over streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Request headers, e.g. ``Authorization: Bearer …`` (values are secret)."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """The largest message (JSON response or SSE event) the server may send; see :mod:`planwerk.tools.http_guard`."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    allowed_tools: frozenset[str] | None = None
    read_only_tools: frozenset[str] = frozenset()
    """See :attr:`StdioServer.read_only_tools`."""
    roots: tuple[Root, ...] = ()
    """Offered as MCP roots; empty: the session does not advertise roots."""
    tool_prefix: str | None = None
    """See :attr:`StdioServer.tool_prefix`."""
    auth: AuthConfig | None = None
    """How requests authenticate (:mod:`planwerk.tools.auth`); None: only what ``headers`` carry."""
    transport: Literal["streamable_http"] = "streamable_http"

    def __repr__(self) -> str:
        headers = {k: "***" for k in self.headers}
        auth = f", auth={self.auth.type}" if self.auth is not None else ""
        return f"HttpServer(name={self.name!r}, url={shown_url(self.url)!r}, headers={headers}{auth})"

    def secrets(self) -> tuple[str, ...]:
        """Values that must never be shown: whole header values and, for ``Bearer x``, the token ``x``; the URL's
        query values and password; a static token and a client secret. (Tokens a supplier hands out join while the
        sessions are open: :class:`planwerk.tools.redaction.SecretStore`.)"""
        out: list[str] = []
        for value in self.headers.values():
            out.append(value)
            out.extend(part for part in value.split() if len(part) >= 6)
        out.extend(url_secrets(self.url))
        if isinstance(self.auth, BearerAuth):
            out.append(self.auth.token)
        elif isinstance(self.auth, ClientCredentialsAuth):
            out.append(self.auth.client_secret)
        return tuple(v for v in out if v)

    def connection(self, parent_env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The langchain-mcp-adapters connection dict; ``read_timeout_seconds`` also bounds a server that
        accepts the connection and never answers (the HTTP ``timeout`` alone does not)."""
        return {
            "transport": "streamable_http",
            "url": self.url,
            "headers": dict(self.headers),
            "timeout": timedelta(seconds=self.timeout_s),
            "session_kwargs": {"read_timeout_seconds": timedelta(seconds=self.timeout_s)},
        }


ServerConfig = StdioServer | HttpServer


def url_secrets(url: str) -> tuple[str, ...]:
    """The parts of a URL that may be credentials: every query value (``?api_key=...``, ``?token=...``) and the
    password of ``user:password@``. Values of 4 characters or more (shorter ones are settings such as ``v=2``)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return ()
    values = [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    if password:
        values.append(password)
    return tuple(v for v in values if len(v) >= 4)


def shown_url(url: str) -> str:
    """``url`` as it may be shown: query values and the password replaced by ``***``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "***"
    netloc = f"{parts.username}:***@{host}{port}" if parts.password else parts.netloc
    query = "&".join(f"{key}=***" for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


@dataclass(frozen=True)
class MCPConfig:
    """The configured servers by name."""

    servers: Mapping[str, ServerConfig]

    def secrets(self) -> tuple[str, ...]:
        """Every secret value of every server, longest first (so redaction replaces whole values first)."""
        return tuple(sorted({s for server in self.servers.values() for s in server.secrets()}, key=len, reverse=True))


def expand(value: str, env: Mapping[str, str], where: str) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; ``${PYTHON}`` defaults to ``sys.executable``."""

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env and (env[name] or default is None):
            return env[name]
        if default is not None:
            return default
        if name == "PYTHON":
            return sys.executable
        raise ConfigError(f"{where}: environment variable {name} is not set (use ${{{name}:-default}} for a default)")

    return _VAR.sub(sub, value)


def load_config(
    source: str | Path | Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None
) -> MCPConfig:
    """Read and validate a configuration: a path to a JSON file, a JSON string, an already parsed mapping, or
    None for the default (the bundled travel and math servers over stdio)."""
    env = os.environ if env is None else env
    if source is None:
        source = DEFAULT_CONFIG_PATH
    if isinstance(source, Mapping):
        data: Any = source
    else:
        text, origin = _read(source)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{origin}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("mcpServers"), Mapping):
        raise ConfigError('top level: expected an object with "mcpServers": {name: {...}}')
    servers: dict[str, ServerConfig] = {}
    for name, raw in data["mcpServers"].items():
        if not isinstance(raw, Mapping):
            raise ConfigError(f"mcpServers.{name}: expected an object, got {type(raw).__name__}")
        if raw.get("disabled") is True:
            continue
        servers[name] = _server(str(name), raw, env)
    return MCPConfig(servers=servers)


def _read(source: str | Path) -> tuple[str, str]:
    if isinstance(source, Path) or not source.lstrip().startswith("{"):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the MCP config ({exc.strerror})") from None
    return source, "config"


def _server(name: str, raw: Mapping[str, Any], env: Mapping[str, str]) -> ServerConfig:
    where = f"mcpServers.{name}"
    unknown = set(raw) - _STDIO_KEYS - _HTTP_KEYS - _COMMON_KEYS - _CAPABILITY_KEYS - _NAMING_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if "command" in raw and "url" in raw:
        raise ConfigError(f'{where}: has both "command" and "url"; a server is either stdio (command) or HTTP (url)')
    transport = raw.get("transport", raw.get("type"))
    if transport is None:
        transport = "stdio" if "command" in raw else "streamable_http" if "url" in raw else None
    if transport in ("http", "streamable-http", "streamableHttp"):
        transport = "streamable_http"
    if transport not in ("stdio", "streamable_http"):
        raise ConfigError(
            f'{where}: expected "command" (stdio) or "url" (streamable HTTP), or a transport of '
            f'"stdio" or "streamable_http"; got transport={transport!r}'
        )
    timeout = raw.get("timeout", DEFAULT_TIMEOUT_S)
    # Infinity (Python's json reads it) would overflow the timers at the first call: refused here, like <= 0.
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        raise ConfigError(f"{where}.timeout: expected a positive, finite number of seconds, got {timeout!r}")
    allowed = raw.get("allowed_tools")
    if allowed is not None and (not isinstance(allowed, list) or not all(isinstance(t, str) for t in allowed)):
        raise ConfigError(f"{where}.allowed_tools: expected a list of tool names")
    allowed_set = frozenset(allowed) if allowed is not None else None
    read_only = raw.get("read_only_tools", [])
    if not isinstance(read_only, list) or not all(isinstance(t, str) and t for t in read_only):
        raise ConfigError(f"{where}.read_only_tools: expected a list of tool names")
    roots = _roots(raw.get("roots", []), f"{where}.roots", env)
    prefix = _prefix(raw.get("prefix"), name, f"{where}.prefix")
    limit = raw.get("max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ConfigError(f"{where}.max_message_bytes: expected a positive whole number, got {limit!r}")

    if transport == "stdio":
        if set(raw) & _HTTP_KEYS:
            raise ConfigError(f"{where}: a stdio server takes command/args/env/cwd/inherit_env, not url/headers/auth")
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{where}.command: expected a non-empty string")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args: expected a list of strings")
        server_env = _string_map(raw.get("env", {}), f"{where}.env", env)
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}.cwd: expected a string path")
        inherit = raw.get("inherit_env", [])
        if not isinstance(inherit, list) or not all(isinstance(n, str) and n for n in inherit):
            raise ConfigError(f"{where}.inherit_env: expected a list of environment variable names")
        return StdioServer(
            name=name,
            command=expand(command, env, f"{where}.command"),
            args=tuple(expand(a, env, f"{where}.args[{i}]") for i, a in enumerate(args)),
            env=server_env,
            cwd=expand(cwd, env, f"{where}.cwd") if cwd else None,
            inherit_env=tuple(inherit),
            max_message_bytes=limit,
            timeout_s=float(timeout),
            allowed_tools=allowed_set,
            read_only_tools=frozenset(read_only),
            roots=roots,
            tool_prefix=prefix,
        )
    if set(raw) & _STDIO_KEYS:
        raise ConfigError(f"{where}: an HTTP server takes url/headers/auth, not command/args/env/cwd")
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{where}.url: expected a non-empty string such as http://127.0.0.1:8000/mcp")
    url = expand(url, env, f"{where}.url")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}.url: expected an http:// or https:// URL, got {url!r}")
    headers = _string_map(raw.get("headers", {}), f"{where}.headers", env)
    auth = _auth(raw["auth"], f"{where}.auth", env, timeout) if "auth" in raw else None
    if auth is not None and any(key.lower() == "authorization" for key in headers):
        raise ConfigError(f'{where}: has both "auth" and an Authorization header; keep one of them')
    return HttpServer(
        name=name,
        url=url,
        auth=auth,
        headers=headers,
        max_message_bytes=limit,
        timeout_s=float(timeout),
        allowed_tools=allowed_set,
        read_only_tools=frozenset(read_only),
        roots=roots,
        tool_prefix=prefix,
    )


_AUTH_KEYS: dict[str, tuple[set[str], set[str]]] = {
    "bearer": ({"token"}, set()),
    "token_file": ({"path"}, set()),
    "token_command": ({"command"}, {"timeout"}),
    "client_credentials": ({"client_id", "client_secret", "issuer"}, {"scope", "token_endpoint_auth_method"}),
}
"""Per ``auth`` type: its required keys and its optional ones (besides ``type``)."""


def _auth(raw: Any, where: str, env: Mapping[str, str], timeout: float) -> AuthConfig:
    """An HTTP server's ``auth``: ``{"type": "bearer" | "token_file" | "token_command" | "client_credentials",
    ...}``. Values are never shown in errors (they may be secrets)."""
    types = ", ".join(f'"{t}"' for t in _AUTH_KEYS)
    if not isinstance(raw, Mapping) or raw.get("type") not in _AUTH_KEYS:
        raise ConfigError(f'{where}: expected an object with "type" one of {types}')
    kind = str(raw["type"])
    required, optional = _AUTH_KEYS[kind]
    if unknown := sorted(set(raw) - required - optional - {"type"}):
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} for type {kind!r}")
    if missing := sorted(required - set(raw)):
        raise ConfigError(f"{where}: type {kind!r} needs {', '.join(missing)}")

    def text(key: str) -> str:
        value = raw[key]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}.{key}: expected a non-empty string, got {type(value).__name__}")
        return expand(value, env, f"{where}.{key}")

    if kind == "bearer":
        return BearerAuth(token=text("token"))
    if kind == "token_file":
        return TokenFileAuth(path=text("path"))
    if kind == "token_command":
        command = raw["command"]
        if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
            raise ConfigError(f"{where}.command: expected a list of strings (the program and its arguments)")
        seconds = raw.get("timeout", min(timeout, 10.0))
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < math.inf:
            raise ConfigError(f"{where}.timeout: expected a positive, finite number of seconds, got {seconds!r}")
        args = tuple(expand(a, env, f"{where}.command[{i}]") for i, a in enumerate(command))
        return TokenCommandAuth(command=args, timeout_s=float(seconds))
    issuer = text("issuer")
    if not issuer.startswith(("https://", "http://")):
        raise ConfigError(f"{where}.issuer: expected the authorization server's http(s) issuer URL")
    method = raw.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in ("client_secret_basic", "client_secret_post"):
        raise ConfigError(f'{where}.token_endpoint_auth_method: expected "client_secret_basic" or "client_secret_post"')
    return ClientCredentialsAuth(
        client_id=text("client_id"),
        client_secret=text("client_secret"),
        issuer=issuer,
        scope=text("scope") if "scope" in raw else None,
        token_endpoint_auth_method=method,
    )


def _prefix(raw: Any, name: str, where: str) -> str | None:
    """The configured tool-name prefix: a string, ``true`` (the server's name) or absent/``false`` (automatic)."""
    if raw is None or raw is False:
        return None
    prefix = name if raw is True else raw
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ConfigError(
            f"{where}: expected true or a prefix of letters, digits, '_' and '-' (at most 32, e.g. \"fs\"), "
            f"got {prefix!r}" + (" (the server's name, as prefix: true)" if raw is True else "")
        )
    return prefix


def offered_tool_names(tools: Sequence[tuple[str, str | None, str]]) -> list[str]:
    """The names tools are offered under, for ``(server, prefix, tool)`` triples in order (pure; no tool hidden).

    A configured prefix always applies (``<prefix>_<tool>``). Without one, a name that another server's tool also
    has is prefixed with the server's name, on every server that has it, so no server's tool wins by the order of
    the config. Names still equal after that (a prefixed name that spells another tool's) get ``_2``, ``_3``.
    """
    base = [f"{prefix}_{tool}" if prefix else tool for _, prefix, tool in tools]
    counts = Counter(base)
    names = [
        f"{server}_{tool}" if prefix is None and counts[name] > 1 else name
        for (server, prefix, tool), name in zip(tools, base, strict=True)
    ]
    out: list[str] = []
    for name in names:
        candidate, number = name, 1
        while candidate in out or (candidate != name and candidate in names):
            number += 1
            candidate = f"{name}_{number}"
        out.append(candidate)
    return out


def _roots(raw: Any, where: str, env: Mapping[str, str]) -> tuple[Root, ...]:
    """The configured roots: each a path or ``file://`` URI, or an object with ``uri`` or ``path`` and ``name``."""
    expected = 'a list of paths or file:// URIs, or of objects {"path" or "uri": ..., "name": ...}'
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected {expected}")
    roots = []
    for i, item in enumerate(raw):
        name = None
        if isinstance(item, Mapping):
            if unknown := sorted(set(item) - {"uri", "path", "name"}):
                raise ConfigError(f"{where}[{i}]: unknown key(s) {', '.join(unknown)}; expected {expected}")
            if ("uri" in item) == ("path" in item):
                raise ConfigError(f'{where}[{i}]: expected exactly one of "uri" and "path"')
            name = item.get("name")
            if name is not None and not isinstance(name, str):
                raise ConfigError(f"{where}[{i}].name: expected a string")
            item = item.get("uri", item.get("path"))
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{where}[{i}]: expected {expected}, got {item!r}")
        value = expand(item, env, f"{where}[{i}]")
        if value.startswith("file://"):
            uri = value
        elif "://" in value:
            raise ConfigError(f"{where}[{i}]: MCP roots are file:// URIs or paths, got {value!r}")
        else:  # a path, relative to planwerk's working directory
            uri = Path(value).expanduser().resolve().as_uri()
        roots.append(Root(uri=uri, name=expand(name, env, f"{where}[{i}].name") if name else None))
    return tuple(roots)


def _string_map(raw: Any, where: str, env: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object of strings")
    out = {}
    for key, value in raw.items():
        if not isinstance(value, str):
            # Say what type it was, never the value: these are secrets.
            raise ConfigError(f"{where}.{key}: expected a string, got {type(value).__name__}")
        out[str(key)] = expand(value, env, f"{where}.{key}")
    return out

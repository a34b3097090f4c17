"""Bearer tokens for the servers: the operator's auth settings and the JWT check behind :mod:`planwerk.serving.auth`.

Settings (environment of the server process, read once at start):

- ``PLANWERK_AUTH``: ``jwt`` (default) or ``off`` (local development only: every request is the one user
  :data:`LOCAL_USER`, with the operator role).
- ``PLANWERK_JWT_SECRET``: the shared secret of HS256 tokens.
- ``PLANWERK_JWKS``: a JWKS file (re-read when it changes) or an ``https://`` URL (fetched with a timeout, keys
  cached) holding the public keys of RS256/ES256 tokens. Both may be set: the token's ``alg`` picks.
- ``PLANWERK_JWT_AUDIENCE``: when set, a token's ``aud`` must name it; when unset, a token carrying ``aud`` is
  refused (it was issued for some other service).

A token must be signed, unexpired (``exp`` required, :data:`LEEWAY_S` of clock skew) and carry a ``sub``: the
caller's identity. The operator role (sees and changes every user's resources) is :data:`OPERATOR_ROLE` in the
``roles`` claim (a list or a string), the ``role`` claim, or the space-separated ``scope`` / ``scp`` claim.

Nothing here raises at import or start: a bad setting is logged and every request is refused with 401 saying that
the server's authentication is not configured (an import error would make Aegra fall back to anonymous access).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jwt

log = logging.getLogger(__name__)

AuthMode = Literal["jwt", "off"]
MODE_ENV = "PLANWERK_AUTH"
SECRET_ENV = "PLANWERK_JWT_SECRET"
JWKS_ENV = "PLANWERK_JWKS"
AUDIENCE_ENV = "PLANWERK_JWT_AUDIENCE"
OPERATOR_ROLE = "operator"
"""The role (in ``roles``, ``role``, ``scope`` or ``scp``) that sees every user's threads, runs and assistants."""
LOCAL_USER = "local-dev"
"""The identity of every request when ``PLANWERK_AUTH=off``."""
RESERVED_IDENTITIES = frozenset({"system", "anonymous", LOCAL_USER})
"""Identities a token may not claim: the servers' own owner of the graph's assistants (``system``), Aegra's
identity without auth (``anonymous``) and the identity of ``PLANWERK_AUTH=off``."""
MIN_SECRET_BYTES = 32
"""The shortest ``PLANWERK_JWT_SECRET`` accepted (RFC 7518: an HS256 key at least as long as its hash)."""
SECRET_ALGORITHMS = ("HS256",)
KEY_ALGORITHMS = ("RS256", "ES256")
LEEWAY_S = 30
"""Clock skew allowed on ``exp``/``nbf``/``iat``."""
JWKS_TIMEOUT_S = 10.0
"""Fetching a JWKS URL: the whole request."""
JWKS_CACHE_S = 300.0
"""How long keys fetched from a JWKS URL are kept before the next fetch (an unknown ``kid`` fetches at once)."""


class TokenError(Exception):
    """A request's token was refused; the message says why (it goes back to the client with a 401)."""


@dataclass(frozen=True)
class AuthSettings:
    """The operator's auth settings (see the module doc); :meth:`from_env` reads them."""

    mode: AuthMode = "jwt"
    secret: str | None = None
    jwks: str | None = None
    """A file path or an ``https://`` URL."""
    audience: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AuthSettings:
        """Read the settings; raises ``ValueError`` naming the variable and what was expected for a bad value."""
        env = os.environ if env is None else env
        mode = env.get(MODE_ENV, "").strip().lower() or "jwt"
        if mode not in ("jwt", "off"):
            raise ValueError(f"{MODE_ENV}={env.get(MODE_ENV)!r}: expected 'jwt' (the default) or 'off'")
        jwks = env.get(JWKS_ENV, "").strip() or None
        if jwks is not None and "://" in jwks and not jwks.startswith("https://"):
            raise ValueError(f"{JWKS_ENV}={jwks!r}: expected a file path or an https:// URL")
        secret = env.get(SECRET_ENV) or None
        if secret is not None and len(secret.encode()) < MIN_SECRET_BYTES:
            raise ValueError(
                f"{SECRET_ENV} is {len(secret.encode())} bytes long: expected at least {MIN_SECRET_BYTES} (HS256 keys "
                "shorter than the hash can be guessed offline from one token), e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return cls(
            mode=mode,  # type: ignore[arg-type]
            secret=secret,
            jwks=jwks,
            audience=env.get(AUDIENCE_ENV, "").strip() or None,
        )

    @property
    def configured(self) -> bool:
        """Whether tokens can be checked at all (``jwt`` needs a secret or a JWKS)."""
        return self.mode == "off" or bool(self.secret or self.jwks)


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: the token's ``sub`` and whether it holds the operator role."""

    identity: str
    operator: bool
    display_name: str


class _JwksFile:
    """A JWKS file, re-read when its modification time changes (rotate keys without a restart)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: float | None = None
        self._keys: jwt.PyJWKSet | None = None

    def key(self, kid: str | None) -> jwt.PyJWK:
        with self._lock:
            try:
                stamp = self.path.stat().st_mtime
            except OSError as error:
                log.error("auth: the JWKS file %s cannot be read: %s", self.path, error)
                raise TokenError("the server cannot read its signing keys; see the server log") from None
            if stamp != self._stamp:
                try:
                    self._keys = jwt.PyJWKSet.from_dict(json.loads(self.path.read_text(encoding="utf-8")))
                except (OSError, ValueError, jwt.PyJWKSetError) as error:
                    log.error("auth: the JWKS file %s is not a usable key set: %s", self.path, error)
                    raise TokenError("the server cannot read its signing keys; see the server log") from None
                self._stamp = stamp
            keys = self._keys
        assert keys is not None
        return _pick(keys.keys, kid)


def _pick(keys: Sequence[jwt.PyJWK], kid: str | None) -> jwt.PyJWK:
    """The key the token's ``kid`` names (the only key when the token names none and there is one)."""
    if kid is None:
        if len(keys) == 1:
            return keys[0]
        raise TokenError("the token's header names no key (kid) and the server has several")
    for key in keys:
        if key.key_id == kid:
            return key
    raise TokenError(f"the token was signed with a key the server does not know (kid {kid!r})")


class TokenVerifier:
    """Checks bearer tokens against :class:`AuthSettings` (blocking: a JWKS URL may be fetched)."""

    def __init__(self, settings: AuthSettings, problem: str | None = None):
        self.settings = settings
        self.problem = problem
        """Why the settings are unusable (then every request is refused), or ``None``."""
        self._file: _JwksFile | None = None
        self._client: jwt.PyJWKClient | None = None
        if settings.jwks and settings.jwks.startswith("https://"):
            self._client = jwt.PyJWKClient(
                settings.jwks, cache_keys=True, lifespan=JWKS_CACHE_S, timeout=JWKS_TIMEOUT_S
            )
        elif settings.jwks:
            self._file = _JwksFile(Path(settings.jwks).expanduser())

    @property
    def blocks(self) -> bool:
        """Whether :meth:`verify` may read a file or fetch keys over the network (then run it off the event loop)."""
        return self._client is not None or self._file is not None

    def verify(self, authorization: str | None) -> Caller:
        """The caller of a request with this ``Authorization`` header value; :class:`TokenError` says why not."""
        if self.problem is not None:
            raise TokenError("authentication is misconfigured on this server; the operator must fix it (server log)")
        if self.settings.mode == "off":
            return Caller(identity=LOCAL_USER, operator=True, display_name=LOCAL_USER)
        if not self.settings.configured:
            raise TokenError(
                f"authentication is not configured on this server: the operator must set {SECRET_ENV} or "
                f"{JWKS_ENV} ({MODE_ENV}=off only for local development)"
            )
        token = _bearer(authorization)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise TokenError("the bearer token is not a JWT") from None
        algorithm = header.get("alg")
        key: Any
        if algorithm in SECRET_ALGORITHMS and self.settings.secret:
            key, algorithms = self.settings.secret, list(SECRET_ALGORITHMS)
        elif algorithm in KEY_ALGORITHMS and (self._file or self._client):
            key, algorithms = self._key(token, header.get("kid")), list(KEY_ALGORITHMS)
        else:
            accepted = [
                *(SECRET_ALGORITHMS if self.settings.secret else ()),
                *(KEY_ALGORITHMS if self.settings.jwks else ()),
            ]
            raise TokenError(
                f"the token's algorithm {algorithm!r} is not accepted here (accepted: {', '.join(accepted)})"
            )
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=self.settings.audience,
                leeway=LEEWAY_S,
                options={"require": ["exp", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("the token has expired") from None
        except jwt.InvalidAudienceError:
            expected = f"'{self.settings.audience}'" if self.settings.audience else "none (no aud claim)"
            raise TokenError(f"the token's audience (aud) is wrong; this server expects {expected}") from None
        except jwt.InvalidSignatureError:
            raise TokenError("the token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as error:
            raise TokenError(f"the token lacks the {error.claim!r} claim") from None
        except jwt.InvalidTokenError as error:
            raise TokenError(f"the token is invalid: {error}") from None
        return caller(claims)

    def _key(self, token: str, kid: str | None) -> Any:
        if self._file is not None:
            return self._file.key(kid)
        assert self._client is not None
        try:
            return self._client.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError as error:
            log.error("auth: fetching the JWKS %s failed: %s", self.settings.jwks, error)
            raise TokenError("the server could not fetch its signing keys; try again later") from None
        except jwt.PyJWKClientError as error:
            raise TokenError(f"the token's signing key is unknown: {error}") from None


def _bearer(authorization: str | None) -> str:
    if not authorization or not authorization.strip():
        raise TokenError("no token: send the header 'Authorization: Bearer <JWT>'")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenError("the Authorization header must be 'Bearer <JWT>'")
    return token.strip()


def caller(claims: Mapping[str, Any]) -> Caller:
    """The :class:`Caller` of verified claims: ``sub`` is the identity; the operator role as the module doc says."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.strip():
        raise TokenError("the token's 'sub' claim must be a non-empty string (the caller's identity)")
    if subject in RESERVED_IDENTITIES:
        raise TokenError(f"the identity {subject!r} is reserved for the server itself")
    roles: set[str] = set()
    for name in ("roles", "role", "scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            roles.update(value.split() if name in ("scope", "scp") else [value])
        elif isinstance(value, list):
            roles.update(v for v in value if isinstance(v, str))
    name = claims.get("name")
    return Caller(
        identity=subject,
        operator=OPERATOR_ROLE in roles,
        display_name=name if isinstance(name, str) and name else subject,
    )


def load_verifier(env: Mapping[str, str] | None = None) -> TokenVerifier:
    """The server's verifier; with unusable settings one that refuses every request (:attr:`TokenVerifier.problem`).

    Logs the mode at start: a loud warning for ``off``, an error when ``jwt`` has no keys (fail closed).
    """
    try:
        settings = AuthSettings.from_env(env)
    except ValueError as error:
        log.error("auth: %s; every request is refused with 401 until it is fixed", error)
        return TokenVerifier(AuthSettings(mode="jwt"), problem=str(error))
    if settings.mode == "off":
        log.warning(
            "auth: %s=off: NO AUTHENTICATION; every request acts as the operator %r. Local development only: any "
            "process on this machine and any web page open in a browser here can reach a loopback server.",
            MODE_ENV,
            LOCAL_USER,
        )
    elif not settings.configured:
        log.error(
            "auth: %s=jwt but neither %s nor %s is set: every request is refused with 401 (fail closed) until one "
            "is; %s=off only for local development",
            MODE_ENV,
            SECRET_ENV,
            JWKS_ENV,
            MODE_ENV,
        )
    else:
        sources = [
            *(["a shared secret (HS256)"] if settings.secret else []),
            *([f"JWKS {settings.jwks}"] if settings.jwks else []),
        ]
        log.info(
            "auth: bearer JWTs checked with %s%s",
            " and ".join(sources),
            f", audience {settings.audience!r}" if settings.audience else "",
        )
    return TokenVerifier(settings)


def mint_token(
    secret: str,
    subject: str,
    *,
    operator: bool = False,
    ttl_s: float = 3600.0,
    audience: str | None = None,
    **claims: Any,
) -> str:
    """An HS256 token for ``subject`` (tests, benchmarks, local use; real deployments get tokens from their
    identity provider): expires in ``ttl_s`` seconds, the operator role in ``roles`` when ``operator``."""
    now = int(time.time())
    payload: dict[str, Any] = {"sub": subject, "iat": now, "exp": now + int(ttl_s), **claims}
    if operator:
        payload["roles"] = [OPERATOR_ROLE]
    if audience is not None:
        payload["aud"] = audience
    return jwt.encode(payload, secret, algorithm="HS256")

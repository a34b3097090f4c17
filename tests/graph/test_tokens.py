"""The servers' token check (``planwerk.serving.tokens``) without a server: settings, roles, JWKS files, fail closed.
Against the real dev server: ``tests/serving/test_auth.py``."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from planwerk.serving.tokens import AuthSettings, TokenError, TokenVerifier, caller, load_verifier, mint_token

SECRET = "unit-test-secret-0123456789abcdef0123"


def test_settings_default_to_jwt_and_a_bad_value_names_the_variable_and_the_choices() -> None:
    assert AuthSettings.from_env({}) == AuthSettings(mode="jwt")
    assert not AuthSettings.from_env({}).configured
    with pytest.raises(ValueError, match=r"PLANWERK_AUTH='none': expected 'jwt' \(the default\) or 'off'"):
        AuthSettings.from_env({"PLANWERK_AUTH": "none"})
    with pytest.raises(
        ValueError, match=re.escape("PLANWERK_JWKS='http://keys.example/jwks': expected a file path or an https")
    ):
        AuthSettings.from_env({"PLANWERK_JWKS": "http://keys.example/jwks"})


def test_unusable_settings_refuse_every_request_instead_of_failing_the_import() -> None:
    verifier = load_verifier({"PLANWERK_AUTH": "maybe", "PLANWERK_JWT_SECRET": SECRET})
    with pytest.raises(TokenError, match="misconfigured"):
        verifier.verify(f"Bearer {mint_token(SECRET, 'alice')}")
    unconfigured = load_verifier({})
    with pytest.raises(TokenError, match="PLANWERK_JWT_SECRET or PLANWERK_JWKS"):
        unconfigured.verify(f"Bearer {mint_token(SECRET, 'alice')}")


def test_off_is_the_local_operator_without_a_token() -> None:
    who = load_verifier({"PLANWERK_AUTH": "off"}).verify(None)
    assert (who.identity, who.operator) == ("local-dev", True)


@pytest.mark.parametrize(
    ("claims", "operator"),
    [
        ({}, False),
        ({"roles": ["reader", "operator"]}, True),
        ({"roles": "operator"}, True),
        ({"role": "operator"}, True),
        ({"scope": "threads:read operator"}, True),
        ({"scp": ["operator"]}, True),
        ({"scope": "operators"}, False),
    ],
)
def test_the_operator_role_comes_from_roles_role_scope_or_scp(claims: dict, operator: bool) -> None:
    assert caller({"sub": "alice", **claims}).operator is operator


def test_a_jwks_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    def jwks(key: ec.EllipticCurvePrivateKey, kid: str) -> str:
        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        return json.dumps({"keys": [{**public, "kid": kid, "alg": "ES256"}]})

    old, new = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "jwks.json"
    path.write_text(jwks(old, "old"), encoding="utf-8")
    verifier = TokenVerifier(AuthSettings(jwks=str(path)))
    claims = {"sub": "alice", "exp": int(time.time()) + 60}
    assert verifier.verify(f"Bearer {jwt.encode(claims, old, 'ES256', headers={'kid': 'old'})}").identity == "alice"
    rotated = f"Bearer {jwt.encode(claims, new, 'ES256', headers={'kid': 'new'})}"
    with pytest.raises(TokenError, match="does not know"):
        verifier.verify(rotated)
    path.write_text(jwks(new, "new"), encoding="utf-8")
    os.utime(path, (time.time() + 5, time.time() + 5))  # a later modification time, whatever the clock's grain
    assert verifier.verify(rotated).identity == "alice"


def test_an_hs256_token_is_not_checked_against_a_jwks_only_server(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [public]}), encoding="utf-8")
    verifier = TokenVerifier(AuthSettings(jwks=str(tmp_path / "jwks.json")))
    with pytest.raises(TokenError, match="'HS256' is not accepted here"):
        verifier.verify(f"Bearer {mint_token(SECRET, 'alice')}")

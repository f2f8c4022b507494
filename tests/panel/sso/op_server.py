"""A real OpenID provider for the tests: IdentityPython's ``pyop`` behind a small HTTP server.

``pyop`` does the protocol: it checks authentication requests, issues codes bound to the
client, redirect URI and PKCE challenge, authenticates the client at the token endpoint
(``client_secret_basic`` with form-decoding, or ``client_secret_post``, whichever the client
is registered with), verifies the PKCE verifier, and signs ID tokens (RS256). The wrapper here
only moves HTTP in and out of it, over TLS on 127.0.0.1 in a thread (pyop wants an
https issuer; ``tls.py`` makes the certificates), and plays the person at the IdP:

- ``user``: who is signed in at the IdP; the authorization endpoint answers at once for them.
  With ``interactive`` set it shows a small sign-in page instead (for the browser test).
- ``deny``: the person refuses; the authorization endpoint redirects with
  ``error=access_denied`` and an ``error_description`` written by the IdP.

Two hooks turn it into an adversary for negative tests: ``tamper_id_token`` rewrites the ID
token of a token response (to test signature and audience checks), and ``rotate_key``
replaces the signing key and key id (to test key rotation).
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from joserfc import jws, jwt
from joserfc.jwk import RSAKey
from jwkest.jwk import RSAKey as PyopRSAKey
from jwkest.jwk import import_rsa_key
from oic.oic.message import AuthorizationErrorResponse
from pyop.authz_state import AuthorizationState
from pyop.exceptions import (
    InvalidAuthenticationRequest,
    InvalidClientAuthentication,
    OAuthError,
)
from pyop.provider import Provider
from pyop.subject_identifier import HashBasedSubjectIdentifierFactory
from pyop.userinfo import Userinfo
from pyop.util import should_fragment_encode

from tests.panel.sso.tls import LocalTls

USERS: dict[str, dict[str, Any]] = {
    "alice": {
        "sub": "alice@acme.test",
        "email": "alice@acme.test",
        "name": "Alice Operator",
        "groups": ["panel-operators", "staff"],
    },
    "bob": {
        "sub": "bob@acme.test",
        "email": "bob@acme.test",
        "name": "Bob Viewer",
        "groups": ["staff"],
    },
}


def new_rsa_pem() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class OpenIdProvider:
    """pyop on ``http://127.0.0.1:<port>`` (the issuer); see the module docstring."""

    def __init__(self, clients: dict[str, dict[str, Any]], tls: LocalTls) -> None:
        self.tls = tls
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.socket = tls.server_context().wrap_socket(self.server.socket, server_side=True)
        self.server.op = self  # type: ignore[attr-defined]
        self.issuer = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.user: str | None = "alice"
        self.deny = False
        self.interactive = False
        self.tamper_id_token: Callable[[str], str] | None = None
        self.more_claims: dict[str, Any] = {}
        self.token_requests: list[dict[str, str]] = []
        self.key_pem = new_rsa_pem()
        self.kid = "op-key-1"
        configuration = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile"],
        }
        self.provider = Provider(
            self._signing_key(),
            configuration,
            AuthorizationState(HashBasedSubjectIdentifierFactory("test-salt")),
            clients,
            Userinfo(USERS),
        )
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _signing_key(self) -> PyopRSAKey:
        return PyopRSAKey(key=import_rsa_key(self.key_pem), alg="RS256", kid=self.kid)

    def rotate_key(self) -> None:
        """A new signing key under a new key id; the JWKS publishes only the new one."""
        self.key_pem = new_rsa_pem()
        self.kid = f"op-key-{int(self.kid.rsplit('-', 1)[1]) + 1}"
        self.provider.signing_key = self._signing_key()

    def extra_claims(self, user_id: str, client_id: str) -> dict[str, Any]:
        """What the IdP app's "put groups in the ID token" option adds (plus ``more_claims``)."""
        user = USERS[user_id]
        claims = {"email": user["email"], "name": user["name"], "groups": user["groups"]}
        return {**claims, **self.more_claims}

    def resign(self, id_token: str, **changes: Any) -> str:
        """The token's claims with ``changes``, signed again with the OP's own key and key id:
        an IdP that issues a wrong token, as opposed to a forged one."""
        claims = json.loads(jws.extract_compact(id_token.encode()).payload)
        claims.update(changes)
        key = RSAKey.import_key(self.key_pem)
        return jwt.encode({"alg": "RS256", "kid": self.kid}, claims, key)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    @property
    def op(self) -> OpenIdProvider:
        op: OpenIdProvider = self.server.op  # type: ignore[attr-defined]
        return op

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        body = value if isinstance(value, str) else json.dumps(value)
        self._send(status, body.encode(), "application/json", Cache_Control="no-store")

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/plain", Location=location)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/.well-known/openid-configuration":
            self._json(200, self.op.provider.provider_configuration.to_json())
        elif parts.path == "/jwks":
            self._json(200, self.op.provider.jwks)
        elif parts.path == "/authorize":
            self._authorize(parts.query, self.op.user)
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        path = urlsplit(self.path).path
        if path == "/token":
            self._token(body)
        elif path == "/login":
            form = dict(parse_qsl(body))
            user = form.get("username", "")
            self._authorize(form.get("request", ""), user if user in USERS else None)
        else:
            self._send(404, b"not found", "text/plain")

    def _authorize(self, query: str, user: str | None) -> None:
        op = self.op
        try:
            request = op.provider.parse_authentication_request(query)
        except InvalidAuthenticationRequest as error:
            url = error.to_error_url()
            if url:
                self._redirect(url)
            else:
                self._send(400, b"bad authentication request", "text/plain")
            return
        if op.deny:
            refusal = AuthorizationErrorResponse(
                error="access_denied",
                error_description="<b>Alice</b> is not assigned to this app (IdP text)",
                state=request.get("state"),
            )
            self._redirect(refusal.request(request["redirect_uri"], False))
            return
        if (op.interactive and self.command == "GET") or user is None:
            page = (
                "<!doctype html><title>Test IdP sign-in</title><h1>Test IdP</h1>"
                '<form method="post" action="/login">'
                f'<input type="hidden" name="request" value="{html.escape(query)}">'
                '<label for="username">User name</label> '
                '<input id="username" name="username"> <button type="submit">Sign in</button>'
                "</form>"
            )
            self._send(200, page.encode(), "text/html; charset=utf-8")
            return
        response = op.provider.authorize(request, user)
        self._redirect(response.request(request["redirect_uri"], should_fragment_encode(request)))

    def _token(self, body: str) -> None:
        op = self.op
        headers = {}
        if self.headers.get("Authorization"):
            headers["Authorization"] = self.headers["Authorization"]
        op.token_requests.append({"body": body, **headers})
        try:
            response = op.provider.handle_token_request(
                body, headers, extra_id_token_claims=op.extra_claims
            )
        except InvalidClientAuthentication as error:
            self._json(401, {"error": error.oauth_error, "error_description": str(error)})
            return
        except OAuthError as error:
            self._json(400, {"error": error.oauth_error, "error_description": str(error)})
            return
        answer = response.to_dict()
        if op.tamper_id_token is not None and "id_token" in answer:
            answer["id_token"] = op.tamper_id_token(answer["id_token"])
        self._json(200, answer)


@contextmanager
def running_op(clients: dict[str, dict[str, Any]], tls: LocalTls) -> Iterator[OpenIdProvider]:
    op = OpenIdProvider(clients, tls)
    op.start()
    try:
        yield op
    finally:
        op.stop()


def client_entry(
    redirect_uris: list[str], secret: str, method: str = "client_secret_basic"
) -> dict[str, Any]:
    return {
        "client_secret": secret,
        "redirect_uris": redirect_uris,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }


__all__ = ["USERS", "OpenIdProvider", "client_entry", "running_op"]

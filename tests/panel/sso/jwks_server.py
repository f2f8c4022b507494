"""An issuer for the JWT-bearer tests: a discovery document and a JWKS over TLS on 127.0.0.1,
and the signing keys behind them (joserfc). It stands in for the IdP whose ID tokens an
identity-aware proxy forwards; tokens are signed here with a published key."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from tests.panel.sso.tls import LocalTls


class TokenIssuer:
    def __init__(self, tls: LocalTls) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.socket = tls.server_context().wrap_socket(self.server.socket, server_side=True)
        self.server.issuer = self  # type: ignore[attr-defined]
        self.issuer = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.keys: list[RSAKey | ECKey] = [RSAKey.generate_key(2048, {"kid": "proxy-1"})]
        self.algorithms = ["RS256", "ES256"]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/keys",
            "id_token_signing_alg_values_supported": self.algorithms,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
        }

    def jwks(self) -> dict[str, Any]:
        return {"keys": [key.as_dict(private=False) for key in self.keys]}

    def token(
        self, key: RSAKey | ECKey | None = None, alg: str | None = None, **claims: Any
    ) -> str:
        key = key or self.keys[0]
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "aud": "recordseal-panel",
            "sub": "carol@acme.test",
            "email": "carol@acme.test",
            "groups": ["panel-operators"],
            "iat": now,
            "exp": now + 300,
            **claims,
        }
        alg = alg or ("ES256" if isinstance(key, ECKey) else "RS256")
        payload = {k: v for k, v in body.items() if v is not None}
        return jwt.encode({"alg": alg, "kid": key.kid}, payload, key, algorithms=[alg])


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        issuer: TokenIssuer = self.server.issuer  # type: ignore[attr-defined]
        if self.path == "/.well-known/openid-configuration":
            body = json.dumps(issuer.discovery()).encode()
        elif self.path == "/keys":
            body = json.dumps(issuer.jwks()).encode()
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def running_issuer(tls: LocalTls) -> Iterator[TokenIssuer]:
    issuer = TokenIssuer(tls)
    issuer._thread.start()
    try:
        yield issuer
    finally:
        issuer.server.shutdown()
        issuer.server.server_close()

"""OIDC JWT bearer (docs/sso.md): an identity-aware proxy in front of the panel signs the person in
with the IdP and forwards a verified ID token; the panel checks it again.

- ``begin_login`` redirects to the panel's own callback, ``/sso/<id>/callback?state=<nonce>``,
  through the proxy. The proxy authenticates the person and forwards the request with the ID
  token in ``Authorization: Bearer <token>``; the callback route puts it into the callback
  data as ``assertion=<token>`` (a client may instead POST ``callback_data`` =
  base64 of ``assertion=<token>``).
- ``complete_login`` validates the token: pinned algorithms, signature against the issuer's key
  set (with rotation by key id), ``iss`` = the configured issuer, ``aud`` containing the
  configured audience, ``exp``/``iat``; groups come from the top-level ``groups`` claim.
  Proxy tokens carry no nonce of the panel's, so none is required.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import msgspec

from recordseal.panel.sso.contract import Principal, Redirect
from recordseal.panel.sso.errors import InvalidCallback, InvalidNonce
from recordseal.panel.sso.oidc import OidcProvider, parse_callback


class JwtBearerConfig(
    msgspec.Struct, frozen=True, tag="oidc-jwt-bearer", tag_field="kind", forbid_unknown_fields=True
):
    """A registered JWT-bearer provider: issuer and audience plus what discovery found."""

    id: str
    tenant_id: str
    organization_id: str
    issuer: str
    audience: str
    jwks_uri: str
    algorithms: list[str]
    jwks: dict[str, Any] | None = None


class JwtBearerProvider(OidcProvider[JwtBearerConfig]):
    """One organization's OIDC provider in the JWT-bearer flavour."""

    def __repr__(self) -> str:
        return f"JwtBearerProvider(id={self.id!r}, issuer={self.config.issuer!r})"

    async def begin_login(self, return_url: str, state_nonce: str) -> Redirect:
        return Redirect(f"/sso/{quote(self.id, safe='')}/callback?state={state_nonce}")

    async def complete_login(
        self, callback_data: bytes, state_nonce: str, stash: str | None
    ) -> Principal:
        params = parse_callback(callback_data)
        if "state" in params and params["state"] != state_nonce:
            raise InvalidNonce("the callback's state differs from the nonce")
        token = params.get("assertion")
        if not token:
            raise InvalidCallback("no forwarded ID token (Authorization: Bearer)")
        return await self.principal_of(
            token, audience=self.config.audience, nonce=None, groups_claim=None
        )

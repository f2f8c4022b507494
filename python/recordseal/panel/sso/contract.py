"""The provider contract (docs/sso.md) and the authenticated principal (docs/sso.md).

A provider has an id (the organization's ``sso_provider_ref``), a protocol, and the tenant and
organization it signs people into. It exposes two steps:

- ``begin_login(return_url, state_nonce)`` answers a ``Redirect`` (the IdP URL and an optional
  per-attempt ``stash``, kept server-side beside the nonce and never sent to the browser) or a
  ``Challenge`` (WebAuthn-via-provider).
- ``complete_login(callback_data, state_nonce, stash)`` answers a ``Principal`` or raises one
  of the ``LoginError`` kinds of docs/sso.md. A provider embeds ``state_nonce`` in the IdP state
  parameter and raises ``InvalidNonce`` when the echoed value differs (docs/sso.md).
"""

from __future__ import annotations

from typing import Literal, Protocol, TypeAlias, runtime_checkable

import msgspec

from recordseal.panel.errors import PanelError
from recordseal.panel.sessions import SUBJECT_MAX_CHARS

ProtocolName: TypeAlias = Literal["saml", "oidc", "webauthn"]
PROTOCOLS: tuple[ProtocolName, ...] = ("saml", "oidc", "webauthn")


class PrincipalError(PanelError, ValueError):
    """A principal field breaks a rule of docs/sso.md: ``field`` names it, ``rule`` says
    which (the message is both)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


class Principal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who signed in (docs/sso.md). ``claims`` serialise with sorted keys (``claims_json``)."""

    subject_id: str
    tenant_id: str
    organization_id: str
    email: str | None = None
    display_name: str | None = None
    groups: tuple[str, ...] = ()
    claims: dict[str, str] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.subject_id:
            raise PrincipalError("subject_id", "is empty")
        if len(self.subject_id) > SUBJECT_MAX_CHARS:
            raise PrincipalError(
                "subject_id",
                f"is {len(self.subject_id)} characters; the limit is {SUBJECT_MAX_CHARS}",
            )
        if not self.tenant_id:
            raise PrincipalError("tenant_id", "is required")

    def claims_json(self) -> bytes:
        """The claims as JSON with sorted keys: the same bytes for the same claims."""
        return msgspec.json.encode(self.claims, order="sorted")


class Redirect(msgspec.Struct, frozen=True):
    """Send the browser to ``target``; ``stash`` stays on the server (e.g. PKCE verifier)."""

    target: str
    stash: str | None = None


class Challenge(msgspec.Struct, frozen=True):
    """A WebAuthn challenge handed to the browser as base64."""

    challenge: bytes
    stash: str | None = None


BeginResult: TypeAlias = Redirect | Challenge


@runtime_checkable
class SsoProvider(Protocol):
    """What every sso provider implements (docs/sso.md)."""

    @property
    def id(self) -> str: ...
    @property
    def protocol(self) -> ProtocolName: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def organization_id(self) -> str: ...

    async def begin_login(self, return_url: str, state_nonce: str) -> BeginResult: ...

    async def complete_login(
        self, callback_data: bytes, state_nonce: str, stash: str | None
    ) -> Principal: ...

"""Passkey state of the operator panel (docs/panel.md, "Passkeys"), kept in the panel's part
of the store.

Three kinds of rows, in the database of the records (``storage/panel.py``), so that every
worker process and every host shares them:

- passkeys: one per registered credential (user id, credential id, COSE public key, sign
  count, role ``operator`` or ``viewer``, created_at). The role is the per-passkey role store
  of docs/panel.md, "Passkeys", read on every panel request;
- one-time registration links. Only SHA-256 of the random token is stored (the token is 256
  random bits, so a plain hash suffices); a link expires 15 minutes after it is made, is
  single use, and names the role it grants;
- pending WebAuthn ceremonies keyed by a random state id; single use, 5 minutes.

Times are seconds since the Unix epoch from ``clock`` (replaceable in tests).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from recordseal.panel.errors import PanelError
from recordseal.panel.sessions import ROLES, Role
from recordseal.storage.panel import (
    CeremonyKind,
    CeremonyRow,
    LinkRow,
    LinkState,
    PanelStore,
    PasskeyRow,
)

LINK_LIFETIME = 15 * 60
CHALLENGE_LIFETIME = 5 * 60

LinkStatus: TypeAlias = LinkState

__all__ = [
    "CHALLENGE_LIFETIME",
    "LINK_LIFETIME",
    "CeremonyKind",
    "Credential",
    "LinkGone",
    "LinkStatus",
    "PasskeyStore",
    "PendingCeremony",
    "hash_token",
]


class LinkGone(PanelError):
    """The registration link is unknown, used or expired; ``status`` says which."""

    def __init__(self, status: LinkStatus) -> None:
        super().__init__(f"registration link is {status}")
        self.status = status


@dataclass(frozen=True)
class Credential:
    credential_id: bytes
    user_id: str
    public_key: bytes
    sign_count: int
    role: Role
    created_at: float


@dataclass(frozen=True)
class PendingCeremony:
    """A consumed challenge: what the finish step checks the browser's answer against."""

    kind: CeremonyKind
    challenge: bytes
    user_id: str | None
    token_hash: bytes | None


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _role(value: str) -> Role:
    for role in ROLES:
        if value == role:
            return role
    raise ValueError(f"role {value!r} is not one of {', '.join(ROLES)}")


class PasskeyStore:
    """Credentials, one-time registration links and pending challenges (see the module)."""

    def __init__(self, store: PanelStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    # -- registration links ------------------------------------------------------------

    async def create_link(self, role: Role = "operator") -> str:
        """A fresh one-time token (returned once, stored hashed) granting ``role``."""
        role = _role(role)
        token = _b64u(secrets.token_bytes(32))
        now = self.clock()
        await self.store.add_link(LinkRow(hash_token(token), role, now, now + LINK_LIFETIME))
        return token

    async def link_status(self, token: str) -> tuple[LinkStatus, Role | None]:
        """Whether ``token`` may still be used, and the role it grants."""
        link = await self.store.link(hash_token(token))
        if link is None:
            return "unknown", None
        if link.used_at is not None:
            return "used", _role(link.role)
        if not self.clock() < link.expires_at:
            return "expired", _role(link.role)
        return "valid", _role(link.role)

    # -- challenges --------------------------------------------------------------------

    async def put_challenge(
        self,
        kind: CeremonyKind,
        challenge: bytes,
        *,
        user_id: str | None = None,
        token_hash: bytes | None = None,
    ) -> str:
        """Keeps ``challenge`` for 5 minutes under a new random state id, which it returns."""
        state_id = _b64u(secrets.token_bytes(24))
        now = self.clock()
        ceremony = CeremonyRow(kind, challenge, user_id, token_hash, now + CHALLENGE_LIFETIME)
        await self.store.put_ceremony(state_id, ceremony, now)
        return state_id

    async def take_challenge(self, state_id: str, kind: CeremonyKind) -> PendingCeremony | None:
        """Removes and returns the pending ceremony (single use); None if unknown or expired."""
        row = await self.store.take_ceremony(state_id)
        if row is None or row.kind != kind or not self.clock() < row.expires_at:
            return None
        return PendingCeremony(kind, row.challenge, row.user_id, row.token_hash)

    # -- credentials -------------------------------------------------------------------

    async def register_with_link(
        self,
        token_hash: bytes,
        user_id: str,
        credential_id: bytes,
        public_key: bytes,
        sign_count: int,
    ) -> Role:
        """Consumes the link and stores the credential with the link's role, atomically.

        Raises ``LinkGone`` when the link is unknown, used or expired (nothing is stored).
        """
        passkey = PasskeyRow(credential_id, user_id, public_key, sign_count, "viewer", self.clock())
        use = await self.store.register_passkey(token_hash, passkey)
        if use.state != "valid" or use.role is None:
            raise LinkGone(use.state)
        return _role(use.role)

    async def credential(self, credential_id: bytes) -> Credential | None:
        row = await self.store.passkey(credential_id)
        if row is None:
            return None
        return Credential(
            row.credential_id,
            row.user_id,
            row.public_key,
            row.sign_count,
            _role(row.role),
            row.created_at,
        )

    async def update_sign_count(self, credential_id: bytes, sign_count: int) -> None:
        await self.store.update_sign_count(credential_id, sign_count)

    async def role(self, user_id: str) -> Role | None:
        """The role of a passkey user (the highest of its passkeys'), None for no passkey."""
        roles = await self.store.passkey_roles(user_id)
        if "operator" in roles:
            return "operator"
        return "viewer" if roles else None

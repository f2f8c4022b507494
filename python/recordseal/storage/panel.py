"""The panel's part of the store (``PanelStore``) and the rows it returns.

Everything the operator panel keeps lives here, in the same database as the records, so that
every worker process and every host behaves as one panel (docs/panel.md, "One panel across
workers and hosts"): passkeys and their roles, one-time registration links, pending WebAuthn
ceremonies, pending sso sign-ins, providers registered through the panel, sign-out epochs,
and the fleet audit stream. Every method is one transaction. The backends hold the SQL only;
the rules (expiry, single use, which role wins, what a cookie's epoch must reach) are the
callers', with the outcomes returned as plain values.

Times of the panel's own rows (expiries, creation) are seconds since the Unix epoch, as the
callers' clocks answer them; the audit stream keeps RFC 3339 text, like the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

#: ``operator`` or ``viewer`` (the panel's roles; the column refuses anything else).
RoleName: TypeAlias = str
CeremonyKind: TypeAlias = Literal["register", "authenticate"]
LinkState: TypeAlias = Literal["valid", "unknown", "used", "expired"]
#: How a manifest step moves the head (see ``ManifestStep``).
StepKind: TypeAlias = Literal["start", "applied", "refused"]

#: The sign-out scope of every session (a legacy operator-admin's sign-out-everywhere);
#: a tenant's own scope is its id, which is never empty.
ALL_TENANTS = ""


@dataclass(frozen=True, slots=True)
class PasskeyRow:
    credential_id: bytes
    user_id: str
    public_key: bytes
    sign_count: int
    role: RoleName
    created_at: float


#: The columns a ``PasskeyRow`` is read from, in its fields' order (both backends' SQL).
PASSKEY_COLUMNS = "credential_id, user_id, public_key, sign_count, role, created_at"


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A one-time registration link, by the SHA-256 of its token."""

    token_hash: bytes
    role: RoleName
    created_at: float
    expires_at: float
    used_at: float | None = None


@dataclass(frozen=True, slots=True)
class LinkUse:
    """What registering a passkey through a link did: ``state`` ``valid`` means the link was
    consumed and the passkey stored with ``role``; otherwise nothing was stored."""

    state: LinkState
    role: RoleName | None


@dataclass(frozen=True, slots=True)
class CeremonyRow:
    """A pending WebAuthn ceremony under its random state id."""

    kind: CeremonyKind
    challenge: bytes
    user_id: str | None
    token_hash: bytes | None
    expires_at: float


@dataclass(frozen=True, slots=True)
class PendingLoginRow:
    """A pending sso sign-in under the SHA-256 of its nonce: the stash is sealed under the
    nonce and ``binding`` is a hash of the starting browser's binding value."""

    provider_ref: str
    return_url: str
    stash: bytes | None
    binding: bytes | None
    expires_at: float


@dataclass(frozen=True, slots=True)
class ProviderRow:
    """A provider registered through the panel: its configuration as JSON without the client
    secret, and the secret sealed by the caller (None for a flavour without one)."""

    provider_id: str
    tenant: str
    organization: str
    config: bytes
    secret: bytes | None
    registered_at: float


#: The columns a ``ProviderRow`` is read from, in its fields' order (both backends' SQL).
PROVIDER_COLUMNS = "id, tenant, organization, config, secret, registered_at"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One fleet audit event as stored: ``line`` is its JSON object; ``key``, when set, is
    unique, so an event written twice (two workers, two hosts) is kept once."""

    event: str
    fleet: str
    tenant: str | None
    at: str
    line: str
    key: str | None = None


@dataclass(frozen=True, slots=True)
class ManifestStep:
    """Moves the fleet manifest head that every process shares, so the events of one manifest
    change are recorded by the first process that sees it and by no other:

    - ``start``: a process runs ``digest``; recorded unless the head already is ``digest``;
    - ``applied``: a reload from ``expected`` to ``digest``; recorded when the head is
      ``expected`` (a process that is behind records nothing) and was not already moved to
      ``digest`` with no refusal pending;
    - ``refused``: a reload to ``digest`` was refused while ``expected`` runs; recorded once
      per refused content, until the head moves again.
    """

    kind: StepKind
    digest: str
    expected: str | None = None


class PanelStore(Protocol):
    # -- passkeys, links and ceremonies (docs/panel.md, "Passkeys") -------------------
    async def add_link(self, link: LinkRow) -> None:
        """Store a link (a token hash stored before is kept as it is: imports repeat)."""
        ...

    async def link(self, token_hash: bytes) -> LinkRow | None: ...
    async def register_passkey(self, token_hash: bytes, passkey: PasskeyRow) -> LinkUse:
        """Consume the link and store the passkey with the link's role, in one transaction;
        the link must be unused and ``passkey.created_at < expires_at``."""
        ...

    async def passkey(self, credential_id: bytes) -> PasskeyRow | None: ...
    async def update_sign_count(self, credential_id: bytes, sign_count: int) -> None: ...
    async def passkey_roles(self, user_id: str) -> list[RoleName]:
        """The roles of the user's passkeys (none: not a passkey user)."""
        ...

    async def has_passkeys(self) -> bool:
        """Whether any passkey is registered (none: the first operator needs a link)."""
        ...

    async def add_passkeys(self, passkeys: Sequence[PasskeyRow]) -> int:
        """Import: store those whose credential id is new; returns how many."""
        ...

    async def put_ceremony(self, state_id: str, ceremony: CeremonyRow, now: float) -> None:
        """Store a ceremony (and drop the ones expired at ``now``)."""
        ...

    async def take_ceremony(self, state_id: str) -> CeremonyRow | None:
        """Remove and answer the ceremony (single use), expired or not."""
        ...

    # -- pending sso sign-ins (docs/sso.md, "Pending logins at rest") -------------------
    async def put_pending_login(
        self, nonce_hash: bytes, login: PendingLoginRow, now: float
    ) -> None:
        """Store a pending sign-in (and drop the ones expired at ``now``)."""
        ...

    async def take_pending_login(self, nonce_hash: bytes) -> PendingLoginRow | None:
        """Remove and answer the pending sign-in (single use), expired or not."""
        ...

    async def pending_login_count(self) -> int: ...

    # -- providers registered through the panel (docs/sso.md) ----------------------------
    async def add_provider(self, provider: ProviderRow) -> bool:
        """Register; False (nothing changed) when a provider with this id is registered. An
        id removed earlier is registered again."""
        ...

    async def remove_provider(self, provider_id: str, now: float) -> bool:
        """Unregister; False when no provider with this id is registered. The id is kept as
        removed, so an import never brings it back."""
        ...

    async def import_provider(self, provider: ProviderRow) -> bool:
        """Add a provider whose id the store never held (registered or removed)."""
        ...

    async def provider(self, provider_id: str) -> ProviderRow | None: ...
    async def providers(self) -> list[ProviderRow]:
        """Every registered provider, by id."""
        ...

    # -- sign-out epochs (docs/panel.md, "Sign out everywhere") --------------------------
    async def signout_epochs(self, scopes: Sequence[str]) -> dict[str, int]:
        """The epoch of each of ``scopes`` that has one (``ALL_TENANTS`` or a tenant id)."""
        ...

    async def current_signout_epoch(self) -> int:
        """The highest epoch of any scope (0 without any): what new cookies carry."""
        ...

    async def raise_signout_epoch(self, scope: str) -> int:
        """Set the scope's epoch to one above every scope's, and answer it."""
        ...

    async def adopt_signout_epoch(self, scope: str, epoch: int) -> None:
        """Import: the scope's epoch becomes ``epoch`` unless it is higher already."""
        ...

    # -- the fleet audit stream (docs/fleets.md, "Audit events") ------------------------
    async def record_audit(
        self, entries: Sequence[AuditEntry], step: ManifestStep | None = None
    ) -> list[AuditEntry]:
        """Append the entries whose key is new, after moving the manifest head by ``step``
        when one is given (nothing is appended when the step does not apply); answers the
        entries appended (the objects given), in order."""
        ...

    async def audit_entries(
        self, *, tenant: str | None = None, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, AuditEntry]]:
        """Appended entries with their position, oldest first: those after position
        ``after``, of ``tenant`` only when given."""
        ...

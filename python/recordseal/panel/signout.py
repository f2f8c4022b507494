"""Sign-out-everywhere epochs per scope (the cookie's ``g=``; docs/panel.md, "Sign out
everywhere").

Each scope has an epoch in the panel's store: ``ALL_TENANTS`` (every session) and one per
tenant. All scopes draw from one counter: raising a scope sets it one above the highest epoch
of any scope, and a new cookie's ``g=`` is that highest epoch. A session is signed out when
its ``g=`` (0 without one) is below the epoch of a scope it belongs to:

- a legacy (passkey, operator-admin) session belongs to ``ALL_TENANTS`` only;
- a tenant-scoped (sso) session belongs to ``ALL_TENANTS`` and to its tenant.

So a tenant's sign-out ends that tenant's sessions and leaves other tenants' and legacy
sessions valid, and a legacy operator-admin's sign-out ends everyone's. The cookie keeps its
one ``g=`` number: cookies issued before scopes existed carry the epoch of the single global
epoch file, which becomes ``ALL_TENANTS``'s epoch when it is imported, so they keep
verifying until the next sign-out that covers them.
"""

from __future__ import annotations

from recordseal.panel.sessions import Session, TenantSession
from recordseal.storage.panel import ALL_TENANTS, PanelStore


def scopes_of(session: Session) -> list[str]:
    """The sign-out scopes a session belongs to."""
    if isinstance(session, TenantSession):
        return [ALL_TENANTS, session.tenant_id]
    return [ALL_TENANTS]


async def is_signed_out(store: PanelStore, session: Session) -> bool:
    """Whether a sign-out-everywhere of one of the session's scopes came after its issue."""
    epochs = await store.signout_epochs(scopes_of(session))
    return (session.epoch or 0) < max(epochs.values(), default=0)


async def sign_out_everywhere(store: PanelStore, tenant_id: str | None) -> int:
    """End every session of ``tenant_id`` (None: of every tenant and every legacy session);
    answers the scope's new epoch."""
    return await store.raise_signout_epoch(ALL_TENANTS if tenant_id is None else tenant_id)

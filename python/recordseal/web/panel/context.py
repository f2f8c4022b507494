"""``PanelContext``: what the panel's handlers share, kept on ``app.state.panel``.

The application assembles one context in its lifespan (a tenant store, the cookie keyring,
the panel's part of the store) and stores it as ``app.state.panel``; handlers take it as the
dependency ``panel`` (:func:`provide_panel`), guards with :func:`panel_context`. The context
holds no panel state of its own: passkey roles and sign-out epochs are read from the store on
every request, so every worker process and every host sees a sign-in, a new passkey or a
sign-out-everywhere made through another at once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litestar.connection import ASGIConnection
from litestar.datastructures import State

from recordseal.fleet.status import FleetStatus
from recordseal.ledger.continuity import Fence
from recordseal.panel.cookies import CookieKeyring
from recordseal.panel.passkey_store import PasskeyStore
from recordseal.panel.sessions import Role, Session
from recordseal.panel.signout import is_signed_out, sign_out_everywhere
from recordseal.panel.tenants import FleetRef, TenantStore
from recordseal.services.listing import Listing
from recordseal.storage.activity import ActivityStore
from recordseal.storage.panel import PanelStore
from recordseal.web.state import typed_state

METRIC_NAMES = (
    "forbidden_cross_tenant",
    "forbidden_role",
    "csrf_rejected",
    "not_found",
    "unauthenticated",
)


def _zero_metrics() -> dict[str, int]:
    return dict.fromkeys(METRIC_NAMES, 0)


@dataclass
class PanelContext:
    """The tenant store, cookie keyring and panel store of one panel process.

    ``metrics`` are in-process counters (see ``METRIC_NAMES``); ``clock`` answers seconds
    since the Unix epoch and is replaceable in tests.
    """

    tenants: TenantStore
    keyring: CookieKeyring
    store: PanelStore
    metrics: dict[str, int] = field(default_factory=_zero_metrics)
    clock: Callable[[], float] = time.time
    #: The organization page's fleet status (latest anchor, witnesses); None: not shown.
    fleet_status: Callable[[FleetRef], Awaitable[FleetStatus]] | None = None
    #: Root of the daily transparency log files; None: ``/transparency`` answers 404.
    transparency_root: Path | None = None
    #: A tenant's streams and logs fenced because the store is behind what the service
    #: signed (docs/continuity.md); none when not wired.
    fences: Callable[[str], Sequence[Fence]] = lambda tenant: ()
    #: The live view's rows (``storage/activity.py``); None: ``/live`` pages answer 404.
    activity: ActivityStore | None = None
    #: A stream's records (``services/listing.py``); None: the stream pages answer 404.
    records: Listing | None = None
    #: Told each tenant frozen or unfrozen through the panel (the record API's cache).
    tenant_changed: Callable[[str], None] = lambda tenant: None

    def count(self, metric: str) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + 1

    @property
    def passkeys(self) -> PasskeyStore:
        return PasskeyStore(self.store, self.clock)

    async def verify(self, cookie: str) -> Session | None:
        """The session of a cookie that is authentic, unexpired and not signed out."""
        session = self.keyring.verify(cookie, self.clock())
        if session is None or await is_signed_out(self.store, session):
            return None
        return session

    async def current_epoch(self) -> int:
        """The ``g=`` a cookie issued now carries."""
        return await self.store.current_signout_epoch()

    async def sign_out_everywhere(self, tenant_id: str | None) -> int:
        """End every session of ``tenant_id`` (None: every session); the new epoch."""
        return await sign_out_everywhere(self.store, tenant_id)

    async def passkey_role(self, user_id: str) -> Role | None:
        """The role of a passkey (legacy) user now, None when it has no passkey."""
        return await self.passkeys.role(user_id)


def provide_panel(state: State) -> PanelContext:
    """Dependency ``panel``: ``app.state.panel``; a RuntimeError names the missing wiring."""
    return typed_state(state, "panel", PanelContext)


def panel_context(connection: ASGIConnection[Any, Any, Any, Any]) -> PanelContext:
    """The typed accessor of guards and helpers: ``app.state.panel``."""
    return provide_panel(connection.app.state)

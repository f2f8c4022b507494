"""Whether a tenant may be written, as the record API asks it on every write: a frozen tenant
(``active`` false) is read-only (docs/panel.md, "Freezing a tenant").

A tenant's state is read from the store at most once per ``cache_seconds`` (1 s) per
process, so a freeze made through another process or ``recordseal tenant freeze`` holds in
every process within that time, like a token revocation; the process that made it forgets its
copy at once (:meth:`TenantStates.forget`). A tenant without a row (none exists once a token
was made for it) is writable.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from recordseal.services.errors import tenant_inactive
from recordseal.storage.hierarchy import HierarchyStore


class TenantStates:
    def __init__(
        self,
        rows: HierarchyStore,
        cache_seconds: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._rows = rows
        self._cache_seconds = cache_seconds
        self._monotonic = monotonic
        #: tenant -> (active, until when this process trusts it)
        self._cache: dict[str, tuple[bool, float]] = {}

    async def active(self, tenant: str) -> bool:
        now = self._monotonic()
        cached = self._cache.get(tenant)
        if cached is not None and cached[1] > now:
            return cached[0]
        row = await self._rows.tenant(tenant)
        active = row is None or row.active
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[tenant] = (active, now + self._cache_seconds)
        return active

    async def check_writable(self, tenant: str, refused: str) -> None:
        """Refuse (409 ``tenant_inactive``) a write to a frozen tenant; ``refused`` says
        what is refused."""
        if not await self.active(tenant):
            raise tenant_inactive(refused)

    def forget(self, tenant: str) -> None:
        """Read the tenant's state again at its next write (it was just changed here)."""
        self._cache.pop(tenant, None)

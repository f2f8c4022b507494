"""The record API's view of frozen tenants (``services/tenant_states.py``): read from the store
at most once per cache time per process, forgotten at once by the process that changed it."""

from __future__ import annotations

import asyncio

import pytest

from recordseal.services.errors import Frozen
from recordseal.services.tenant_states import TenantStates
from recordseal.storage.base import Store
from recordseal.storage.hierarchy import TenantRow
from tests.backends import opened


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Counting:
    """The store's tenant reads, counted."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.reads = 0

    async def tenant(self, tenant_id: str) -> TenantRow | None:
        self.reads += 1
        return await self.store.hierarchy.tenant(tenant_id)


def test_a_state_is_read_once_per_cache_time_and_forgotten_on_change(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            await rows.put_tenant(TenantRow("acme", "Acme", None, True, "operator", "t"))
            clock, counting = Monotonic(), Counting(store)
            states = TenantStates(counting, cache_seconds=1.0, monotonic=clock)  # type: ignore[arg-type]
            assert await states.active("acme") and await states.active("acme")
            assert counting.reads == 1
            await rows.set_tenant_active("acme", False)
            assert await states.active("acme")  # another process froze it: not seen yet
            clock.now += 1.0
            assert not await states.active("acme")  # past the cache time
            with pytest.raises(Frozen) as refused:
                await states.check_writable("acme", "no new records")
            assert refused.value.code == "tenant_inactive"
            assert counting.reads == 2
            await rows.set_tenant_active("acme", True)
            states.forget("acme")  # this process changed it
            await states.check_writable("acme", "no new records")
            assert counting.reads == 3
            # A tenant without a row (none once a token was made for it) is writable.
            assert await states.active("nobody")

    asyncio.run(run())

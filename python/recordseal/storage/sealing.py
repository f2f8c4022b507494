"""The seal of a log, written once for every backend (as Tessera's
``storage/internal/integrate.go``: the backend reads and writes, the algorithm is here).

A seal appends the pending chain leaves of one (tenant, fleet) log to it and signs the new
checkpoint, in the backend's transaction. Its steps:

1. Find the scope's live log (a backend holding the write lock makes it, unnamed, if it has
   none; PostgreSQL also locks its row).
2. Name it with the seal's origin if no seal named it yet (it was made with its first stream).
3. Read its frontier nodes (``merkle.log.frontier`` of its sealed size).
4. Read its pending leaves, in position order, at most ``request.limit``.
5. Grow it (``merkle.log.grow``); nothing pending: no seal.
6. Refuse (``LogBehind``) if the store's log is another origin's or behind what was signed.
7. Sign the checkpoint of the grown log.
8. Write the new nodes, the log's size and root, and the checkpoint.

Steps 1 to 7 read (and may run outside the write lock, :func:`grow_log`), step 8 writes
(:func:`write_seal`). The deployment's aggregate log (docs/tlog.md, "The aggregate log") is
sealed by the same steps (:func:`seal_aggregate`): its log is the scope (no tenant, the
fleet ``AGGREGATE_FLEET``), step 4 reads the tenant checkpoints it lacks instead of chain
leaves, step 5 grows it by their entries (``merkle.aggregate``), and step 8 also writes the
entries and each tenant log's progress (an :class:`AggregateDriver`).

The backend's reads and writes are a :class:`SealDriver`. PostgreSQL's are coroutines;
SQLite's run inside its writer's job, where nothing may wait, so they are coroutines that
never suspend and :func:`run_now` runs them to the end at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from recordseal.merkle import aggregate as merkle_aggregate
from recordseal.merkle import log as merkle_log
from recordseal.merkle.tree import NodeId
from recordseal.storage.requests import SealRequest
from recordseal.storage.rows import SealedBatch
from recordseal.storage.tenancy import tenant_key

T = TypeVar("T")

#: A tenant log as the aggregate names it in the store: (its ``tenant`` key, its id).
LogKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A log's row as a seal reads it: its id, origin (None until its first seal) and
    sealed size; ``tenant`` is the stored key (``tenancy.tenant_key``)."""

    tenant: str
    log_id: int
    origin: str | None
    size: int


@dataclass(frozen=True, slots=True)
class Grown:
    """A log grown by its pending leaves, the checkpoint signed (steps 1 to 7)."""

    log: StoredLog
    growth: merkle_log.Growth
    note: str


class SealDriver(Protocol):
    """A backend's reads and writes of one seal, inside its transaction."""

    async def live_log(self, tenant: str, fleet: str, origin: str) -> StoredLog | None:
        """Step 1: the scope's live log; one that may write makes it (named ``origin``) when
        there is none, one that only reads answers None then, or for a log not named yet."""
        ...

    async def name_log(self, log: StoredLog, origin: str) -> None:
        """Step 2: name a log on its first seal."""
        ...

    async def nodes(self, log: StoredLog, ids: list[NodeId]) -> dict[NodeId, bytes]:
        """Step 3: the stored nodes among ``ids``."""
        ...

    async def pending(self, log: StoredLog, first: int, limit: int) -> list[tuple[int, bytes]]:
        """Step 4: (position, chain leaf) of the log's leaves from ``first``, in order."""
        ...

    async def write(self, grown: Grown, now: str) -> None:
        """Step 8: the new nodes, the log's size and root, and the checkpoint."""
        ...


class AggregateDriver(SealDriver, Protocol):
    """A backend's reads and writes of one seal of the aggregate log: a :class:`SealDriver`
    for its own log (no tenant, ``AGGREGATE_FLEET``), and these."""

    async def pending_checkpoints(self, limit: int) -> list[merkle_aggregate.Pending[LogKey]]:
        """Step 4: at most ``limit`` tenant checkpoints the aggregate has not taken, by log
        and size."""
        ...

    async def write_entries(
        self, log: StoredLog, growth: merkle_aggregate.AggregateGrowth[LogKey]
    ) -> None:
        """Step 8: the aggregate's new entries, and each tenant log's largest checkpoint
        taken."""
        ...


#: Step 5 of a seal: the log's growth, given its row and stored frontier nodes.
Grow = Callable[[StoredLog, dict[NodeId, bytes]], Awaitable[merkle_log.Growth | None]]


async def grow_log(
    driver: SealDriver, request: SealRequest, grow: Grow | None = None
) -> Grown | None:
    """Steps 1 to 7; None when there is nothing to seal (or, for a driver that only reads, no
    named log yet). ``grow``: steps 4 and 5 of another log than a tenant log's."""
    log = await driver.live_log(tenant_key(request.tenant), request.fleet, request.origin)
    if log is None:
        return None
    if log.origin is None:  # made with the log's first stream, named by its first seal
        await driver.name_log(log, request.origin)
        log = StoredLog(log.tenant, log.log_id, request.origin, log.size)
    stored = await driver.nodes(log, sorted(merkle_log.frontier(log.size)))
    if grow is None:
        pending = await driver.pending(log, merkle_log.first_pending(log.size), request.limit)
        growth = merkle_log.grow(log.size, request.genesis, pending, stored)
    else:
        growth = await grow(log, stored)
    if growth is None:
        return None
    request.admit(log.origin, log.size)
    return Grown(log, growth, request.sign(growth.size, growth.root))


async def write_seal(driver: SealDriver, grown: Grown, request: SealRequest) -> SealedBatch:
    """Step 8, and the seal's answer."""
    await driver.write(grown, request.now)
    growth = grown.growth
    return SealedBatch(request.origin, growth.first_index, growth.size, growth.root, grown.note)


async def seal(driver: SealDriver, request: SealRequest) -> SealedBatch | None:
    """Steps 1 to 8 in one transaction."""
    grown = await grow_log(driver, request)
    return None if grown is None else await write_seal(driver, grown, request)


async def seal_aggregate(driver: AggregateDriver, request: SealRequest) -> SealedBatch | None:
    """The aggregate log's seal, steps 1 to 8 in one transaction; None when no tenant
    checkpoint is waiting."""
    grown_by: list[merkle_aggregate.AggregateGrowth[LogKey]] = []

    async def grow(log: StoredLog, stored: dict[NodeId, bytes]) -> merkle_log.Growth | None:
        pending = await driver.pending_checkpoints(request.limit)
        growth = merkle_aggregate.grow_aggregate(log.size, pending, stored)
        if growth is None:
            return None
        grown_by.append(growth)
        return merkle_log.Growth(growth.first_index, growth.size, growth.root, growth.nodes)

    grown = await grow_log(driver, request, grow)
    if grown is None:
        return None
    await driver.write_entries(grown.log, grown_by[0])
    return await write_seal(driver, grown, request)


def run_now(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (a driver over a blocking connection,
    inside a transaction that may not wait); one that suspends is a bug."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a seal driver suspended inside a transaction that may not wait")

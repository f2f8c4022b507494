"""What ``recordseal recover`` writes (docs/continuity.md, "Recover").

A :class:`Recovery` is applied by ``store.logs.recover`` in one transaction: the aggregate
log taken up again at its last signed checkpoint (:class:`AggregateRestore`), every
:class:`Succession` (the fenced log retired, its successor started with a signed
checkpoint of size 1, the records it had not sealed moved to the successor's positions, its
streams pointed at the successor), then every :class:`GapRecord` (a signed gap header stored
as the stream's record at ``seq``, taking the next position of the stream's log). What is
written was signed and journaled before (``ledger.recovery``); the store only places it.
"""

from __future__ import annotations

from dataclasses import dataclass

from recordseal.merkle import log as merkle_log
from recordseal.storage.errors import StorageError
from recordseal.storage.rows import AGGREGATE_FLEET
from recordseal.storage.sealing import Grown, SealDriver
from recordseal.storage.tenancy import NO_TENANT


@dataclass(frozen=True, slots=True)
class Succession:
    """Retire the live log of (``tenant``, ``fleet``) for ``origin``.

    ``predecessor``, ``size`` and ``root``: the last checkpoint the service signed for the
    log it succeeds (the journal's, which may be beyond what the store holds); ``leaf``: the
    successor's leaf 0 (``merkle.genesis.successor_genesis``); ``note``: its checkpoint of
    size 1, whose root is the leaf hash of ``leaf``; ``keep``: the predecessor's stored size
    whose sealing stands, when a checkpoint after it was never accepted by the journal (None:
    every stored checkpoint stands). The records past it move to the successor.
    """

    tenant: str | None
    fleet: str
    predecessor: str
    size: int
    root: bytes
    origin: str
    leaf: bytes
    note: str
    keep: int | None = None

    def first_moved(self, stored_size: int) -> int:
        """The predecessor's first position whose record moves to the successor."""
        kept = stored_size if self.keep is None else min(stored_size, self.keep)
        return max(kept, 1)


@dataclass(frozen=True, slots=True)
class GapRecord:
    """A gap header of stream (``tenant``, ``stream``) stored as its record at ``seq``.

    ``from_seq``: the stream's next sequence number in the store when the gap was planned
    (the first one declared lost); the store refuses the gap when that has changed.
    ``prev``: the stream's head the gap header links to."""

    tenant: str
    stream: str
    record_id: str
    from_seq: int
    seq: int
    prev: bytes
    header: bytes  # RFC 8785 gap header
    signature: bytes
    chain_leaf: bytes


@dataclass(frozen=True, slots=True)
class AggregateRestore:
    """Take the aggregate log ``origin`` up again at the last checkpoint the service signed
    for it (``size``, ``root``, the journal's): its frontier ``nodes`` (the journal's, by
    (level, index)) and that checkpoint's ``note``, signed again (the same checkpoint). The
    entries between what the store holds and ``size`` stay lost; their hashes are in the
    frontier, so the aggregate grows on from ``size`` with no second history."""

    origin: str
    size: int
    root: bytes
    nodes: dict[tuple[int, int], bytes]
    note: str


@dataclass(frozen=True, slots=True)
class Recovery:
    successions: list[Succession]
    gaps: list[GapRecord]
    now: str
    aggregate: AggregateRestore | None = None


class RecoveryConflict(StorageError):
    """The store changed between the plan and its application: nothing was written."""


async def restore_aggregate(driver: SealDriver, restore: AggregateRestore, now: str) -> None:
    """Take the aggregate log up again at ``restore`` with the backend's seal driver, inside
    the recovery's transaction: its row (made if the store has none, held on PostgreSQL), the
    frontier nodes it lacks (one it holds must agree), its size and root, and the checkpoint."""
    log = await driver.live_log(NO_TENANT, AGGREGATE_FLEET, restore.origin)
    if log is None or log.origin != restore.origin or log.size >= restore.size:
        raise RecoveryConflict(f"the aggregate log {restore.origin} changed since the plan")
    stored = await driver.nodes(log, sorted(restore.nodes))
    if any(bytes(digest) != restore.nodes[node] for node, digest in stored.items()):
        raise RecoveryConflict(f"the aggregate log {restore.origin} holds another history")
    missing = {node: digest for node, digest in restore.nodes.items() if node not in stored}
    growth = merkle_log.Growth(restore.size, restore.size, restore.root, missing)
    await driver.write(Grown(log, growth, restore.note), now)

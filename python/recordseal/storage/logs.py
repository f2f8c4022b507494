"""The logs part of the store: sealing (and who seals), checkpoints and their anchors,
stored tree nodes, where a record was sealed, witness cosignatures and RFC 3161 tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from recordseal.storage.recovery import Recovery
from recordseal.storage.requests import SealRequest
from recordseal.storage.rows import (
    Anchor,
    AnchorLog,
    CheckpointRow,
    LatestCheckpoint,
    LogRow,
    SealedBatch,
)


@dataclass(frozen=True, slots=True)
class WitnessNote:
    """What happened at one offer to a witness: ``cosigned_size`` set for a cosignature, else
    the failure."""

    cosigned_size: int | None = None
    failures: int = 0
    code: str | None = None
    reason: str | None = None


class LogStore(Protocol):
    async def claim_sealing(self) -> bool:
        """True while this process is the one sealer of the database (taken over when its
        holder dies: the claim is a lock the operating system or the server releases)."""
        ...

    async def unsealed_logs(self) -> list[tuple[str, str]]:
        """The (tenant, fleet) pairs that have records not yet in a sealed batch."""
        ...

    async def seal(self, request: SealRequest) -> SealedBatch | None:
        """Append up to ``SEAL_LIMIT`` pending chain leaves of the request's log (made now,
        with its genesis leaf, if new) and store the signed checkpoint, in one transaction
        that two sealers of one log take in turns; None when nothing is pending."""
        ...

    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]: ...

    async def checkpoints_around(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow | None, CheckpointRow | None]:
        """The latest checkpoint that does not include leaf ``index`` and the first that does."""
        ...

    async def log_origins(self) -> list[str]: ...

    async def latest_checkpoints(self) -> list[LatestCheckpoint]:
        """The newest checkpoint of every log, with the names that vouched for it."""
        ...

    async def newest_checkpoint(self, origin: str) -> CheckpointRow | None: ...
    async def checkpoint_at(self, origin: str, size: int) -> CheckpointRow | None: ...
    async def receipts_below(
        self, origin: str, above: int, below: int | None, names: Sequence[str]
    ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """Receipts by ``names`` on checkpoints of ``origin`` with ``above < size < below``
        (no upper bound when None), largest size first: up to ``RECEIPT_PAGE`` (size,
        witness) cosignatures and up to ``RECEIPT_PAGE`` (size, authority) time-stamps."""
        ...

    # Anchors by scope. ``tenant`` is compared null-safely (SQL ``IS`` /
    # ``IS NOT DISTINCT FROM``): None matches only legacy logs (no tenant), a tenant id only
    # that tenant's logs, never the legacy ones.
    async def anchor_logs(self) -> list[AnchorLog]:
        """Every live log (not retired by ``recordseal recover``), legacy ones included, in
        creation order."""
        ...

    async def anchors(
        self,
        tenant: str | None,
        fleet: str,
        *,
        created_from: str | None = None,
        created_before: str | None = None,
    ) -> list[Anchor]:
        """The anchors of the (tenant, fleet) log by size, optionally those with
        ``created_from <= created_at < created_before`` (RFC 3339 UTC text, or a date
        ``YYYY-MM-DD`` for a day's start)."""
        ...

    async def latest_anchor(
        self, tenant: str | None, fleet: str, *, created_before: str | None = None
    ) -> Anchor | None:
        """The largest anchor of the (tenant, fleet) log (created before ``created_before``
        when given), or None."""
        ...

    async def log_nodes(
        self, origin: str, ids: set[tuple[int, int]]
    ) -> dict[tuple[int, int], bytes]:
        """The stored complete-subtree nodes among ``ids``, in one query."""
        ...

    # Tiles (docs/tlog.md, "Tiles"): what the store keeps, read by ranges.
    async def log_of(self, origin: str) -> LogRow | None:
        """The log named ``origin``, retired or not, with its sealed size; None if none."""
        ...

    async def tile_hashes(self, origin: str, level: int, start: int, count: int) -> list[bytes]:
        """The stored nodes ``(level, start)`` ... ``(level, start + count - 1)`` of the log,
        in order: as many as are complete, from ``start`` on."""
        ...

    async def log_entries(self, origin: str, start: int, count: int) -> list[tuple[int, bytes]]:
        """(position, RFC 8785 header) of the log's sealed records at positions ``start`` to
        ``start + count - 1``, in order (gap headers too; position 0 is no record)."""
        ...

    # The aggregate log (docs/tlog.md, "The aggregate log").
    async def seal_aggregate(self, request: SealRequest) -> SealedBatch | None:
        """Take up to ``request.limit`` tenant checkpoints not yet in the aggregate log
        ``request.origin`` (made now if new) into it and store its signed checkpoint, in one
        transaction; None when no checkpoint is waiting."""
        ...

    async def aggregate_entries(self, start: int, count: int) -> list[tuple[int, bytes]]:
        """(position, entry) of the aggregate's entries ``start`` ... in order."""
        ...

    async def aggregated(
        self, origin: str, above: int, below: int | None, newest: bool
    ) -> tuple[CheckpointRow, int] | None:
        """A checkpoint of ``origin`` larger than ``above`` that is in the aggregate at a
        position below ``below`` (any when None), with that position: the largest such one
        when ``newest``, else the smallest."""
        ...

    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None:
        """The log origin and index of a sealed record, or None while it is pending."""
        ...

    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None: ...
    async def note_witness(self, origin: str, witness: str, now: str, note: WitnessNote) -> None:
        """Keep the live view's row of ``witness`` for the log ``origin`` (storage/activity.py):
        a cosignature of ``note.cosigned_size`` (its failures cleared), or a failed offer
        (``note.code``, ``note.reason``, ``note.failures`` in a row)."""
        ...

    async def cosignatures(self, origin: str, size: int) -> list[str]: ...
    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None: ...
    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]: ...

    async def recover(self, recovery: Recovery) -> None:
        """Apply ``recordseal recover``'s successions and gaps in one transaction
        (``storage.recovery``); ``RecoveryConflict`` when the store changed since the plan."""
        ...

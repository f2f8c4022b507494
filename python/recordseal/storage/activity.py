"""The activity part of the store: what the operator's live view shows (docs/panel.md, "Live
view"), read from rows the store keeps as records arrive and logs are sealed, never by
counting records.

- A stream's record count and last seq come from its row (``next_seq``, ``lost_seqs``), its
  last ingest time from ``streams.last_ingest_at`` (written with the stream head).
- Records appended per log and UTC minute are counted at append (``ingest_minutes``, one row
  per log and minute with records): the ingest rate of the last minute and hour, and with the
  checkpoints of the hour (index ``checkpoints_by_time``) the sealing lag over it.
- A log's unsealed records are ``log_positions.next_index - max(size, 1)`` (leaf 0 is the
  log's genesis); the minute of the oldest one is found by walking the log's minutes back
  from the newest until they hold that many records, so the walk is as long as the lag.
- Each witness's last cosignature and its current failures are ``witness_health`` rows, which
  the sealer writes on every cosignature and every failed offer (``LogStore.note_witness``).
- Erasures are read through the partial index ``subjects_erased``, tokens through
  ``tokens_by_tenant``.

Every query of a page is bounded by the tenant's streams, logs, witnesses and the minutes and
checkpoints of one hour: never by its records (``benchmarks/test_live_view_bench.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

#: Minutes of history the view reads (its charts cover the last hour).
WINDOW_MINUTES = 60
#: ``witness_health.reason`` of a witness that holds another root at a size it cosigned: the
#: log's history forked (a restore, or a witness of another data directory).
TWO_ROOTS = "witness.two_roots"


@dataclass(frozen=True, slots=True)
class StreamActivity:
    name: str
    fleet: str
    record_count: int
    last_seq: int  # 0: no record yet
    last_ingest_at: str | None  # RFC 3339; None: nothing since the live view's migration


@dataclass(frozen=True, slots=True)
class WitnessActivity:
    witness: str
    cosigned_size: int | None
    cosigned_at: str | None
    failures: int  # failed offers in a row now (0: vouching)
    code: str | None  # the last failure's code, None once it cosigned again
    reason: str | None  # ``TWO_ROOTS`` or the witness's answer, shortened
    failed_at: str | None

    @property
    def two_roots(self) -> bool:
        return self.reason == TWO_ROOTS


@dataclass(frozen=True, slots=True)
class LogActivity:
    origin: str | None  # None until its first seal
    fleet: str
    sealed_size: int  # the log's size: leaves sealed under a checkpoint
    next_index: int  # the next leaf position to hand out
    checkpoint_size: int | None
    checkpoint_at: str | None
    #: UTC minute of the oldest unsealed record; None: none unsealed, or older than the
    #: minute counters (records appended before the live view's migration)
    oldest_unsealed_minute: int | None
    #: (UTC minute, records appended) of the window's minutes that had records
    minutes: list[tuple[int, int]] = field(default_factory=list)
    #: (created_at, size) of the window's checkpoints, oldest first
    checkpoints: list[tuple[str, int]] = field(default_factory=list)
    #: the size sealed when the window began (the newest checkpoint before it; 0: none)
    sealed_before: int = 0
    witnesses: list[WitnessActivity] = field(default_factory=list)

    @property
    def unsealed(self) -> int:
        return max(0, self.next_index - max(self.sealed_size, 1))


@dataclass(frozen=True, slots=True)
class TenantActivity:
    tenant: str
    since_minute: int  # the first minute of the window
    streams: list[StreamActivity]
    logs: list[LogActivity]
    erasures: int
    last_erasure_at: str | None
    tokens: int  # live (not revoked)
    token_last_used_at: str | None


@dataclass(frozen=True, slots=True)
class TenantSummary:
    """One line of the service-wide view."""

    tenant: str
    display_name: str
    active: bool
    streams: int
    records: int
    last_ingest_at: str | None
    unsealed: int
    ingested_in_window: int
    failing_witnesses: int
    two_roots: int


class ActivityStore(Protocol):
    async def tenant_activity(self, tenant: str, since_minute: int) -> TenantActivity:
        """The live view's rows of one tenant, with the minutes and checkpoints from
        ``since_minute`` (a UTC minute) on."""
        ...

    async def service_activity(self, since_minute: int) -> list[TenantSummary]:
        """One summary per registered tenant, by id."""
        ...


#: Minutes read per step of the walk back to the oldest unsealed record.
WALK_CHUNK = 240


def walk_back(
    minutes_newest_first: list[tuple[int, int]], remaining: int
) -> tuple[int | None, int]:
    """One step of the walk to the oldest unsealed record: ``remaining`` unsealed records not
    yet found in newer minutes; answers the minute holding the oldest (None: not in these
    minutes) and the records still to find."""
    for minute, records in minutes_newest_first:
        remaining -= records
        if remaining <= 0:
            return minute, 0
    return None, remaining

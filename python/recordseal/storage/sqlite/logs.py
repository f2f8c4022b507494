"""The logs part of the SQLite store: sealing, nodes, checkpoints, anchors, receipts."""

from __future__ import annotations

import fcntl
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from recordseal.merkle import aggregate as merkle_aggregate
from recordseal.merkle.tree import NodeId
from recordseal.storage import rows as store_rows
from recordseal.storage.logs import WitnessNote
from recordseal.storage.recovery import Recovery
from recordseal.storage.requests import SealRequest
from recordseal.storage.rows import (
    AGGREGATE_FLEET,
    Anchor,
    AnchorLog,
    CheckpointRow,
    LatestCheckpoint,
    LogRow,
    SealedBatch,
)
from recordseal.storage.sealing import (
    Grown,
    LogKey,
    StoredLog,
    grow_log,
    run_now,
    seal,
    seal_aggregate,
    write_seal,
)
from recordseal.storage.sqlite import recovery as sqlite_recovery
from recordseal.storage.sqlite.database import SQLiteDatabase, open_log
from recordseal.storage.sqlite.writer import Batch
from recordseal.storage.tenancy import NO_TENANT, tenant_key


class SQLiteLogs:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db
        self._sealer_lock: BinaryIO | None = None

    async def claim_sealing(self) -> bool:
        if self._sealer_lock is None:
            # A kernel lock next to the database: released when its holder dies.
            handle = open(self._db.path.with_name("sealer.lock"), "a+b")  # noqa: SIM115
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                return False
            self._sealer_lock = handle
        return True

    def release(self) -> None:
        """Give the sealer claim up (the store closes)."""
        if self._sealer_lock is not None:
            self._sealer_lock.close()
            self._sealer_lock = None

    async def unsealed_logs(self) -> list[tuple[str, str]]:
        """The (tenant, fleet) pairs that have records not yet in a sealed batch."""
        rows = self._db.read(
            "SELECT nullif(l.tenant, ''), l.fleet FROM logs l"
            " JOIN log_positions p ON p.tenant = l.tenant AND p.log_id = l.id"
            " WHERE p.next_index > max(l.size, 1) AND l.retired_at IS NULL ORDER BY l.id"
        )
        return [(tenant, fleet) for tenant, fleet in rows]

    async def seal(self, request: SealRequest) -> SealedBatch | None:
        """Append the pending chain leaves of one (tenant, fleet) to its log and store the
        signed checkpoint, in one transaction: a crash seals all of them or none.

        The leaves are read, hashed into the tree and the checkpoint signed before the write
        lock, on the reader connection, so other writers go on meanwhile: only the sealer
        changes a log's size and nodes (``claim_sealing``), and every committed snapshot
        holds a dense prefix of each log's positions. The transaction then checks that the
        size it grew from is still the log's, and writes. A log without a row or an origin
        yet (its first seal) is sealed wholly inside the transaction.
        """
        reads = _SealDriver(self._db.read)
        grown = run_now(grow_log(reads, request))
        if not reads.found:  # no log row or no origin yet: all of it under the lock
            return await self._db.writer.submit(
                lambda conn, batch: run_now(seal(_SealDriver(conn.execute, conn), request))
            )
        if grown is None:
            return None
        log = grown.log

        def job(conn: sqlite3.Connection, batch: Batch) -> SealedBatch | None:
            driver = _SealDriver(conn.execute, conn)
            (current,) = conn.execute(
                "SELECT size FROM logs WHERE tenant = ? AND id = ?", (log.tenant, log.log_id)
            ).fetchone()
            if current != log.size:  # another seal of this log committed first: start over
                return run_now(seal(driver, request))
            return run_now(write_seal(driver, grown, request))

        return await self._db.writer.submit(job)

    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]:
        rows = self._db.read(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
            " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
            " WHERE l.tenant = ? AND l.fleet = ? AND l.retired_at IS NULL ORDER BY c.size",
            (tenant, fleet),
        )
        return [CheckpointRow(*row) for row in rows]

    async def checkpoints_around(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow | None, CheckpointRow | None]:
        """The latest checkpoint that does not include leaf ``index`` and the first that does
        (two primary-key lookups, however many checkpoints the log has)."""
        columns = "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
        join = " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id WHERE l.origin = ?"
        before = self._db.read(
            columns + join + " AND c.size <= ? ORDER BY c.size DESC LIMIT 1", (origin, index)
        )
        covering = self._db.read(
            columns + join + " AND c.size > ? ORDER BY c.size LIMIT 1", (origin, index)
        )
        return (
            CheckpointRow(*before[0]) if before else None,
            CheckpointRow(*covering[0]) if covering else None,
        )

    async def log_nodes(
        self, origin: str, ids: set[tuple[int, int]]
    ) -> dict[tuple[int, int], bytes]:
        """The stored nodes among ``ids`` (a proof needs O(log n) of them): one query, the
        wanted ids given as a VALUES list and joined on the primary key."""
        nodes: dict[tuple[int, int], bytes] = {}
        wanted = sorted(ids)
        for start in range(0, len(wanted), 400):  # bounded by SQLite's parameter limit
            chunk = wanted[start : start + 400]
            values = ", ".join("(?, ?)" for _ in chunk)
            rows = self._db.read(
                f"WITH wanted (level, idx) AS (VALUES {values})"
                " SELECT n.level, n.idx, n.hash FROM wanted w"
                " JOIN logs l ON l.origin = ?"
                " JOIN log_nodes n ON n.tenant = l.tenant AND n.log_id = l.id"
                " AND n.level = w.level AND n.idx = w.idx",
                (*(x for pair in chunk for x in pair), origin),
            )
            nodes.update(((level, index), digest) for level, index, digest in rows)
        return nodes

    async def log_origins(self) -> list[str]:
        rows = self._db.read("SELECT origin FROM logs WHERE origin IS NOT NULL ORDER BY id")
        return [origin for (origin,) in rows]

    async def latest_checkpoints(self) -> list[LatestCheckpoint]:
        """The newest checkpoint of every log (its size is the log's), with its receipts."""
        return store_rows.latest_checkpoints(
            self._db.read(store_rows.LATEST_CHECKPOINTS),
            self._db.read(store_rows.LATEST_RECEIPTS),
        )

    async def newest_checkpoint(self, origin: str) -> CheckpointRow | None:
        rows = self._db.read(
            _CHECKPOINT + _JOIN_LOG + " AND c.size = l.size WHERE l.origin = ?",
            (origin,),
        )
        return CheckpointRow(*rows[0]) if rows else None

    async def checkpoint_at(self, origin: str, size: int) -> CheckpointRow | None:
        rows = self._db.read(
            _CHECKPOINT + _JOIN_LOG + " WHERE l.origin = ? AND c.size = ?",
            (origin, size),
        )
        return CheckpointRow(*rows[0]) if rows else None

    async def receipts_below(
        self, origin: str, above: int, below: int | None, names: Sequence[str]
    ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        marks = ", ".join("?" for _ in names)
        upper = 2**63 - 1 if below is None else below
        found = []
        for table, who in (("cosignatures", "witness"), ("timestamps", "authority")):
            rows = self._db.read(
                f"SELECT x.size, x.{who} FROM {table} x"
                " JOIN logs l ON l.tenant = x.tenant AND l.id = x.log_id"
                f" WHERE l.origin = ? AND x.size > ? AND x.size < ? AND x.{who} IN ({marks})"
                " ORDER BY x.size DESC LIMIT ?",
                (origin, above, upper, *names, store_rows.RECEIPT_PAGE),
            )
            found.append([(size, name) for size, name in rows])
        return found[0], found[1]

    async def anchor_logs(self) -> list[AnchorLog]:
        rows = self._db.read(
            _ANCHOR_LOGS,
            (),
        )
        return [AnchorLog.of_row(*row) for row in rows]

    async def anchors(
        self,
        tenant: str | None,
        fleet: str,
        *,
        created_from: str | None = None,
        created_before: str | None = None,
    ) -> list[Anchor]:
        sql, params = _ANCHORS, [tenant_key(tenant), fleet]
        if created_from is not None:
            sql += " AND c.created_at >= ?"
            params.append(created_from)
        if created_before is not None:
            sql += " AND c.created_at < ?"
            params.append(created_before)
        return [Anchor(*row) for row in self._db.read(sql + " ORDER BY c.size", tuple(params))]

    async def latest_anchor(
        self, tenant: str | None, fleet: str, *, created_before: str | None = None
    ) -> Anchor | None:
        sql, params = _ANCHORS, [tenant_key(tenant), fleet]
        if created_before is not None:
            sql += " AND c.created_at < ?"
            params.append(created_before)
        rows = self._db.read(sql + " ORDER BY c.size DESC LIMIT 1", tuple(params))
        return Anchor(*rows[0]) if rows else None

    async def log_of(self, origin: str) -> LogRow | None:
        rows = self._db.read(_LOG_OF, (origin,))
        return LogRow(AnchorLog.of_row(*rows[0][:6]), rows[0][6]) if rows else None

    async def tile_hashes(self, origin: str, level: int, start: int, count: int) -> list[bytes]:
        rows = self._db.read(
            "SELECT n.hash FROM logs l JOIN log_nodes n ON n.tenant = l.tenant"
            " AND n.log_id = l.id AND n.level = ? AND n.idx >= ? AND n.idx < ?"
            " WHERE l.origin = ? ORDER BY n.idx",
            (level, start, start + count, origin),
        )
        return [digest for (digest,) in rows]

    async def log_entries(self, origin: str, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = self._db.read(
            "SELECT r.log_index, r.header FROM logs l JOIN records r ON r.tenant = l.tenant"
            " AND r.log_id = l.id AND r.log_index >= ? AND r.log_index < min(?, l.size)"
            " WHERE l.origin = ?"
            " ORDER BY r.log_index",
            (start, start + count, origin),
        )
        return [(index, bytes(header)) for index, header in rows]

    async def seal_aggregate(self, request: SealRequest) -> SealedBatch | None:
        if not self._db.read(_AGGREGATE_WAITING, (AGGREGATE_FLEET,)):
            return None  # no write transaction for nothing
        return await self._db.writer.submit(
            lambda conn, batch: run_now(seal_aggregate(_SealDriver(conn.execute, conn), request))
        )

    async def aggregate_entries(self, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = self._db.read(
            "SELECT idx, entry FROM aggregate_entries WHERE tenant = ? AND idx >= ? AND idx < ?"
            " ORDER BY idx",
            (NO_TENANT, start, start + count),
        )
        return [(index, bytes(entry)) for index, entry in rows]

    async def aggregated(
        self, origin: str, above: int, below: int | None, newest: bool
    ) -> tuple[CheckpointRow, int] | None:
        rows = self._db.read(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at, a.idx FROM logs l"
            " JOIN aggregate_entries a ON a.tenant = ? AND a.log_tenant = l.tenant"
            " AND a.log_id = l.id AND a.size > ? AND a.idx < ?"
            " JOIN checkpoints c ON c.tenant = l.tenant AND c.log_id = l.id AND c.size = a.size"
            f" WHERE l.origin = ? ORDER BY a.size {'DESC' if newest else 'ASC'} LIMIT 1",
            (NO_TENANT, above, 2**63 - 1 if below is None else below, origin),
        )
        return (CheckpointRow(*rows[0][:5]), rows[0][5]) if rows else None

    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None:
        """The log origin and index of a sealed record, or None while it is pending."""
        rows = self._db.read(
            "SELECT l.origin, r.log_index FROM records r"
            " JOIN logs l ON l.tenant = r.tenant AND l.id = r.log_id"
            " WHERE r.record_id = ? AND r.tenant = ? AND r.log_index < l.size",
            (record_id, tenant),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO cosignatures (tenant, log_id, size, witness, line)"
                " SELECT tenant, id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, witness, line, origin),
            )

        await self._db.writer.submit(job)

    async def note_witness(self, origin: str, witness: str, now: str, note: WitnessNote) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            if note.cosigned_size is not None:
                conn.execute(
                    "INSERT INTO witness_health"
                    " (tenant, log_id, witness, cosigned_size, cosigned_at)"
                    " SELECT tenant, id, ?, ?, ? FROM logs WHERE origin = ?"
                    " ON CONFLICT (tenant, log_id, witness) DO UPDATE SET"
                    " cosigned_size = excluded.cosigned_size, cosigned_at = excluded.cosigned_at,"
                    " failures = 0, code = NULL, reason = NULL, failed_at = NULL",
                    (witness, note.cosigned_size, now, origin),
                )
            else:
                conn.execute(
                    "INSERT INTO witness_health (tenant, log_id, witness, failures, code,"
                    " reason, failed_at) SELECT tenant, id, ?, ?, ?, ?, ? FROM logs"
                    " WHERE origin = ? ON CONFLICT (tenant, log_id, witness) DO UPDATE SET"
                    " failures = excluded.failures,"
                    " code = excluded.code, reason = excluded.reason,"
                    " failed_at = excluded.failed_at",
                    (witness, note.failures, note.code, note.reason, now, origin),
                )

        await self._db.writer.submit(job)

    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO timestamps (tenant, log_id, size, authority, token)"
                " SELECT tenant, id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, authority, token, origin),
            )

        await self._db.writer.submit(job)

    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]:
        rows = self._db.read(
            "SELECT t.authority, t.token FROM timestamps t"
            " JOIN logs l ON l.tenant = t.tenant AND l.id = t.log_id"
            " WHERE l.origin = ? AND t.size = ? ORDER BY t.authority",
            (origin, size),
        )
        return [(authority, token) for authority, token in rows]

    async def recover(self, recovery: Recovery) -> None:
        await self._db.writer.submit(
            lambda conn, batch: sqlite_recovery.apply(
                conn, recovery, _SealDriver(conn.execute, conn)
            )
        )

    async def cosignatures(self, origin: str, size: int) -> list[str]:
        rows = self._db.read(
            "SELECT c.line FROM cosignatures c JOIN logs l ON l.tenant = c.tenant"
            " AND l.id = c.log_id"
            " WHERE l.origin = ? AND c.size = ? ORDER BY c.witness",
            (origin, size),
        )
        return [line for (line,) in rows]


#: A checkpoint's log, joined on the checkpoints' key (the tenant first).
_JOIN_LOG = " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
# The scope's tenant is given as ``tenancy.tenant_key`` of it ('' for no tenant), read back
# as NULL for no tenant.
_ANCHORS = (
    "SELECT nullif(l.tenant, ''), l.fleet, l.origin, c.size, c.root, c.note, c.created_at"
    " FROM checkpoints c" + _JOIN_LOG + " WHERE l.tenant = ? AND l.fleet = ?"
    " AND l.retired_at IS NULL"
)


_ANCHOR_LOGS = (
    "SELECT nullif(tenant, ''), fleet, origin, predecessor, predecessor_size, predecessor_root"
    " FROM logs WHERE origin IS NOT NULL AND retired_at IS NULL AND fleet <> '' ORDER BY id"
)
_CHECKPOINT = "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
#: The tenant checkpoints the aggregate has not taken yet, by log and size.
_AGGREGATE_PENDING = (
    "SELECT l.tenant, l.id, l.origin, c.size, c.root FROM logs l JOIN checkpoints c"
    " ON c.tenant = l.tenant AND c.log_id = l.id AND c.size > l.aggregated_size"
    " WHERE l.fleet <> ? ORDER BY l.id, c.size LIMIT ?"
)
_AGGREGATE_WAITING = (
    "SELECT 1 FROM logs l JOIN checkpoints c ON c.tenant = l.tenant AND c.log_id = l.id"
    " AND c.size > l.aggregated_size WHERE l.fleet <> ? LIMIT 1"
)
_LOG_OF = (
    "SELECT nullif(tenant, ''), fleet, origin, predecessor, predecessor_size,"
    " predecessor_root, size FROM logs WHERE origin = ?"
)


class _SealDriver:
    """A seal's reads (``query``: the reader connection's, or the writer's inside its
    transaction) and, given the writer's connection, its writes (``storage.sealing``)."""

    def __init__(self, query: Callable[..., Any], conn: sqlite3.Connection | None = None) -> None:
        self._query, self._conn = query, conn
        self.found = False  # a named live log was there

    async def live_log(self, tenant: str, fleet: str, origin: str) -> StoredLog | None:
        if self._conn is not None:
            open_log(self._conn, tenant, fleet, origin)
        rows = list(
            self._query(
                "SELECT id, origin, size FROM logs"
                " WHERE tenant = ? AND fleet = ? AND retired_at IS NULL",
                (tenant, fleet),
            )
        )
        if not rows or (self._conn is None and rows[0][1] is None):
            return None
        self.found = True
        return StoredLog(tenant, *rows[0])

    async def name_log(self, log: StoredLog, origin: str) -> None:
        assert self._conn is not None, "a log is named under the write lock"
        self._conn.execute(
            "UPDATE logs SET origin = ? WHERE tenant = ? AND id = ?",
            (origin, log.tenant, log.log_id),
        )

    async def nodes(self, log: StoredLog, ids: list[NodeId]) -> dict[NodeId, bytes]:
        stored = {}
        for level, index in ids:
            for (digest,) in self._query(
                "SELECT hash FROM log_nodes"
                " WHERE tenant = ? AND log_id = ? AND level = ? AND idx = ?",
                (log.tenant, log.log_id, level, index),
            ):
                stored[(level, index)] = digest
        return stored

    async def pending(self, log: StoredLog, first: int, limit: int) -> list[tuple[int, bytes]]:
        return [
            (index, leaf)
            for index, leaf in self._query(
                "SELECT log_index, chain_leaf FROM records"
                " WHERE tenant = ? AND log_id = ? AND log_index >= ? ORDER BY log_index LIMIT ?",
                (log.tenant, log.log_id, first, limit),
            )
        ]

    async def write(self, grown: Grown, now: str) -> None:
        assert self._conn is not None, "a seal is written under the write lock"
        log, growth = grown.log, grown.growth
        self._conn.executemany(
            "INSERT INTO log_nodes (tenant, log_id, level, idx, hash) VALUES (?, ?, ?, ?, ?)",
            [
                (log.tenant, log.log_id, level, index, digest)
                for (level, index), digest in growth.nodes.items()
            ],
        )
        self._conn.execute(
            "UPDATE logs SET size = ?, root = ? WHERE tenant = ? AND id = ?",
            (growth.size, growth.root, log.tenant, log.log_id),
        )
        self._conn.execute(
            "INSERT INTO checkpoints (tenant, log_id, size, root, note, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (log.tenant, log.log_id, growth.size, growth.root, grown.note, now),
        )

    async def pending_checkpoints(self, limit: int) -> list[merkle_aggregate.Pending[LogKey]]:
        return [
            merkle_aggregate.Pending((tenant, log_id), origin, size, root)
            for tenant, log_id, origin, size, root in self._query(
                _AGGREGATE_PENDING, (AGGREGATE_FLEET, limit)
            )
        ]

    async def write_entries(
        self, log: StoredLog, growth: merkle_aggregate.AggregateGrowth[LogKey]
    ) -> None:
        assert self._conn is not None, "a seal is written under the write lock"
        self._conn.executemany(
            "INSERT INTO aggregate_entries (tenant, idx, log_tenant, log_id, size, entry)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (log.tenant, index, tenant, log_id, size, entry)
                for index, (tenant, log_id), size, entry in growth.entries
            ],
        )
        self._conn.executemany(
            "UPDATE logs SET aggregated_size = ? WHERE tenant = ? AND id = ?",
            [(taken, tenant, log_id) for (tenant, log_id), taken in growth.taken.items()],
        )

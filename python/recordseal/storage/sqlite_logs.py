"""The logs part of the SQLite store: sealing, nodes, checkpoints, anchors, receipts."""

from __future__ import annotations

import fcntl
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from recordseal.merkle import aggregate as merkle_aggregate
from recordseal.merkle import log as merkle_log
from recordseal.storage import rows as store_rows
from recordseal.storage import sqlite_recovery
from recordseal.storage.logs import WitnessNote
from recordseal.storage.recovery import Recovery
from recordseal.storage.rows import (
    AGGREGATE_FLEET,
    Anchor,
    AnchorLog,
    CheckpointRow,
    LatestCheckpoint,
    LogRow,
    SealedBatch,
    SealRequest,
)
from recordseal.storage.sqlite_database import SQLiteDatabase
from recordseal.storage.sqlite_writer import Batch


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
            "SELECT l.tenant, l.fleet FROM logs l JOIN log_positions p ON p.log_id = l.id"
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
        planned = _plan(self._db, request)
        if planned is None:
            return await self._db.writer.submit(lambda conn, batch: _seal(conn, request))
        log_id, origin, size, growth = planned
        if growth is None:
            return None
        request.admit(origin, size)
        note = request.sign(growth.size, growth.root)

        def job(conn: sqlite3.Connection, batch: Batch) -> SealedBatch | None:
            (current,) = conn.execute("SELECT size FROM logs WHERE id = ?", (log_id,)).fetchone()
            if current != size:  # another seal of this log committed first: start over
                return _seal(conn, request)
            return _write_seal(conn, request, log_id, growth, note)

        return await self._db.writer.submit(job)

    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]:
        rows = self._db.read(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
            " JOIN logs l ON l.id = c.log_id WHERE l.tenant = ? AND l.fleet = ?"
            " AND l.retired_at IS NULL ORDER BY c.size",
            (tenant, fleet),
        )
        return [CheckpointRow(*row) for row in rows]

    async def checkpoints_around(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow | None, CheckpointRow | None]:
        """The latest checkpoint that does not include leaf ``index`` and the first that does
        (two primary-key lookups, however many checkpoints the log has)."""
        columns = "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
        join = " JOIN logs l ON l.id = c.log_id WHERE l.origin = ?"
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
                " JOIN log_nodes n ON n.log_id = l.id AND n.level = w.level AND n.idx = w.idx",
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
            _CHECKPOINT + " JOIN logs l ON l.id = c.log_id AND c.size = l.size WHERE l.origin = ?",
            (origin,),
        )
        return CheckpointRow(*rows[0]) if rows else None

    async def checkpoint_at(self, origin: str, size: int) -> CheckpointRow | None:
        rows = self._db.read(
            _CHECKPOINT + " JOIN logs l ON l.id = c.log_id WHERE l.origin = ? AND c.size = ?",
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
                f"SELECT x.size, x.{who} FROM {table} x JOIN logs l ON l.id = x.log_id"
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
        sql, params = _ANCHORS, [tenant, fleet]
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
        sql, params = _ANCHORS, [tenant, fleet]
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
            "SELECT n.hash FROM logs l JOIN log_nodes n ON n.log_id = l.id AND n.level = ?"
            " AND n.idx >= ? AND n.idx < ? WHERE l.origin = ? ORDER BY n.idx",
            (level, start, start + count, origin),
        )
        return [digest for (digest,) in rows]

    async def log_entries(self, origin: str, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = self._db.read(
            "SELECT r.log_index, r.header FROM logs l JOIN records r ON r.log_id = l.id"
            " AND r.log_index >= ? AND r.log_index < min(?, l.size) WHERE l.origin = ?"
            " ORDER BY r.log_index",
            (start, start + count, origin),
        )
        return [(index, bytes(header)) for index, header in rows]

    async def seal_aggregate(self, request: SealRequest) -> SealedBatch | None:
        if not self._db.read(_AGGREGATE_WAITING, (AGGREGATE_FLEET,)):
            return None  # no write transaction for nothing
        return await self._db.writer.submit(lambda conn, batch: _seal_aggregate(conn, request))

    async def aggregate_entries(self, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = self._db.read(
            "SELECT idx, entry FROM aggregate_entries WHERE idx >= ? AND idx < ? ORDER BY idx",
            (start, start + count),
        )
        return [(index, bytes(entry)) for index, entry in rows]

    async def aggregated(
        self, origin: str, above: int, below: int | None, newest: bool
    ) -> tuple[CheckpointRow, int] | None:
        rows = self._db.read(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at, a.idx FROM logs l"
            " JOIN aggregate_entries a ON a.log_id = l.id AND a.size > ? AND a.idx < ?"
            " JOIN checkpoints c ON c.log_id = a.log_id AND c.size = a.size WHERE l.origin = ?"
            f" ORDER BY a.size {'DESC' if newest else 'ASC'} LIMIT 1",
            (above, 2**63 - 1 if below is None else below, origin),
        )
        return (CheckpointRow(*rows[0][:5]), rows[0][5]) if rows else None

    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None:
        """The log origin and index of a sealed record, or None while it is pending."""
        rows = self._db.read(
            "SELECT l.origin, r.log_index FROM records r JOIN logs l ON l.id = r.log_id"
            " WHERE r.record_id = ? AND r.tenant = ? AND r.log_index < l.size",
            (record_id, tenant),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO cosignatures (log_id, size, witness, line)"
                " SELECT id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, witness, line, origin),
            )

        await self._db.writer.submit(job)

    async def note_witness(self, origin: str, witness: str, now: str, note: WitnessNote) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            if note.cosigned_size is not None:
                conn.execute(
                    "INSERT INTO witness_health (log_id, witness, cosigned_size, cosigned_at)"
                    " SELECT id, ?, ?, ? FROM logs WHERE origin = ?"
                    " ON CONFLICT (log_id, witness) DO UPDATE SET"
                    " cosigned_size = excluded.cosigned_size, cosigned_at = excluded.cosigned_at,"
                    " failures = 0, code = NULL, reason = NULL, failed_at = NULL",
                    (witness, note.cosigned_size, now, origin),
                )
            else:
                conn.execute(
                    "INSERT INTO witness_health (log_id, witness, failures, code, reason,"
                    " failed_at) SELECT id, ?, ?, ?, ?, ? FROM logs WHERE origin = ?"
                    " ON CONFLICT (log_id, witness) DO UPDATE SET failures = excluded.failures,"
                    " code = excluded.code, reason = excluded.reason,"
                    " failed_at = excluded.failed_at",
                    (witness, note.failures, note.code, note.reason, now, origin),
                )

        await self._db.writer.submit(job)

    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO timestamps (log_id, size, authority, token)"
                " SELECT id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, authority, token, origin),
            )

        await self._db.writer.submit(job)

    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]:
        rows = self._db.read(
            "SELECT t.authority, t.token FROM timestamps t JOIN logs l ON l.id = t.log_id"
            " WHERE l.origin = ? AND t.size = ? ORDER BY t.authority",
            (origin, size),
        )
        return [(authority, token) for authority, token in rows]

    async def recover(self, recovery: Recovery) -> None:
        await self._db.writer.submit(lambda conn, batch: sqlite_recovery.apply(conn, recovery))

    async def cosignatures(self, origin: str, size: int) -> list[str]:
        rows = self._db.read(
            "SELECT c.line FROM cosignatures c JOIN logs l ON l.id = c.log_id"
            " WHERE l.origin = ? AND c.size = ? ORDER BY c.witness",
            (origin, size),
        )
        return [line for (line,) in rows]


# Null-safe scope: ``tenant IS ?`` matches NULL for None (PostgreSQL: IS NOT DISTINCT FROM).
_ANCHORS = (
    "SELECT l.tenant, l.fleet, l.origin, c.size, c.root, c.note, c.created_at"
    " FROM checkpoints c JOIN logs l ON l.id = c.log_id WHERE l.tenant IS ? AND l.fleet = ?"
    " AND l.retired_at IS NULL"
)


_ANCHOR_LOGS = (
    "SELECT tenant, fleet, origin, predecessor, predecessor_size, predecessor_root FROM logs"
    " WHERE origin IS NOT NULL AND retired_at IS NULL AND fleet <> '' ORDER BY id"
)
_CHECKPOINT = "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
#: The tenant checkpoints the aggregate has not taken yet, by log and size.
_AGGREGATE_PENDING = (
    "SELECT l.id, l.origin, c.size, c.root FROM logs l JOIN checkpoints c"
    " ON c.log_id = l.id AND c.size > l.aggregated_size WHERE l.fleet <> ?"
    " ORDER BY l.id, c.size LIMIT ?"
)
_AGGREGATE_WAITING = (
    "SELECT 1 FROM logs l JOIN checkpoints c ON c.log_id = l.id AND c.size > l.aggregated_size"
    " WHERE l.fleet <> ? LIMIT 1"
)
_LOG_OF = (
    "SELECT tenant, fleet, origin, predecessor, predecessor_size, predecessor_root, size"
    " FROM logs WHERE origin = ?"
)


def _seal(conn: sqlite3.Connection, request: SealRequest) -> SealedBatch | None:
    """One seal of ``merkle.log``: read the log, its frontier and the pending leaves, grow,
    write the new nodes, size and checkpoint."""
    conn.execute(
        "INSERT OR IGNORE INTO logs (tenant, fleet, origin, size, root) VALUES (?, ?, ?, 0, ?)",
        (request.tenant, request.fleet, request.origin, b""),
    )
    log_id, origin, size = conn.execute(
        "SELECT id, origin, size FROM logs WHERE tenant IS ? AND fleet = ? AND retired_at IS NULL",
        (request.tenant, request.fleet),
    ).fetchone()
    if origin is None:  # made with the log's first stream, named by its first seal
        conn.execute("UPDATE logs SET origin = ? WHERE id = ?", (request.origin, log_id))
        origin = request.origin
    growth = _grow(conn.execute, log_id, size, request)
    if growth is None:
        return None
    request.admit(origin, size)
    return _write_seal(conn, request, log_id, growth, request.sign(growth.size, growth.root))


def _plan(
    db: SQLiteDatabase, request: SealRequest
) -> tuple[int, str, int, merkle_log.Growth | None] | None:
    """The log's id, origin and sealed size and its growth by the pending leaves, read
    outside the write lock; None for a log without a row or an origin yet."""
    rows = db.read(
        "SELECT id, origin, size FROM logs WHERE tenant IS ? AND fleet = ? AND retired_at IS NULL",
        (request.tenant, request.fleet),
    )
    if not rows or rows[0][1] is None:
        return None
    log_id, origin, size = rows[0]
    return log_id, origin, size, _grow(db.read, log_id, size, request)


def _grow(
    query: Callable[[str, tuple[Any, ...]], Any], log_id: int, size: int, request: SealRequest
) -> merkle_log.Growth | None:
    """Read the log's frontier nodes and pending leaves with ``query``, and grow it."""
    stored = {}
    for level, index in sorted(merkle_log.frontier(size)):
        ((stored[(level, index)],),) = list(
            query(
                "SELECT hash FROM log_nodes WHERE log_id = ? AND level = ? AND idx = ?",
                (log_id, level, index),
            )
        )
    pending = list(
        query(
            "SELECT log_index, chain_leaf FROM records WHERE log_id = ? AND log_index >= ?"
            " ORDER BY log_index LIMIT ?",
            (log_id, merkle_log.first_pending(size), request.limit),
        )
    )
    return merkle_log.grow(size, request.genesis, pending, stored)


def _write_seal(
    conn: sqlite3.Connection,
    request: SealRequest,
    log_id: int,
    growth: merkle_log.Growth,
    note: str,
) -> SealedBatch:
    """Store a seal: the new nodes, the log's size and root, and the signed checkpoint."""
    conn.executemany(
        "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)",
        [(log_id, level, index, digest) for (level, index), digest in growth.nodes.items()],
    )
    conn.execute(
        "UPDATE logs SET size = ?, root = ? WHERE id = ?", (growth.size, growth.root, log_id)
    )
    conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES (?, ?, ?, ?, ?)",
        (log_id, growth.size, growth.root, note, request.now),
    )
    return SealedBatch(request.origin, growth.first_index, growth.size, growth.root, note)


def _seal_aggregate(conn: sqlite3.Connection, request: SealRequest) -> SealedBatch | None:
    """One seal of the aggregate (``merkle.aggregate``): read its row, frontier and the tenant
    checkpoints it lacks, grow, write the entries, nodes, size and checkpoint, and each
    log's progress."""
    conn.execute(
        "INSERT OR IGNORE INTO logs (tenant, fleet, origin, size, root) VALUES (NULL, ?, ?, 0, ?)",
        (AGGREGATE_FLEET, request.origin, b""),
    )
    log_id, origin, size = conn.execute(
        "SELECT id, origin, size FROM logs WHERE tenant IS NULL AND fleet = ?"
        " AND retired_at IS NULL",
        (AGGREGATE_FLEET,),
    ).fetchone()
    pending = [
        merkle_aggregate.Pending(*row)
        for row in conn.execute(_AGGREGATE_PENDING, (AGGREGATE_FLEET, request.limit))
    ]
    stored = {}
    for level, index in sorted(merkle_log.frontier(size)):
        ((stored[(level, index)],),) = conn.execute(
            "SELECT hash FROM log_nodes WHERE log_id = ? AND level = ? AND idx = ?",
            (log_id, level, index),
        ).fetchall()
    growth = merkle_aggregate.grow_aggregate(size, pending, stored)
    if growth is None:
        return None
    request.admit(origin, size)
    note = request.sign(growth.size, growth.root)
    conn.executemany(
        "INSERT INTO aggregate_entries (idx, log_id, size, entry) VALUES (?, ?, ?, ?)",
        growth.entries,
    )
    conn.executemany(
        "UPDATE logs SET aggregated_size = ? WHERE id = ?",
        [(taken, taken_log) for taken_log, taken in growth.taken.items()],
    )
    written = merkle_log.Growth(growth.first_index, growth.size, growth.root, growth.nodes)
    return _write_seal(conn, request, log_id, written, note)

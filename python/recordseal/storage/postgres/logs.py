"""The logs part of the PostgreSQL store: sealing (and who seals), nodes, checkpoints,
anchors, receipts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

import asyncpg

from recordseal.merkle import aggregate as merkle_aggregate
from recordseal.merkle.tree import NodeId
from recordseal.storage import rows as store_rows
from recordseal.storage.logs import WitnessNote
from recordseal.storage.postgres import recovery as postgres_recovery
from recordseal.storage.postgres.database import PostgresDatabase
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
from recordseal.storage.sealing import Grown, LogKey, StoredLog, seal, seal_aggregate
from recordseal.storage.tenancy import NO_TENANT, tenant_key

#: Key of the advisory lock held by the sealing process.
SEALER_LOCK = 0x7365616C6572  # "sealer"

_CHECKPOINT = "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
#: A checkpoint's log, joined on the checkpoints' key (the tenant first).
_JOIN_LOG = " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
# The scope's tenant is given as ``tenancy.tenant_key`` of it ('' for no tenant), read back
# as NULL for no tenant.
_ANCHORS = (
    "SELECT nullif(l.tenant, ''), l.fleet, l.origin, c.size, c.root, c.note, c.created_at"
    " FROM checkpoints c" + _JOIN_LOG + " WHERE l.tenant = $1 AND l.fleet = $2"
    " AND l.retired_at IS NULL"
)

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection


class PostgresLogs:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._leader: asyncpg.Connection | None = None  # holds the sealer lock, or tries to
        self._leading = False
        self._claiming = asyncio.Lock()

    async def claim_sealing(self) -> bool:
        """Hold, or try to take, the session advisory lock of the sealer on a connection kept
        for it (the sealer and the daily transparency job both ask; one at a time)."""
        async with self._claiming:
            if self._leader is not None and self._leading:
                try:
                    await self._leader.execute("SELECT 1")
                    return True
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                    self._leader.terminate()  # the connection died: the lock went with it
                    self._leader = None
            if self._leader is None or self._leader.is_closed():
                leader = await asyncpg.connect(self._db.url)
                try:
                    await self._db.connected(leader)  # a failover is noticed here too
                except BaseException:
                    leader.terminate()
                    raise
                self._leader = leader
            self._leading = bool(
                await self._leader.fetchval("SELECT pg_try_advisory_lock($1)", SEALER_LOCK)
            )
            return self._leading

    async def release(self) -> None:
        """Give the sealer claim up (the store closes)."""
        if self._leader is not None:
            await self._leader.close()  # releases the sealer lock, if held
            self._leader = None
            self._leading = False

    async def unsealed_logs(self) -> list[tuple[str, str]]:
        """The (tenant, fleet) pairs that have records not yet in a sealed batch."""
        rows = await self._db.pool.fetch(
            "SELECT nullif(l.tenant, ''), l.fleet FROM logs l"
            " JOIN log_positions p ON p.tenant = l.tenant AND p.log_id = l.id"
            " WHERE p.next_index > greatest(l.size, 1) AND l.retired_at IS NULL ORDER BY l.id"
        )
        return [(tenant, fleet) for tenant, fleet in rows]

    async def seal(self, request: SealRequest) -> SealedBatch | None:
        """Append the pending chain leaves of one (tenant, fleet) to its log and store the
        signed checkpoint, in one transaction that holds the log's row: two sealers of one
        log take turns, and the second sees the first one's leaves as sealed."""
        async with self._db.pool.acquire() as conn, conn.transaction():
            return await seal(_SealDriver(conn), request)

    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]:
        rows = await self._db.pool.fetch(
            _CHECKPOINT + _JOIN_LOG + " WHERE l.tenant = $1 AND l.fleet = $2"
            " AND l.retired_at IS NULL ORDER BY c.size",
            tenant,
            fleet,
        )
        return [CheckpointRow(*row) for row in rows]

    async def checkpoints_around(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow | None, CheckpointRow | None]:
        """The latest checkpoint that does not include leaf ``index`` and the first that does."""
        join = _JOIN_LOG + " WHERE l.origin = $1"
        before = await self._db.pool.fetchrow(
            _CHECKPOINT + join + " AND c.size <= $2 ORDER BY c.size DESC LIMIT 1", origin, index
        )
        covering = await self._db.pool.fetchrow(
            _CHECKPOINT + join + " AND c.size > $2 ORDER BY c.size LIMIT 1", origin, index
        )
        return (
            CheckpointRow(*before) if before else None,
            CheckpointRow(*covering) if covering else None,
        )

    async def log_nodes(
        self, origin: str, ids: set[tuple[int, int]]
    ) -> dict[tuple[int, int], bytes]:
        wanted = sorted(ids)
        rows = await self._db.pool.fetch(
            "SELECT n.level, n.idx, n.hash FROM log_nodes n"
            " JOIN logs l ON l.tenant = n.tenant AND l.id = n.log_id"
            " JOIN unnest($2::integer[], $3::bigint[]) AS u(level, idx)"
            " ON n.level = u.level AND n.idx = u.idx WHERE l.origin = $1",
            origin,
            [level for level, _ in wanted],
            [index for _, index in wanted],
        )
        return {(level, index): digest for level, index, digest in rows}

    async def log_origins(self) -> list[str]:
        rows = await self._db.pool.fetch(
            "SELECT origin FROM logs WHERE origin IS NOT NULL ORDER BY id"
        )
        return [origin for (origin,) in rows]

    async def latest_checkpoints(self) -> list[LatestCheckpoint]:
        """The newest checkpoint of every log (its size is the log's), with its receipts."""
        return store_rows.latest_checkpoints(
            await self._db.pool.fetch(store_rows.LATEST_CHECKPOINTS),
            await self._db.pool.fetch(store_rows.LATEST_RECEIPTS),
        )

    async def newest_checkpoint(self, origin: str) -> CheckpointRow | None:
        row = await self._db.pool.fetchrow(
            _CHECKPOINT + _JOIN_LOG + " AND c.size = l.size WHERE l.origin = $1",
            origin,
        )
        return CheckpointRow(*row) if row else None

    async def checkpoint_at(self, origin: str, size: int) -> CheckpointRow | None:
        row = await self._db.pool.fetchrow(
            _CHECKPOINT + _JOIN_LOG + " WHERE l.origin = $1 AND c.size = $2",
            origin,
            size,
        )
        return CheckpointRow(*row) if row else None

    async def receipts_below(
        self, origin: str, above: int, below: int | None, names: Sequence[str]
    ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        upper = 2**63 - 1 if below is None else below
        found = []
        for table, who in (("cosignatures", "witness"), ("timestamps", "authority")):
            rows = await self._db.pool.fetch(
                f"SELECT x.size, x.{who} FROM {table} x"
                " JOIN logs l ON l.tenant = x.tenant AND l.id = x.log_id"
                f" WHERE l.origin = $1 AND x.size > $2 AND x.size < $3 AND x.{who} = ANY($4)"
                " ORDER BY x.size DESC LIMIT $5",
                origin,
                above,
                upper,
                list(names),
                store_rows.RECEIPT_PAGE,
            )
            found.append([(size, name) for size, name in rows])
        return found[0], found[1]

    async def anchor_logs(self) -> list[AnchorLog]:
        rows = await self._db.pool.fetch(
            "SELECT nullif(tenant, ''), fleet, origin, predecessor, predecessor_size,"
            " predecessor_root FROM logs WHERE origin IS NOT NULL AND retired_at IS NULL"
            " AND fleet <> ''"
            " ORDER BY id"
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
            params.append(created_from)
            sql += f" AND c.created_at >= ${len(params)}"
        if created_before is not None:
            params.append(created_before)
            sql += f" AND c.created_at < ${len(params)}"
        rows = await self._db.pool.fetch(sql + " ORDER BY c.size", *params)
        return [Anchor(*row) for row in rows]

    async def latest_anchor(
        self, tenant: str | None, fleet: str, *, created_before: str | None = None
    ) -> Anchor | None:
        sql, params = _ANCHORS, [tenant_key(tenant), fleet]
        if created_before is not None:
            params.append(created_before)
            sql += f" AND c.created_at < ${len(params)}"
        row = await self._db.pool.fetchrow(sql + " ORDER BY c.size DESC LIMIT 1", *params)
        return Anchor(*row) if row else None

    async def log_of(self, origin: str) -> LogRow | None:
        row = await self._db.pool.fetchrow(
            "SELECT nullif(tenant, ''), fleet, origin, predecessor, predecessor_size,"
            " predecessor_root, size FROM logs WHERE origin = $1",
            origin,
        )
        return LogRow(AnchorLog.of_row(*row[:6]), row[6]) if row else None

    async def tile_hashes(self, origin: str, level: int, start: int, count: int) -> list[bytes]:
        rows = await self._db.pool.fetch(
            "SELECT n.hash FROM logs l JOIN log_nodes n ON n.tenant = l.tenant"
            " AND n.log_id = l.id AND n.level = $2 AND n.idx >= $3 AND n.idx < $4"
            " WHERE l.origin = $1 ORDER BY n.idx",
            origin,
            level,
            start,
            start + count,
        )
        return [digest for (digest,) in rows]

    async def log_entries(self, origin: str, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = await self._db.pool.fetch(
            "SELECT r.log_index, r.header FROM logs l JOIN records r ON r.tenant = l.tenant"
            " AND r.log_id = l.id AND r.log_index >= $2 AND r.log_index < least($3, l.size)"
            " WHERE l.origin = $1"
            " ORDER BY r.log_index",
            origin,
            start,
            start + count,
        )
        return [(index, bytes(header)) for index, header in rows]

    async def seal_aggregate(self, request: SealRequest) -> SealedBatch | None:
        if await self._db.pool.fetchval(_AGGREGATE_WAITING, AGGREGATE_FLEET) is None:
            return None
        async with self._db.pool.acquire() as conn, conn.transaction():
            return await seal_aggregate(_SealDriver(conn), request)

    async def aggregate_entries(self, start: int, count: int) -> list[tuple[int, bytes]]:
        rows = await self._db.pool.fetch(
            "SELECT idx, entry FROM aggregate_entries WHERE tenant = $1 AND idx >= $2"
            " AND idx < $3 ORDER BY idx",
            NO_TENANT,
            start,
            start + count,
        )
        return [(index, bytes(entry)) for index, entry in rows]

    async def aggregated(
        self, origin: str, above: int, below: int | None, newest: bool
    ) -> tuple[CheckpointRow, int] | None:
        row = await self._db.pool.fetchrow(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at, a.idx FROM logs l"
            " JOIN aggregate_entries a ON a.tenant = $4 AND a.log_tenant = l.tenant"
            " AND a.log_id = l.id AND a.size > $2 AND a.idx < $3"
            " JOIN checkpoints c ON c.tenant = l.tenant AND c.log_id = l.id AND c.size = a.size"
            f" WHERE l.origin = $1 ORDER BY a.size {'DESC' if newest else 'ASC'} LIMIT 1",
            origin,
            above,
            2**63 - 1 if below is None else below,
            NO_TENANT,
        )
        return (CheckpointRow(*row[:5]), row[5]) if row else None

    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None:
        """The log origin and index of a sealed record, or None while it is pending."""
        row = await self._db.pool.fetchrow(
            "SELECT l.origin, r.log_index FROM records r"
            " JOIN logs l ON l.tenant = r.tenant AND l.id = r.log_id"
            " WHERE r.record_id = $1 AND r.tenant = $2 AND r.log_index < l.size",
            record_id,
            tenant,
        )
        return (row[0], row[1]) if row else None

    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None:
        await self._db.pool.execute(
            "INSERT INTO cosignatures (tenant, log_id, size, witness, line)"
            " SELECT tenant, id, $2, $3, $4 FROM logs WHERE origin = $1"
            " ON CONFLICT (tenant, log_id, size, witness) DO UPDATE SET line = excluded.line",
            origin,
            size,
            witness,
            line,
        )

    async def note_witness(self, origin: str, witness: str, now: str, note: WitnessNote) -> None:
        if note.cosigned_size is not None:
            await self._db.pool.execute(
                "INSERT INTO witness_health"
                " (tenant, log_id, witness, cosigned_size, cosigned_at)"
                " SELECT tenant, id, $2, $3, $4 FROM logs WHERE origin = $1"
                " ON CONFLICT (tenant, log_id, witness) DO UPDATE SET"
                " cosigned_size = excluded.cosigned_size, cosigned_at = excluded.cosigned_at,"
                " failures = 0, code = NULL, reason = NULL, failed_at = NULL",
                origin,
                witness,
                note.cosigned_size,
                now,
            )
        else:
            await self._db.pool.execute(
                "INSERT INTO witness_health"
                " (tenant, log_id, witness, failures, code, reason, failed_at)"
                " SELECT tenant, id, $2, $3, $4, $5, $6 FROM logs WHERE origin = $1"
                " ON CONFLICT (tenant, log_id, witness) DO UPDATE SET"
                " failures = excluded.failures,"
                " code = excluded.code, reason = excluded.reason, failed_at = excluded.failed_at",
                origin,
                witness,
                note.failures,
                note.code,
                note.reason,
                now,
            )

    async def recover(self, recovery: Recovery) -> None:
        async with self._db.pool.acquire() as conn, conn.transaction():
            await postgres_recovery.apply(conn, recovery, _SealDriver(conn))

    async def cosignatures(self, origin: str, size: int) -> list[str]:
        rows = await self._db.pool.fetch(
            "SELECT c.line FROM cosignatures c"
            + _JOIN_LOG
            + " WHERE l.origin = $1 AND c.size = $2 ORDER BY c.witness",
            origin,
            size,
        )
        return [line for (line,) in rows]

    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None:
        await self._db.pool.execute(
            "INSERT INTO timestamps (tenant, log_id, size, authority, token)"
            " SELECT tenant, id, $2, $3, $4 FROM logs WHERE origin = $1"
            " ON CONFLICT (tenant, log_id, size, authority) DO UPDATE SET token = excluded.token",
            origin,
            size,
            authority,
            token,
        )

    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]:
        rows = await self._db.pool.fetch(
            "SELECT t.authority, t.token FROM timestamps t"
            " JOIN logs l ON l.tenant = t.tenant AND l.id = t.log_id"
            " WHERE l.origin = $1 AND t.size = $2 ORDER BY t.authority",
            origin,
            size,
        )
        return [(authority, token) for authority, token in rows]


#: The tenant checkpoints the aggregate has not taken yet, by log and size.
_AGGREGATE_PENDING = (
    "SELECT l.tenant, l.id, l.origin, c.size, c.root FROM logs l JOIN checkpoints c"
    " ON c.tenant = l.tenant AND c.log_id = l.id AND c.size > l.aggregated_size"
    " WHERE l.fleet <> $1 ORDER BY l.id, c.size LIMIT $2"
)
_AGGREGATE_WAITING = (
    "SELECT 1 FROM logs l JOIN checkpoints c ON c.tenant = l.tenant AND c.log_id = l.id"
    " AND c.size > l.aggregated_size WHERE l.fleet <> $1 LIMIT 1"
)


#: A seal's lock of its log's row. NO KEY: seals exclude each other, but the foreign-key
#: checks of the records written to the log meanwhile (``FOR KEY SHARE`` of this row) do not
#: wait for the seal (docs/records.md, "Sealing").
LOCK_LOG = (
    "SELECT id, origin, size FROM logs WHERE tenant = $1 AND fleet = $2 AND retired_at IS NULL"
    " FOR NO KEY UPDATE"
)


class _SealDriver:
    """A seal's reads and writes in its transaction (``storage.sealing``)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def live_log(self, tenant: str, fleet: str, origin: str) -> StoredLog | None:
        await self._conn.execute(
            "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ($1, $2, $3, 0, '')"
            " ON CONFLICT DO NOTHING",  # the log exists (logs_scope or the origin is taken)
            tenant,
            fleet,
            origin,
        )
        row = await self._conn.fetchrow(LOCK_LOG, tenant, fleet)
        assert row is not None  # inserted above, or by another sealer or a stream before
        return StoredLog(tenant, *row)

    async def name_log(self, log: StoredLog, origin: str) -> None:
        await self._conn.execute(
            "UPDATE logs SET origin = $1 WHERE tenant = $2 AND id = $3",
            origin,
            log.tenant,
            log.log_id,
        )

    async def nodes(self, log: StoredLog, ids: list[NodeId]) -> dict[NodeId, bytes]:
        rows = await self._conn.fetch(
            "SELECT n.level, n.idx, n.hash FROM log_nodes n"
            " JOIN unnest($3::integer[], $4::bigint[]) AS u(level, idx)"
            " ON n.level = u.level AND n.idx = u.idx WHERE n.tenant = $1 AND n.log_id = $2",
            log.tenant,
            log.log_id,
            [level for level, _ in ids],
            [index for _, index in ids],
        )
        return {(level, idx): digest for level, idx, digest in rows}

    async def pending(self, log: StoredLog, first: int, limit: int) -> list[tuple[int, bytes]]:
        rows = await self._conn.fetch(
            "SELECT log_index, chain_leaf FROM records"
            " WHERE tenant = $1 AND log_id = $2 AND log_index >= $3 ORDER BY log_index LIMIT $4",
            log.tenant,
            log.log_id,
            first,
            limit,
        )
        return [(index, leaf) for index, leaf in rows]

    async def write(self, grown: Grown, now: str) -> None:
        log, growth = grown.log, grown.growth
        ids = sorted(growth.nodes)
        await self._conn.execute(
            "INSERT INTO log_nodes (tenant, log_id, level, idx, hash)"
            " SELECT $1, $2, * FROM unnest($3::integer[], $4::bigint[], $5::bytea[])",
            log.tenant,
            log.log_id,
            [level for level, _ in ids],
            [index for _, index in ids],
            [growth.nodes[i] for i in ids],
        )
        await self._conn.execute(
            "UPDATE logs SET size = $1, root = $2 WHERE tenant = $3 AND id = $4",
            growth.size,
            growth.root,
            log.tenant,
            log.log_id,
        )
        await self._conn.execute(
            "INSERT INTO checkpoints (tenant, log_id, size, root, note, created_at)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            log.tenant,
            log.log_id,
            growth.size,
            growth.root,
            grown.note,
            now,
        )

    async def pending_checkpoints(self, limit: int) -> list[merkle_aggregate.Pending[LogKey]]:
        return [
            merkle_aggregate.Pending((tenant, log_id), origin, size, root)
            for tenant, log_id, origin, size, root in await self._conn.fetch(
                _AGGREGATE_PENDING, AGGREGATE_FLEET, limit
            )
        ]

    async def write_entries(
        self, log: StoredLog, growth: merkle_aggregate.AggregateGrowth[LogKey]
    ) -> None:
        await self._conn.execute(
            "INSERT INTO aggregate_entries (tenant, idx, log_tenant, log_id, size, entry)"
            " SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::bigint[],"
            " $6::bytea[])",
            log.tenant,
            [index for index, _, _, _ in growth.entries],
            [tenant for _, (tenant, _), _, _ in growth.entries],
            [log_id for _, (_, log_id), _, _ in growth.entries],
            [size for _, _, size, _ in growth.entries],
            [entry for _, _, _, entry in growth.entries],
        )
        taken = list(growth.taken.items())
        await self._conn.execute(
            "UPDATE logs SET aggregated_size = u.size"
            " FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(tenant, id, size)"
            " WHERE logs.tenant = u.tenant AND logs.id = u.id",
            [tenant for (tenant, _), _ in taken],
            [log_id for (_, log_id), _ in taken],
            [size for _, size in taken],
        )

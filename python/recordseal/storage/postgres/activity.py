"""The activity part of the PostgreSQL store (``storage/activity.py``): the live view's rows,
read on one connection in one repeatable-read transaction (one snapshot per page)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from recordseal.clock import minute_start
from recordseal.storage.activity import (
    TWO_ROOTS,
    WALK_CHUNK,
    LogActivity,
    StreamActivity,
    TenantActivity,
    TenantSummary,
    WitnessActivity,
    walk_back,
)
from recordseal.storage.postgres.database import PostgresDatabase

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection


class PostgresActivity:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def tenant_activity(self, tenant: str, since_minute: int) -> TenantActivity:
        async with (
            self._db.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            streams = [
                StreamActivity(
                    r["name"],
                    r["fleet"],
                    r["next_seq"] - 1 - r["lost_seqs"],
                    r["next_seq"] - 1,
                    r["last_ingest_at"],
                )
                for r in await conn.fetch(
                    "SELECT name, fleet, next_seq, lost_seqs, last_ingest_at FROM streams"
                    ' WHERE tenant = $1 ORDER BY name COLLATE "C"',
                    tenant,
                )
            ]
            logs = [
                await _log(conn, row, since_minute)
                for row in await conn.fetch(
                    "SELECT l.tenant, l.id, l.origin, l.fleet, l.size,"
                    " coalesce(p.next_index, greatest(l.size, 1)) AS next_index"
                    " FROM logs l LEFT JOIN log_positions p ON p.tenant = l.tenant"
                    " AND p.log_id = l.id"
                    ' WHERE l.tenant = $1 AND l.retired_at IS NULL ORDER BY l.fleet COLLATE "C"',
                    tenant,
                )
            ]
            erasures = await conn.fetchrow(
                "SELECT count(*) AS n, max(erased_at) AS last FROM subjects"
                " WHERE tenant = $1 AND erased_at IS NOT NULL",
                tenant,
            )
            tokens = await conn.fetchrow(
                "SELECT count(*) FILTER (WHERE revoked_at IS NULL) AS n,"
                " max(last_used_at) AS last FROM tokens WHERE tenant = $1",
                tenant,
            )
        assert erasures is not None and tokens is not None  # aggregates answer one row
        return TenantActivity(
            tenant,
            since_minute,
            streams,
            logs,
            erasures["n"],
            erasures["last"],
            tokens["n"],
            tokens["last"],
        )

    async def service_activity(self, since_minute: int) -> list[TenantSummary]:
        rows = await self._db.pool.fetch(
            "SELECT t.id, t.display_name, t.active,"
            " (SELECT count(*) FROM streams s WHERE s.tenant = t.id),"
            " (SELECT coalesce(sum(s.next_seq - 1 - s.lost_seqs), 0) FROM streams s"
            "   WHERE s.tenant = t.id),"
            " (SELECT max(s.last_ingest_at) FROM streams s WHERE s.tenant = t.id),"
            " (SELECT coalesce(sum(greatest(0, coalesce(p.next_index, 1) - greatest(l.size, 1))),"
            "   0) FROM logs l LEFT JOIN log_positions p ON p.tenant = l.tenant AND p.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL),"
            " (SELECT coalesce(sum(m.records), 0) FROM logs l JOIN ingest_minutes m"
            "   ON m.tenant = l.tenant AND m.log_id = l.id AND m.minute >= $1"
            " WHERE l.tenant = t.id),"
            " (SELECT count(*) FROM logs l JOIN witness_health w ON w.tenant = l.tenant"
            " AND w.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL AND w.code IS NOT NULL),"
            " (SELECT count(*) FROM logs l JOIN witness_health w ON w.tenant = l.tenant"
            " AND w.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL AND w.reason = $2)"
            ' FROM tenants t ORDER BY t.id COLLATE "C"',
            since_minute,
            TWO_ROOTS,
        )
        return [
            TenantSummary(r[0], r[1], r[2], r[3], int(r[4]), r[5], int(r[6]), int(r[7]), r[8], r[9])
            for r in rows
        ]


async def _log(conn: Connection, row: Any, since: int) -> LogActivity:
    tenant, log_id = row["tenant"], row["id"]
    size, next_index = row["size"], row["next_index"]
    start = minute_start(since)
    latest = await conn.fetchrow(
        "SELECT size, created_at FROM checkpoints WHERE tenant = $1 AND log_id = $2"
        " ORDER BY size DESC LIMIT 1",
        tenant,
        log_id,
    )
    before = await conn.fetchval(
        "SELECT size FROM checkpoints WHERE tenant = $1 AND log_id = $2 AND created_at < $3"
        " ORDER BY created_at DESC LIMIT 1",
        tenant,
        log_id,
        start,
    )
    checkpoints = await conn.fetch(
        "SELECT created_at, size FROM checkpoints"
        " WHERE tenant = $1 AND log_id = $2 AND created_at >= $3 ORDER BY created_at",
        tenant,
        log_id,
        start,
    )
    minutes = await conn.fetch(
        "SELECT minute, records FROM ingest_minutes"
        " WHERE tenant = $1 AND log_id = $2 AND minute >= $3 ORDER BY minute",
        tenant,
        log_id,
        since,
    )
    witnesses = [
        WitnessActivity(*w)
        for w in await conn.fetch(
            "SELECT witness, cosigned_size, cosigned_at, failures::int, code, reason, failed_at"
            ' FROM witness_health WHERE tenant = $1 AND log_id = $2 ORDER BY witness COLLATE "C"',
            tenant,
            log_id,
        )
    ]
    oldest = None
    remaining = max(0, next_index - max(size, 1))
    before_minute = 2**62
    while remaining > 0:
        chunk = [
            (m, n)
            for m, n in await conn.fetch(
                "SELECT minute, records FROM ingest_minutes"
                " WHERE tenant = $1 AND log_id = $2 AND minute < $3"
                " ORDER BY minute DESC LIMIT $4",
                tenant,
                log_id,
                before_minute,
                WALK_CHUNK,
            )
        ]
        oldest, remaining = walk_back(chunk, remaining)
        if oldest is not None or len(chunk) < WALK_CHUNK:
            break
        before_minute = chunk[-1][0]
    return LogActivity(
        row["origin"],
        row["fleet"],
        size,
        next_index,
        latest["size"] if latest else None,
        latest["created_at"] if latest else None,
        oldest,
        [(m, n) for m, n in minutes],
        [(at, s) for at, s in checkpoints],
        before or 0,
        witnesses,
    )

"""The activity part of the SQLite store (``storage/activity.py``): the live view's rows."""

from __future__ import annotations

from recordseal.clock import minute_start
from recordseal.storage.activity import (
    WALK_CHUNK,
    LogActivity,
    StreamActivity,
    TenantActivity,
    TenantSummary,
    WitnessActivity,
    walk_back,
)
from recordseal.storage.sqlite.database import SQLiteDatabase


class SQLiteActivity:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    async def tenant_activity(self, tenant: str, since_minute: int) -> TenantActivity:
        read = self._db.read
        streams = [
            StreamActivity(name, fleet, next_seq - 1 - lost, next_seq - 1, last)
            for name, fleet, next_seq, lost, last in read(
                "SELECT name, fleet, next_seq, lost_seqs, last_ingest_at FROM streams"
                " WHERE tenant = ? ORDER BY name",
                (tenant,),
            )
        ]
        logs = [
            self._log(tenant, row, since_minute)
            for row in read(
                "SELECT l.id, l.origin, l.fleet, l.size, ifnull(p.next_index, max(l.size, 1))"
                " FROM logs l LEFT JOIN log_positions p ON p.tenant = l.tenant AND p.log_id = l.id"
                " WHERE l.tenant = ? AND l.retired_at IS NULL ORDER BY l.fleet",
                (tenant,),
            )
        ]
        ((erasures, last_erasure),) = read(
            "SELECT count(*), max(erased_at) FROM subjects"
            " WHERE tenant = ? AND erased_at IS NOT NULL",
            (tenant,),
        )
        ((tokens, last_used),) = read(
            "SELECT count(*) FILTER (WHERE revoked_at IS NULL), max(last_used_at) FROM tokens"
            " WHERE tenant = ?",
            (tenant,),
        )
        return TenantActivity(
            tenant, since_minute, streams, logs, erasures, last_erasure, tokens, last_used
        )

    def _log(
        self, tenant: str, row: tuple[int, str | None, str, int, int], since: int
    ) -> LogActivity:
        log_id, origin, fleet, size, next_index = row
        read = self._db.read
        latest = read(
            "SELECT size, created_at FROM checkpoints WHERE tenant = ? AND log_id = ?"
            " ORDER BY size DESC LIMIT 1",
            (tenant, log_id),
        )
        start = minute_start(since)
        before = read(
            "SELECT size FROM checkpoints WHERE tenant = ? AND log_id = ? AND created_at < ?"
            " ORDER BY created_at DESC LIMIT 1",
            (tenant, log_id, start),
        )
        checkpoints = read(
            "SELECT created_at, size FROM checkpoints WHERE tenant = ? AND log_id = ?"
            " AND created_at >= ?"
            " ORDER BY created_at",
            (tenant, log_id, start),
        )
        minutes = read(
            "SELECT minute, records FROM ingest_minutes WHERE tenant = ? AND log_id = ?"
            " AND minute >= ?"
            " ORDER BY minute",
            (tenant, log_id, since),
        )
        witnesses = [
            WitnessActivity(*w)
            for w in read(
                "SELECT witness, cosigned_size, cosigned_at, failures, code, reason, failed_at"
                " FROM witness_health WHERE tenant = ? AND log_id = ? ORDER BY witness",
                (tenant, log_id),
            )
        ]
        oldest = None
        remaining = max(0, next_index - max(size, 1))
        before_minute: int | None = None
        while remaining > 0:
            chunk = read(
                "SELECT minute, records FROM ingest_minutes WHERE tenant = ? AND log_id = ?"
                " AND minute < ?"
                " ORDER BY minute DESC LIMIT ?",
                (tenant, log_id, before_minute if before_minute is not None else 2**62, WALK_CHUNK),
            )
            oldest, remaining = walk_back(chunk, remaining)
            if oldest is not None or len(chunk) < WALK_CHUNK:
                break
            before_minute = chunk[-1][0]
        return LogActivity(
            origin,
            fleet,
            size,
            next_index,
            latest[0][0] if latest else None,
            latest[0][1] if latest else None,
            oldest,
            [(m, n) for m, n in minutes],
            [(at, s) for at, s in checkpoints],
            before[0][0] if before else 0,
            witnesses,
        )

    async def service_activity(self, since_minute: int) -> list[TenantSummary]:
        rows = self._db.read(
            "SELECT t.id, t.display_name, t.active,"
            " (SELECT count(*) FROM streams s WHERE s.tenant = t.id),"
            " (SELECT ifnull(sum(s.next_seq - 1 - s.lost_seqs), 0) FROM streams s"
            "   WHERE s.tenant = t.id),"
            " (SELECT max(s.last_ingest_at) FROM streams s WHERE s.tenant = t.id),"
            " (SELECT ifnull(sum(max(0, ifnull(p.next_index, 1) - max(l.size, 1))), 0)"
            "   FROM logs l LEFT JOIN log_positions p ON p.tenant = l.tenant AND p.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL),"
            " (SELECT ifnull(sum(m.records), 0) FROM logs l JOIN ingest_minutes m"
            "   ON m.tenant = l.tenant AND m.log_id = l.id AND m.minute >= ?"
            " WHERE l.tenant = t.id),"
            " (SELECT count(*) FROM logs l JOIN witness_health w ON w.tenant = l.tenant"
            " AND w.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL AND w.code IS NOT NULL),"
            " (SELECT count(*) FROM logs l JOIN witness_health w ON w.tenant = l.tenant"
            " AND w.log_id = l.id"
            "   WHERE l.tenant = t.id AND l.retired_at IS NULL AND w.reason = 'witness.two_roots')"
            " FROM tenants t ORDER BY t.id",
            (since_minute,),
        )
        return [TenantSummary(t, name, bool(active), *rest) for t, name, active, *rest in rows]

"""``recordseal recover`` on PostgreSQL: one transaction (``storage.recovery``), as SQLite's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recordseal.core import leaf_hash
from recordseal.storage.recovery import (
    AggregateRestore,
    GapRecord,
    Recovery,
    RecoveryConflict,
    Succession,
)
from recordseal.storage.rows import AGGREGATE_FLEET

if TYPE_CHECKING:
    from recordseal.storage.postgres_schema import Connection


async def apply(conn: Connection, recovery: Recovery) -> None:
    if recovery.aggregate is not None:
        await _restore_aggregate(conn, recovery.aggregate, recovery.now)
    for succession in recovery.successions:
        await _succeed(conn, succession, recovery.now)
    for gap in recovery.gaps:
        await _declare(conn, gap)


async def _succeed(conn: Connection, s: Succession, now: str) -> None:
    old = await conn.fetchrow(
        "SELECT id, size FROM logs WHERE tenant IS NOT DISTINCT FROM $1::text AND fleet = $2"
        " AND retired_at IS NULL FOR UPDATE",
        s.tenant,
        s.fleet,
    )
    if old is not None:
        await conn.execute("UPDATE logs SET retired_at = $1 WHERE id = $2", now, old["id"])
    root = leaf_hash(s.leaf)
    new_id = await conn.fetchval(
        "INSERT INTO logs (tenant, fleet, origin, size, root, predecessor, predecessor_size,"
        " predecessor_root) VALUES ($1, $2, $3, 1, $4, $5, $6, $7) RETURNING id",
        s.tenant,
        s.fleet,
        s.origin,
        root,
        s.predecessor,
        s.size,
        s.root,
    )
    await conn.execute(
        "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES ($1, 0, 0, $2)", new_id, root
    )
    await conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES ($1, 1, $2, $3, $4)",
        new_id,
        root,
        s.note,
        now,
    )
    moved = 0
    if old is not None:
        first = max(old["size"], 1)  # the predecessor's first position it never sealed
        status = await conn.execute(
            "UPDATE records SET log_id = $1, log_index = log_index - $2 + 1"
            " WHERE log_id = $3 AND log_index >= $2",
            new_id,
            first,
            old["id"],
        )
        moved = int(status.split()[-1])
        await conn.execute("UPDATE streams SET log_id = $1 WHERE log_id = $2", new_id, old["id"])
    await conn.execute(
        "INSERT INTO log_positions (log_id, next_index) VALUES ($1, $2)", new_id, 1 + moved
    )


async def _declare(conn: Connection, gap: GapRecord) -> None:
    row = await conn.fetchrow(
        "SELECT id, log_id, next_seq, head FROM streams WHERE tenant = $1 AND name = $2 FOR UPDATE",
        gap.tenant,
        gap.stream,
    )
    if row is None or row["next_seq"] != gap.from_seq or bytes(row["head"]) != gap.prev:
        raise RecoveryConflict(f"stream {gap.tenant}/{gap.stream} changed since the plan")
    await conn.execute(  # a log the sealer opened first has no counter yet
        "INSERT INTO log_positions (log_id, next_index)"
        " SELECT id, greatest(size, 1) FROM logs WHERE id = $1 ON CONFLICT DO NOTHING",
        row["log_id"],
    )
    position = await conn.fetchval(
        "UPDATE log_positions SET next_index = next_index + 1 WHERE log_id = $1"
        " RETURNING next_index - 1",
        row["log_id"],
    )
    await conn.execute(
        "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header, signature,"
        " chain_leaf, log_id, log_index) VALUES ($1, $2, $3, $4, '', $5, $6, $7, $8, $9)",
        gap.record_id,
        gap.tenant,
        row["id"],
        gap.seq,
        gap.header,
        gap.signature,
        gap.chain_leaf,
        row["log_id"],
        position,
    )
    await conn.execute(  # from_seq..seq-1 are lost: the stream's record count stays true
        "UPDATE streams SET next_seq = $1, head = $2, lost_seqs = lost_seqs + $3 WHERE id = $4",
        gap.seq + 1,
        gap.chain_leaf,
        gap.seq - gap.from_seq,
        row["id"],
    )


async def _restore_aggregate(conn: Connection, a: AggregateRestore, now: str) -> None:
    await conn.execute(
        "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES (NULL, $1, $2, 0, '')"
        " ON CONFLICT DO NOTHING",
        AGGREGATE_FLEET,
        a.origin,
    )
    row = await conn.fetchrow(
        "SELECT id, origin, size FROM logs WHERE tenant IS NULL AND fleet = $1"
        " AND retired_at IS NULL FOR UPDATE",
        AGGREGATE_FLEET,
    )
    if row is None or row["origin"] != a.origin or row["size"] >= a.size:
        raise RecoveryConflict(f"the aggregate log {a.origin} changed since the plan")
    log_id = row["id"]
    for (level, index), digest in sorted(a.nodes.items()):
        found = await conn.fetchval(
            "SELECT hash FROM log_nodes WHERE log_id = $1 AND level = $2 AND idx = $3",
            log_id,
            level,
            index,
        )
        if found is not None and bytes(found) != digest:
            raise RecoveryConflict(f"the aggregate log {a.origin} holds another history")
        if found is None:
            await conn.execute(
                "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES ($1, $2, $3, $4)",
                log_id,
                level,
                index,
                digest,
            )
    await conn.execute("UPDATE logs SET size = $1, root = $2 WHERE id = $3", a.size, a.root, log_id)
    await conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at)"
        " VALUES ($1, $2, $3, $4, $5)",
        log_id,
        a.size,
        a.root,
        a.note,
        now,
    )

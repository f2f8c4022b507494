"""``recordseal recover`` on PostgreSQL: one transaction (``storage.recovery``), as SQLite's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recordseal.core import leaf_hash
from recordseal.storage.recovery import (
    GapRecord,
    Recovery,
    RecoveryConflict,
    Succession,
    restore_aggregate,
)
from recordseal.storage.sealing import SealDriver
from recordseal.storage.tenancy import tenant_key

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection


async def apply(conn: Connection, recovery: Recovery, driver: SealDriver) -> None:
    """``driver``: the seal's, over ``conn`` (the aggregate is taken up as a seal writes)."""
    if recovery.aggregate is not None:
        await restore_aggregate(driver, recovery.aggregate, recovery.now)
    for succession in recovery.successions:
        await _succeed(conn, succession, recovery.now)
    for gap in recovery.gaps:
        await _declare(conn, gap)


async def _succeed(conn: Connection, s: Succession, now: str) -> None:
    tenant = tenant_key(s.tenant)
    old = await conn.fetchrow(
        "SELECT id, size FROM logs WHERE tenant = $1 AND fleet = $2"
        " AND retired_at IS NULL FOR UPDATE",
        tenant,
        s.fleet,
    )
    if old is not None:
        await conn.execute(
            "UPDATE logs SET retired_at = $1 WHERE tenant = $2 AND id = $3",
            now,
            tenant,
            old["id"],
        )
    root = leaf_hash(s.leaf)
    new_id = await conn.fetchval(
        "INSERT INTO logs (tenant, fleet, origin, size, root, predecessor, predecessor_size,"
        " predecessor_root) VALUES ($1, $2, $3, 1, $4, $5, $6, $7) RETURNING id",
        tenant,
        s.fleet,
        s.origin,
        root,
        s.predecessor,
        s.size,
        s.root,
    )
    await conn.execute(
        "INSERT INTO log_nodes (tenant, log_id, level, idx, hash) VALUES ($3, $1, 0, 0, $2)",
        new_id,
        root,
        tenant,
    )
    await conn.execute(
        "INSERT INTO checkpoints (tenant, log_id, size, root, note, created_at)"
        " VALUES ($5, $1, 1, $2, $3, $4)",
        new_id,
        root,
        s.note,
        now,
        tenant,
    )
    moved = 0
    if old is not None:
        first = s.first_moved(old["size"])  # its first position not sealed for good
        status = await conn.execute(
            "UPDATE records SET log_id = $1, log_index = log_index - $2 + 1"
            " WHERE tenant = $4 AND log_id = $3 AND log_index >= $2",
            new_id,
            first,
            old["id"],
            tenant,
        )
        moved = int(status.split()[-1])
        await conn.execute(
            "UPDATE streams SET log_id = $1 WHERE tenant = $2 AND log_id = $3",
            new_id,
            tenant,
            old["id"],
        )
    await conn.execute(
        "INSERT INTO log_positions (tenant, log_id, next_index) VALUES ($1, $2, $3)",
        tenant,
        new_id,
        1 + moved,
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
        "INSERT INTO log_positions (tenant, log_id, next_index)"
        " SELECT tenant, id, greatest(size, 1) FROM logs WHERE tenant = $1 AND id = $2"
        " ON CONFLICT DO NOTHING",
        gap.tenant,
        row["log_id"],
    )
    position = await conn.fetchval(
        "UPDATE log_positions SET next_index = next_index + 1 WHERE tenant = $1 AND log_id = $2"
        " RETURNING next_index - 1",
        gap.tenant,
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
        "UPDATE streams SET next_seq = $1, head = $2, lost_seqs = lost_seqs + $3"
        " WHERE tenant = $4 AND id = $5",
        gap.seq + 1,
        gap.chain_leaf,
        gap.seq - gap.from_seq,
        gap.tenant,
        row["id"],
    )

"""``recordseal recover`` on SQLite: one transaction (``storage.recovery``)."""

from __future__ import annotations

import sqlite3

from recordseal.core import leaf_hash
from recordseal.storage.recovery import (
    GapRecord,
    Recovery,
    RecoveryConflict,
    Succession,
    restore_aggregate,
)
from recordseal.storage.sealing import SealDriver, run_now
from recordseal.storage.sqlite.database import next_id
from recordseal.storage.tenancy import tenant_key


def apply(conn: sqlite3.Connection, recovery: Recovery, driver: SealDriver) -> None:
    """``driver``: the seal's, over ``conn`` (the aggregate is taken up as a seal writes)."""
    if recovery.aggregate is not None:
        run_now(restore_aggregate(driver, recovery.aggregate, recovery.now))
    for succession in recovery.successions:
        _succeed(conn, succession, recovery.now)
    for gap in recovery.gaps:
        _declare(conn, gap)


def _succeed(conn: sqlite3.Connection, s: Succession, now: str) -> None:
    tenant = tenant_key(s.tenant)
    old = conn.execute(
        "SELECT id, size FROM logs WHERE tenant = ? AND fleet = ? AND retired_at IS NULL",
        (tenant, s.fleet),
    ).fetchone()
    if old is not None:
        conn.execute(
            "UPDATE logs SET retired_at = ? WHERE tenant = ? AND id = ?", (now, tenant, old[0])
        )
    root = leaf_hash(s.leaf)
    new_id = next_id(conn, "logs")
    conn.execute(
        "INSERT INTO logs (id, tenant, fleet, origin, size, root, predecessor,"
        " predecessor_size, predecessor_root) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)",
        (new_id, tenant, s.fleet, s.origin, root, s.predecessor, s.size, s.root),
    )
    conn.execute(
        "INSERT INTO log_nodes (tenant, log_id, level, idx, hash) VALUES (?, ?, 0, 0, ?)",
        (tenant, new_id, root),
    )
    conn.execute(
        "INSERT INTO checkpoints (tenant, log_id, size, root, note, created_at)"
        " VALUES (?, ?, 1, ?, ?, ?)",
        (tenant, new_id, root, s.note, now),
    )
    moved = 0
    if old is not None:
        old_id, old_size = old
        first = s.first_moved(old_size)  # its first position not sealed for good
        moved = conn.execute(
            "UPDATE records SET log_id = ?, log_index = log_index - ? + 1"
            " WHERE tenant = ? AND log_id = ? AND log_index >= ?",
            (new_id, first, tenant, old_id, first),
        ).rowcount
        conn.execute(
            "UPDATE streams SET log_id = ? WHERE tenant = ? AND log_id = ?",
            (new_id, tenant, old_id),
        )
    conn.execute(
        "INSERT INTO log_positions (tenant, log_id, next_index) VALUES (?, ?, ?)",
        (tenant, new_id, 1 + moved),
    )


def _declare(conn: sqlite3.Connection, gap: GapRecord) -> None:
    row = conn.execute(
        "SELECT id, log_id, next_seq, head FROM streams WHERE tenant = ? AND name = ?",
        (gap.tenant, gap.stream),
    ).fetchone()
    if row is None or row[2] != gap.from_seq or row[3] != gap.prev:
        raise RecoveryConflict(f"stream {gap.tenant}/{gap.stream} changed since the plan")
    stream_id, log_id = row[0], row[1]
    conn.execute(  # a log the sealer opened first has no counter yet
        "INSERT OR IGNORE INTO log_positions (tenant, log_id, next_index)"
        " SELECT tenant, id, max(size, 1) FROM logs WHERE tenant = ? AND id = ?",
        (gap.tenant, log_id),
    )
    (position,) = conn.execute(
        "UPDATE log_positions SET next_index = next_index + 1 WHERE tenant = ? AND log_id = ?"
        " RETURNING next_index - 1",
        (gap.tenant, log_id),
    ).fetchone()
    conn.execute(
        "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header, signature,"
        " chain_leaf, log_id, log_index) VALUES (?, ?, ?, ?, '', ?, ?, ?, ?, ?)",
        (
            gap.record_id,
            gap.tenant,
            stream_id,
            gap.seq,
            gap.header,
            gap.signature,
            gap.chain_leaf,
            log_id,
            position,
        ),
    )
    conn.execute(  # from_seq..seq-1 are lost: the stream's record count stays true
        "UPDATE streams SET next_seq = ?, head = ?, lost_seqs = lost_seqs + ?"
        " WHERE tenant = ? AND id = ?",
        (gap.seq + 1, gap.chain_leaf, gap.seq - gap.from_seq, gap.tenant, stream_id),
    )

"""``recordseal recover`` on SQLite: one transaction (``storage.recovery``)."""

from __future__ import annotations

import sqlite3

from recordseal.core import leaf_hash
from recordseal.storage.recovery import (
    AggregateRestore,
    GapRecord,
    Recovery,
    RecoveryConflict,
    Succession,
)
from recordseal.storage.rows import AGGREGATE_FLEET


def apply(conn: sqlite3.Connection, recovery: Recovery) -> None:
    if recovery.aggregate is not None:
        _restore_aggregate(conn, recovery.aggregate, recovery.now)
    for succession in recovery.successions:
        _succeed(conn, succession, recovery.now)
    for gap in recovery.gaps:
        _declare(conn, gap)


def _succeed(conn: sqlite3.Connection, s: Succession, now: str) -> None:
    old = conn.execute(
        "SELECT id, size FROM logs WHERE tenant IS ? AND fleet = ? AND retired_at IS NULL",
        (s.tenant, s.fleet),
    ).fetchone()
    if old is not None:
        conn.execute("UPDATE logs SET retired_at = ? WHERE id = ?", (now, old[0]))
    root = leaf_hash(s.leaf)
    (new_id,) = conn.execute(
        "INSERT INTO logs (tenant, fleet, origin, size, root, predecessor, predecessor_size,"
        " predecessor_root) VALUES (?, ?, ?, 1, ?, ?, ?, ?) RETURNING id",
        (s.tenant, s.fleet, s.origin, root, s.predecessor, s.size, s.root),
    ).fetchone()
    conn.execute(
        "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (?, 0, 0, ?)", (new_id, root)
    )
    conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES (?, 1, ?, ?, ?)",
        (new_id, root, s.note, now),
    )
    moved = 0
    if old is not None:
        old_id, old_size = old
        first = max(old_size, 1)  # the predecessor's first position it never sealed
        moved = conn.execute(
            "UPDATE records SET log_id = ?, log_index = log_index - ? + 1"
            " WHERE log_id = ? AND log_index >= ?",
            (new_id, first, old_id, first),
        ).rowcount
        conn.execute("UPDATE streams SET log_id = ? WHERE log_id = ?", (new_id, old_id))
    conn.execute(
        "INSERT INTO log_positions (log_id, next_index) VALUES (?, ?)", (new_id, 1 + moved)
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
        "INSERT OR IGNORE INTO log_positions (log_id, next_index)"
        " SELECT id, max(size, 1) FROM logs WHERE id = ?",
        (log_id,),
    )
    (position,) = conn.execute(
        "UPDATE log_positions SET next_index = next_index + 1 WHERE log_id = ?"
        " RETURNING next_index - 1",
        (log_id,),
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
        "UPDATE streams SET next_seq = ?, head = ?, lost_seqs = lost_seqs + ? WHERE id = ?",
        (gap.seq + 1, gap.chain_leaf, gap.seq - gap.from_seq, stream_id),
    )


def _restore_aggregate(conn: sqlite3.Connection, a: AggregateRestore, now: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO logs (tenant, fleet, origin, size, root) VALUES (NULL, ?, ?, 0, ?)",
        (AGGREGATE_FLEET, a.origin, b""),
    )
    log_id, origin, size = conn.execute(
        "SELECT id, origin, size FROM logs WHERE tenant IS NULL AND fleet = ?"
        " AND retired_at IS NULL",
        (AGGREGATE_FLEET,),
    ).fetchone()
    if origin != a.origin or size >= a.size:
        raise RecoveryConflict(f"the aggregate log {a.origin} changed since the plan")
    for (level, index), digest in sorted(a.nodes.items()):
        found = conn.execute(
            "SELECT hash FROM log_nodes WHERE log_id = ? AND level = ? AND idx = ?",
            (log_id, level, index),
        ).fetchone()
        if found is not None and bytes(found[0]) != digest:
            raise RecoveryConflict(f"the aggregate log {a.origin} holds another history")
        if found is None:
            conn.execute(
                "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)",
                (log_id, level, index, digest),
            )
    conn.execute("UPDATE logs SET size = ?, root = ? WHERE id = ?", (a.size, a.root, log_id))
    conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES (?, ?, ?, ?, ?)",
        (log_id, a.size, a.root, a.note, now),
    )

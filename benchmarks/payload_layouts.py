"""Three ways to key SQLite's payloads table, on the same rows: CPU per row inserted and bytes
per row stored (docs/performance.md, "What was tried and not kept").

    .venv/bin/python benchmarks/payload_layouts.py [--rows 60000] [--page-size 4096]

- ``as built``: a rowid table keyed ``(tenant, record_id)``, with an index on ``(tenant,
  subject_ref)`` for erasure: the table, its key's index and the subject index per row;
- ``without rowid``: one B-tree keyed ``(tenant, subject_ref, record_id)``, the row in it;
- ``rowid, subject key``: a rowid table whose only index is ``(tenant, subject_ref,
  record_id)``.

Each inserts ``--rows`` sealed payloads of 1,150 bytes (a 1 KB record sealed), 997 subjects in
turn, in transactions of 100 as the writer does, then deletes one subject's payloads (an
erasure). ``synchronous = OFF``: the figures are the structures' work, not the disk's.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path

LAYOUTS = {
    "as built": [
        "CREATE TABLE payloads (tenant TEXT NOT NULL, record_id TEXT NOT NULL,"
        " subject_ref TEXT NOT NULL, sealed BLOB NOT NULL, PRIMARY KEY (tenant, record_id))",
        "CREATE INDEX payloads_by_subject ON payloads (tenant, subject_ref)",
    ],
    "without rowid": [
        "CREATE TABLE payloads (tenant TEXT NOT NULL, subject_ref TEXT NOT NULL,"
        " record_id TEXT NOT NULL, sealed BLOB NOT NULL,"
        " PRIMARY KEY (tenant, subject_ref, record_id)) WITHOUT ROWID"
    ],
    "rowid, subject key": [
        "CREATE TABLE payloads (tenant TEXT NOT NULL, subject_ref TEXT NOT NULL,"
        " record_id TEXT NOT NULL, sealed BLOB NOT NULL,"
        " PRIMARY KEY (tenant, subject_ref, record_id))"
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--page-size", type=int, default=4096)
    args = parser.parse_args()
    subjects = [f"sref-{uuid.uuid4().hex[:22]}" for _ in range(997)]
    # Record ids grow with time (version 7 UUIDs), as the service's do.
    rows = [
        ("acme", f"{time.time_ns() + n:032x}", subjects[n % 997], os.urandom(1150))
        for n in range(args.rows)
    ]
    print(f"{args.rows} rows, page size {args.page_size}")
    for name, statements in LAYOUTS.items():
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "payloads.sqlite3"
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute(f"PRAGMA page_size = {args.page_size}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")
            for statement in statements:
                conn.execute(statement)
            started = time.process_time()
            for first in range(0, len(rows), 100):
                conn.execute("BEGIN")
                conn.executemany(
                    "INSERT INTO payloads (tenant, record_id, subject_ref, sealed)"
                    " VALUES (?, ?, ?, ?)",
                    rows[first : first + 100],
                )
                conn.execute("COMMIT")
            cpu = time.process_time() - started
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = path.stat().st_size
            started = time.perf_counter()
            conn.execute(
                "DELETE FROM payloads WHERE tenant = 'acme' AND subject_ref = ?", (subjects[5],)
            )
            erase = time.perf_counter() - started
            conn.close()
        print(
            f"  {name:<20} {cpu / args.rows * 1e6:6.1f} µs of CPU per row,"
            f" {size / args.rows:6.0f} bytes per row, one subject erased in {erase * 1e3:.2f} ms"
        )


if __name__ == "__main__":
    main()

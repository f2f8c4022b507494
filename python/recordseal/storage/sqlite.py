"""SQLite backend: the embedded default (stdlib ``sqlite3``, WAL, no server).

Writes are committed in groups (one writer task per process, on its event loop): every write
waiting when a transaction starts joins it, and none is acknowledged before the COMMIT (with
``synchronous=FULL``) has returned. Several processes may share one database file: each takes
a lock file before ``BEGIN IMMEDIATE``, and sequence numbers and chain heads are read inside
that transaction, so chains never fork. Reads use a separate connection; WAL lets them run
beside the writer.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from recordseal.storage.base import (
    Append,
    BatchBuilder,
    Conflict,
    Erasure,
    NewRecord,
    RecordRow,
    SigningKeyRow,
    StoreError,
    StreamRow,
    SubjectClaim,
    SubjectRow,
    TokenRow,
)
from recordseal.storage.placing import Queued, new_subjects, place
from recordseal.storage.sqlite_ledger import LedgerQueries
from recordseal.storage.sqlite_schema import connect, migrate
from recordseal.storage.sqlite_writer import Batch, GroupCommitWriter

T = TypeVar("T")


class SQLiteStore(LedgerQueries):
    """The Store interface on one SQLite database file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: GroupCommitWriter | None = None
        self._reader: sqlite3.Connection | None = None
        self._sealer_lock: BinaryIO | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path)
        try:
            migrate(conn)
        finally:
            conn.close()
        self._reader = connect(self.path)
        self._writer = GroupCommitWriter(self.path)

    @property
    def _write(self) -> GroupCommitWriter:
        assert self._writer is not None, "store is not open"
        return self._writer

    async def close(self) -> None:
        if self._writer is not None:
            await self._writer.stop()
            self._writer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._sealer_lock is not None:
            self._sealer_lock.close()
            self._sealer_lock = None

    async def claim_sealing(self) -> bool:
        if self._sealer_lock is None:
            # A kernel lock next to the database: released when its holder dies.
            handle = open(self.path.with_name("sealer.lock"), "a+b")  # noqa: SIM115
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                return False
            self._sealer_lock = handle
        return True

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        assert self._reader is not None, "store is not open"
        return self._reader.execute(sql, params).fetchall()

    # --- tokens -------------------------------------------------------------------------

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES (?, ?, ?, ?)",
                (token_hash, tenant, label, now),
            )

        await self._write.submit(job)

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        rows = self._read(
            "SELECT tenant FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )
        return rows[0][0] if rows else None

    async def list_tokens(self, tenant: str) -> list[TokenRow]:
        rows = self._read(
            "SELECT token_hash, tenant, label, created_at, revoked_at FROM tokens"
            " WHERE tenant = ? ORDER BY created_at",
            (tenant,),
        )
        return [TokenRow(h[:8].hex(), t, label, c, r) for h, t, label, c, r in rows]

    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        def job(conn: sqlite3.Connection, batch: Batch) -> bool:
            cursor = conn.execute(
                "UPDATE tokens SET revoked_at = ? WHERE tenant = ? AND revoked_at IS NULL"
                " AND hex(substr(token_hash, 1, 8)) = upper(?)",
                (now, tenant, token_id),
            )
            return cursor.rowcount > 0

        return await self._write.submit(job)

    # --- signing keys -------------------------------------------------------------------

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO signing_keys"
                " (key_id, algorithm, public_key, not_before, not_after, revoked_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key.key_id,
                    key.algorithm,
                    key.public_key,
                    key.not_before,
                    key.not_after,
                    key.revoked_at,
                ),
            )

        await self._write.submit(job)

    async def signing_keys(self) -> list[SigningKeyRow]:
        rows = self._read(
            "SELECT key_id, algorithm, public_key, not_before, not_after, revoked_at"
            " FROM signing_keys ORDER BY not_before, key_id",
            (),
        )
        return [SigningKeyRow(*row) for row in rows]

    # --- streams ------------------------------------------------------------------------

    async def create_stream(
        self,
        tenant: str,
        name: str,
        declarations: dict[str, str],
        strict: bool,
        genesis: bytes,
        now: str,
        *,
        fleet: str = "default",
    ) -> StreamRow:
        def job(conn: sqlite3.Connection, batch: Batch) -> StreamRow:
            if conn.execute(
                "SELECT 1 FROM streams WHERE tenant = ? AND name = ?", (tenant, name)
            ).fetchone():
                raise Conflict(f"stream {name!r} exists")
            log_id = _log_of(conn, tenant, fleet)
            cursor = conn.execute(
                "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                " created_at, fleet, log_id) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)",
                (tenant, name, json.dumps(declarations), int(strict), genesis, now, fleet, log_id),
            )
            assert cursor.lastrowid is not None
            return StreamRow(
                cursor.lastrowid, tenant, name, declarations, strict, 1, now, fleet, log_id
            )

        return await self._write.submit(job)

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None:
        rows = self._read(
            "SELECT id, tenant, name, declarations, strict, next_seq, created_at, fleet, log_id"
            " FROM streams WHERE tenant = ? AND name = ?",
            (tenant, name),
        )
        if not rows:
            return None
        id_, tenant_, name_, declarations, strict, next_seq, created_at, fleet, log_id = rows[0]
        return StreamRow(
            id_,
            tenant_,
            name_,
            json.loads(declarations),
            bool(strict),
            next_seq,
            created_at,
            fleet,
            log_id,
        )

    # --- subjects -----------------------------------------------------------------------

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        found: dict[bytes, SubjectRow] = {}
        for chunk, marks in _in_lists(list(dict.fromkeys(subject_indexes))):
            rows = self._read(
                "SELECT subject_index, tenant, subject_ref, wrapped_key, erased_at FROM subjects"
                f" WHERE tenant = ? AND subject_index IN ({marks})",
                (tenant, *chunk),
            )
            found.update((row[0], SubjectRow(*row[1:])) for row in rows)
        return found

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None:
        rows = self._read(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = ? AND subject_ref = ?",
            (tenant, subject_ref),
        )
        return SubjectRow(*rows[0]) if rows else None

    # --- records ------------------------------------------------------------------------

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[NewRecord | StoreError]:
        def job(conn: sqlite3.Connection, batch: Batch) -> list[NewRecord | StoreError]:
            queued = [Queued(tenant, append) for append in appends]  # a job is one call
            keys = _stored_keys(conn, batch, tenant, appends)
            created = new_subjects(queued, lambda _, key: keys.get(key))
            if created:
                conn.executemany(
                    "INSERT OR IGNORE INTO subjects"
                    " (tenant, subject_index, subject_ref, wrapped_key, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(*subject, now) for subject in created],
                )
            _check_subjects(conn, batch, tenant, appends)
            placed = place(queued, _JobLookups(conn, batch, keys), build)
            batch.heads.update(placed.heads)
            for (tenant_, key), (request_hash, record_id) in placed.keys.items():
                batch.keys[(tenant_, key)] = (request_hash, record_id, now)
            for append, outcome in zip(appends, placed.outcomes, strict=True):
                if isinstance(outcome, NewRecord):
                    _add_rows(conn, batch, tenant, append, outcome)
            return placed.outcomes

        return await self._write.submit(job, defers_rows=True)

    async def idempotent_records(
        self, tenant: str, keys: list[str]
    ) -> dict[str, tuple[bytes, str]]:
        found: dict[str, tuple[bytes, str]] = {}
        for chunk, marks in _in_lists(keys):
            rows = self._read(
                "SELECT key, request_hash, record_id FROM idempotency_keys"
                f" WHERE tenant = ? AND key IN ({marks})",
                (tenant, *chunk),
            )
            found.update((key, (request_hash, record_id)) for key, request_hash, record_id in rows)
        return found

    async def purge_idempotency_keys(self, older_than: str) -> int:
        def job(conn: sqlite3.Connection, batch: Batch) -> int:
            return conn.execute(
                "DELETE FROM idempotency_keys WHERE created_at < ?", (older_than,)
            ).rowcount

        return await self._write.submit(job)

    _RECORD_COLUMNS = (
        "r.record_id, r.tenant, s.name, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf"
    )

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None:
        rows = self._read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE r.record_id = ? AND r.tenant = ?",
            (record_id, tenant),
        )
        return RecordRow(*rows[0]) if rows else None

    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]:
        rows = self._read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE s.tenant = ? AND s.name = ? ORDER BY r.seq",
            (tenant, stream),
        )
        return [RecordRow(*row) for row in rows]

    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None:
        rows = self._read(
            "SELECT p.sealed FROM payloads p JOIN records r ON r.record_id = p.record_id"
            " WHERE p.record_id = ? AND r.tenant = ?",
            (record_id, tenant),
        )
        return rows[0][0] if rows else None

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        def job(conn: sqlite3.Connection, batch: Batch) -> Erasure:
            erased_at = conn.execute(
                "SELECT erased_at FROM subjects WHERE tenant = ? AND subject_ref = ?",
                (tenant, subject_ref),
            ).fetchone()[0]
            if erased_at is not None:
                return Erasure(False, erased_at, 0)
            conn.execute(
                "UPDATE subjects SET wrapped_key = NULL, erased_at = ? WHERE subject_ref = ?",
                (now, subject_ref),
            )
            deleted = conn.execute(
                "DELETE FROM payloads WHERE subject_ref = ?", (subject_ref,)
            ).rowcount
            self._write.request_checkpoint()
            return Erasure(True, now, deleted)

        return await self._write.submit(job)


def _in_lists(values: list[T], size: int = 500) -> Iterator[tuple[list[T], str]]:
    """``values`` in chunks within SQLite's parameter limit, each with its ``?, ?, …``."""
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ", ".join("?" * len(chunk))


def _stored_keys(
    conn: sqlite3.Connection, batch: Batch, tenant: str, appends: list[Append]
) -> dict[str, tuple[bytes, str]]:
    """The request hash and record id of each idempotency key of a call's appends that is
    stored, or pending in this transaction: one query per 500 keys, not one per append."""
    found = {k: (row[0], row[1]) for (t, k), row in batch.keys.items() if t == tenant}
    unread = [
        a.idempotency.key for a in appends if a.idempotency and a.idempotency.key not in found
    ]
    for chunk, marks in _in_lists(unread):
        found.update(
            (key, (request_hash, record_id))
            for key, request_hash, record_id in conn.execute(
                "SELECT key, request_hash, record_id FROM idempotency_keys"
                f" WHERE tenant = ? AND key IN ({marks})",
                (tenant, *chunk),
            )
        )
    return found


def _check_subjects(
    conn: sqlite3.Connection, batch: Batch, tenant: str, appends: list[Append]
) -> None:
    """Read the stored subjects of a call's appends (the new ones inserted just before)
    with one query per 500, not one each, into the transaction's subject states."""
    wanted = list(
        {a.subject.index for a in appends if (tenant, a.subject.index) not in batch.subjects}
    )
    for chunk, marks in _in_lists(wanted):
        for index, subject_ref, live in conn.execute(
            "SELECT subject_index, subject_ref, wrapped_key IS NOT NULL FROM subjects"
            f" WHERE tenant = ? AND subject_index IN ({marks})",
            (tenant, *chunk),
        ):
            batch.subjects[(tenant, index)] = (subject_ref, bool(live))


class _JobLookups:
    """The placement rules' view of one SQLite transaction (``storage.placing``)."""

    def __init__(
        self, conn: sqlite3.Connection, batch: Batch, keys: dict[str, tuple[bytes, str]]
    ) -> None:
        """``keys``: the call's stored idempotency keys (a job is one tenant's call)."""
        self._conn, self._batch, self._keys = conn, batch, keys

    def stored_key(self, tenant: str, key: str) -> tuple[bytes, str] | None:
        return self._keys.get(key)

    def stored_subject(self, tenant: str, subject: SubjectClaim) -> tuple[str, bool] | None:
        return self._batch.subjects.get((tenant, subject.index))

    def head(self, stream_id: int) -> tuple[int, bytes]:
        return self._batch.head(self._conn, stream_id)


def _add_rows(
    conn: sqlite3.Connection, batch: Batch, tenant: str, append: Append, record: NewRecord
) -> None:
    """Queue a placed record's rows, at the next position of its stream's log."""
    log_id, position = batch.log_position(conn, append.stream_id)
    batch.records.append(
        (
            record.record_id,
            tenant,
            append.stream_id,
            record.seq,
            append.subject.subject_ref,
            record.header,
            record.signature,
            record.chain_leaf,
            log_id,
            position,
        )
    )
    batch.payloads.append((record.record_id, append.subject.subject_ref, record.sealed_payload))


def _log_of(conn: sqlite3.Connection, tenant: str, fleet: str) -> int:
    """The id of the (tenant, fleet) log, its row made now if it has none yet (unnamed until
    the sealer seals it first), with its position counter."""
    conn.execute(
        "INSERT OR IGNORE INTO logs (tenant, fleet, origin, size, root) VALUES (?, ?, NULL, 0, ?)",
        (tenant, fleet, b""),
    )
    (log_id,) = conn.execute(
        "SELECT id FROM logs WHERE tenant IS ? AND fleet = ?", (tenant, fleet)
    ).fetchone()
    conn.execute(  # a log the sealer opened first (a fleet's genesis) has no counter yet
        "INSERT OR IGNORE INTO log_positions (log_id, next_index)"
        " SELECT id, max(size, 1) FROM logs WHERE id = ?",
        (log_id,),
    )
    return int(log_id)

"""The records part of the SQLite store: signing keys, streams, subjects, appends (by the
rules of ``storage.placing``), records, payloads and erasure."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence

from recordseal.clock import utc_minute
from recordseal.identifiers import DEFAULT_FLEET
from recordseal.storage.native_placing import place
from recordseal.storage.placing import new_subjects
from recordseal.storage.records import AppendOutcome
from recordseal.storage.requests import Append, BatchBuilder, Call, NewRecord, SubjectClaim
from recordseal.storage.rows import (
    LISTED_COLUMNS,
    STREAM_COLUMNS,
    Erasure,
    ListedRecord,
    RecordRow,
    SigningKeyRow,
    StreamRow,
    SubjectRow,
    listed_record,
    stream_row,
)
from recordseal.storage.sqlite.database import SQLiteDatabase, in_lists, next_id, open_log
from recordseal.storage.sqlite.writer import Batch

#: A page of a tenant's streams after a name (the index of ``UNIQUE (tenant, name)``).
LIST_STREAMS = (
    f"SELECT {STREAM_COLUMNS} FROM streams WHERE tenant = ? AND name > ? ORDER BY name LIMIT ?"
)
#: A page of a stream's records from a seq, with their seal: one range of the index of
#: ``UNIQUE (stream_id, seq)``, read in its order (the stream is looked up first: a join
#: from the stream's name would leave the planner a sort of every record after ``seq``).
LIST_RECORDS = (
    f"SELECT {LISTED_COLUMNS} FROM records r"
    " LEFT JOIN logs l ON l.tenant = r.tenant AND l.id = r.log_id"
    " WHERE r.stream_id = ? AND r.tenant = ? AND r.seq >= ?"
    " ORDER BY r.seq LIMIT ?"
)


class SQLiteRecords:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def on_reconnect(self, hook: Callable[[], Awaitable[None]]) -> None:
        """A file is never failed over while it is open: nothing to watch."""

    # --- signing keys -------------------------------------------------------------------

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO signing_keys (key_id, algorithm, public_key, not_before,"
                " not_after, revoked_at, compromised_at, location) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                key.columns(),
            )

        await self._db.writer.submit(job)

    async def rotate_signing_key(self, new: SigningKeyRow, retire: str, at: str) -> bool:
        def job(conn: sqlite3.Connection, batch: Batch) -> bool:
            retired = conn.execute(
                "UPDATE signing_keys SET not_after = ? WHERE key_id = ? AND not_after IS NULL"
                " AND revoked_at IS NULL",
                (at, retire),
            ).rowcount
            if not retired:
                return False
            conn.execute(
                "INSERT INTO signing_keys (key_id, algorithm, public_key, not_before, not_after,"
                " revoked_at, compromised_at, location) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                new.columns(),
            )
            return True

        return await self._db.writer.submit(job)

    async def revoke_signing_key(self, key_id: str, revoked_at: str, compromised_at: str) -> bool:
        def job(conn: sqlite3.Connection, batch: Batch) -> bool:
            return bool(
                conn.execute(
                    "UPDATE signing_keys SET revoked_at = ?, compromised_at = ? WHERE key_id = ?",
                    (revoked_at, compromised_at, key_id),
                ).rowcount
            )

        return await self._db.writer.submit(job)

    async def signing_keys(self) -> list[SigningKeyRow]:
        rows = self._db.read(
            "SELECT key_id, algorithm, public_key, not_before, not_after, revoked_at,"
            " compromised_at, location"
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
        fleet: str = DEFAULT_FLEET,
    ) -> StreamRow | None:
        def job(conn: sqlite3.Connection, batch: Batch) -> StreamRow | None:
            if conn.execute(
                "SELECT 1 FROM streams WHERE tenant = ? AND name = ?", (tenant, name)
            ).fetchone():
                return None
            log_id = _log_of(conn, tenant, fleet)
            stream_id = next_id(conn, "streams")
            conn.execute(
                "INSERT INTO streams (id, tenant, name, declarations, strict, next_seq, head,"
                " created_at, fleet, log_id) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
                (
                    stream_id, tenant, name, json.dumps(declarations), int(strict), genesis,
                    now, fleet, log_id,
                ),
            )  # fmt: skip
            return StreamRow(stream_id, tenant, name, declarations, strict, 1, now, fleet, log_id)

        return await self._db.writer.submit(job)

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None:
        rows = self._db.read(
            f"SELECT {STREAM_COLUMNS} FROM streams WHERE tenant = ? AND name = ?", (tenant, name)
        )
        return stream_row(rows[0]) if rows else None

    async def list_streams(self, tenant: str, after: str | None, limit: int) -> list[StreamRow]:
        rows = self._db.read(LIST_STREAMS, (tenant, after or "", limit))
        return [stream_row(row) for row in rows]

    # --- subjects -----------------------------------------------------------------------

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        found: dict[bytes, SubjectRow] = {}
        for chunk, marks in in_lists(list(dict.fromkeys(subject_indexes))):
            rows = self._db.read(
                "SELECT subject_index, tenant, subject_ref, wrapped_key, erased_at FROM subjects"
                f" WHERE tenant = ? AND subject_index IN ({marks})",
                (tenant, *chunk),
            )
            found.update((row[0], SubjectRow(*row[1:])) for row in rows)
        return found

    async def keys_wrapped_before(
        self, generation: int, limit: int
    ) -> list[tuple[str, bytes, str, bytes]]:
        rows = self._db.read(
            "SELECT tenant, subject_index, subject_ref, wrapped_key FROM subjects"
            " WHERE wrapped_key IS NOT NULL AND (length(wrapped_key) = 60"
            " OR (length(wrapped_key) = 61 AND substr(wrapped_key, 1, 1) < ?)) LIMIT ?",
            (bytes([generation]), limit),
        )
        return [(t, i, r, w) for t, i, r, w in rows]

    async def replace_wrapped_keys(self, changes: Sequence[tuple[str, bytes, bytes, bytes]]) -> int:
        def job(conn: sqlite3.Connection, batch: Batch) -> int:
            stored = 0
            for tenant, index, old, new in changes:
                stored += conn.execute(
                    "UPDATE subjects SET wrapped_key = ? WHERE tenant = ? AND subject_index = ?"
                    " AND wrapped_key = ?",
                    (new, tenant, index, old),
                ).rowcount
            return stored

        return await self._db.writer.submit(job)

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None:
        rows = self._db.read(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = ? AND subject_ref = ?",
            (tenant, subject_ref),
        )
        return SubjectRow(*rows[0]) if rows else None

    # --- records ------------------------------------------------------------------------

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[AppendOutcome]:
        def job(conn: sqlite3.Connection, batch: Batch) -> list[AppendOutcome]:
            calls = [Call(tenant, appends)]  # a job is one call
            keys = _stored_keys(conn, batch, tenant, appends)
            created = new_subjects(calls, lambda _, key: keys.get(key))
            if created:
                conn.executemany(
                    "INSERT OR IGNORE INTO subjects"
                    " (tenant, subject_index, subject_ref, wrapped_key, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(*subject, now) for subject in created],
                )
            _check_subjects(conn, batch, tenant, appends)
            placed = place(calls, _JobLookups(conn, batch, tenant, keys), build)
            batch.heads.update(placed.heads)
            for (tenant_, key), (request_hash, record_id) in placed.keys.items():
                batch.keys[(tenant_, key)] = (request_hash, record_id, now)
            _add_rows(conn, batch, tenant, appends, placed.outcomes, now)
            return placed.outcomes

        return await self._db.writer.submit_rows(job)

    async def idempotent_records(
        self, tenant: str, keys: list[str]
    ) -> dict[str, tuple[bytes, str]]:
        found: dict[str, tuple[bytes, str]] = {}
        for chunk, marks in in_lists(keys):
            rows = self._db.read(
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

        return await self._db.writer.submit(job)

    _RECORD_COLUMNS = (
        "r.record_id, r.tenant, s.name, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf"
    )

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None:
        rows = self._db.read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE r.tenant = ? AND r.record_id = ?",
            (tenant, record_id),
        )
        return RecordRow(*rows[0]) if rows else None

    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]:
        rows = self._db.read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE s.tenant = ? AND s.name = ? ORDER BY r.seq",
            (tenant, stream),
        )
        return [RecordRow(*row) for row in rows]

    async def list_records(
        self, stream: StreamRow, from_seq: int, limit: int
    ) -> list[ListedRecord]:
        rows = self._db.read(LIST_RECORDS, (stream.id, stream.tenant, from_seq, limit))
        return [listed_record(stream.name, row) for row in rows]

    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None:
        rows = self._db.read(
            "SELECT sealed FROM payloads WHERE tenant = ? AND record_id = ?",
            (tenant, record_id),
        )
        return rows[0][0] if rows else None

    async def stream_heads(self) -> list[tuple[str, str, int, bytes]]:
        rows = self._db.read("SELECT tenant, name, next_seq, head FROM streams")
        return [(tenant, name, next_seq, head) for tenant, name, next_seq, head in rows]

    async def chain_leaf_at(self, tenant: str, stream: str, seq: int) -> bytes | None:
        rows = self._db.read(
            "SELECT r.chain_leaf FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE s.tenant = ? AND s.name = ? AND r.seq = ?",
            (tenant, stream, seq),
        )
        return rows[0][0] if rows else None

    async def apply_erasures(self, erasures: Sequence[tuple[str, bytes, str, str]]) -> int:
        def job(conn: sqlite3.Connection, batch: Batch) -> int:
            changed = 0
            for tenant, index, subject_ref, erased_at in erasures:
                row = conn.execute(
                    "SELECT subject_ref, wrapped_key IS NOT NULL FROM subjects"
                    " WHERE tenant = ? AND subject_index = ?",
                    (tenant, index),
                ).fetchone()
                if row is None:
                    conn.execute(
                        "INSERT INTO subjects (tenant, subject_index, subject_ref, wrapped_key,"
                        " created_at, erased_at) VALUES (?, ?, ?, NULL, ?, ?)",
                        (tenant, index, subject_ref, erased_at, erased_at),
                    )
                elif row[1]:
                    conn.execute(
                        "UPDATE subjects SET wrapped_key = NULL, erased_at = ?"
                        " WHERE tenant = ? AND subject_index = ?",
                        (erased_at, tenant, index),
                    )
                    conn.execute(
                        "DELETE FROM payloads WHERE tenant = ? AND subject_ref = ?",
                        (tenant, row[0]),
                    )
                else:
                    continue
                changed += 1
            if changed:
                self._db.writer.request_checkpoint()
            return changed

        return await self._db.writer.submit(job) if erasures else 0

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        def job(conn: sqlite3.Connection, batch: Batch) -> Erasure:
            erased_at = conn.execute(
                "SELECT erased_at FROM subjects WHERE tenant = ? AND subject_ref = ?",
                (tenant, subject_ref),
            ).fetchone()[0]
            if erased_at is not None:
                return Erasure(False, erased_at, 0)
            conn.execute(
                "UPDATE subjects SET wrapped_key = NULL, erased_at = ?"
                " WHERE tenant = ? AND subject_ref = ?",
                (now, tenant, subject_ref),
            )
            deleted = conn.execute(
                "DELETE FROM payloads WHERE tenant = ? AND subject_ref = ?", (tenant, subject_ref)
            ).rowcount
            self._db.writer.request_checkpoint()
            return Erasure(True, now, deleted)

        return await self._db.writer.submit(job)


def _stored_keys(
    conn: sqlite3.Connection, batch: Batch, tenant: str, appends: list[Append]
) -> dict[str, tuple[bytes, str]]:
    """The request hash and record id of each idempotency key of a call's appends that is
    stored, or pending in this transaction: one query per 500 keys, not one per append."""
    found = {k: (row[0], row[1]) for (t, k), row in batch.keys.items() if t == tenant}
    unread = [
        a.idempotency.key for a in appends if a.idempotency and a.idempotency.key not in found
    ]
    for chunk, marks in in_lists(unread):
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
    for chunk, marks in in_lists(wanted):
        for index, subject_ref, live in conn.execute(
            "SELECT subject_index, subject_ref, wrapped_key IS NOT NULL FROM subjects"
            f" WHERE tenant = ? AND subject_index IN ({marks})",
            (tenant, *chunk),
        ):
            batch.subjects[(tenant, index)] = (subject_ref, bool(live))


class _JobLookups:
    """The placement rules' view of one SQLite transaction (``storage.placing``)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        batch: Batch,
        tenant: str,
        keys: dict[str, tuple[bytes, str]],
    ) -> None:
        """``keys``: the call's stored idempotency keys (a job is one ``tenant``'s call)."""
        self._conn, self._batch, self._tenant, self._keys = conn, batch, tenant, keys

    def stored_key(self, tenant: str, key: str) -> tuple[bytes, str] | None:
        return self._keys.get(key)

    def stored_subject(self, tenant: str, subject: SubjectClaim) -> tuple[str, bool] | None:
        return self._batch.subjects.get((tenant, subject.index))

    def head(self, stream_id: int) -> tuple[int, bytes]:
        return self._batch.head(self._conn, self._tenant, stream_id)

    def known_keys(self) -> dict[tuple[str, str], tuple[bytes, str]]:
        return {(self._tenant, key): stored for key, stored in self._keys.items()}

    def known_subjects(self) -> dict[tuple[str, bytes], tuple[str, bool]]:
        return self._batch.subjects


def _add_rows(
    conn: sqlite3.Connection,
    batch: Batch,
    tenant: str,
    appends: list[Append],
    outcomes: list[AppendOutcome],
    now: str,
) -> None:
    """Queue the rows of a call's placed records, each at the next position of its stream's
    log, and the live view's (storage/activity.py): when each stream last took a record, and
    the records of each log in this UTC minute."""
    records, payloads, ingested, minutes = (
        batch.records, batch.payloads, batch.ingested, batch.log_minutes
    )  # fmt: skip
    minute = utc_minute()  # when the rows are written
    for append, record in zip(appends, outcomes, strict=True):
        if not isinstance(record, NewRecord):
            continue
        log_id, position = batch.log_position(conn, tenant, append.stream_id)
        subject_ref = append.subject.subject_ref
        records.append(
            (
                record.record_id,
                tenant,
                append.stream_id,
                record.seq,
                subject_ref,
                record.header,
                record.signature,
                record.chain_leaf,
                log_id,
                position,
            )
        )
        payloads.append((tenant, record.record_id, subject_ref, record.sealed_payload))
        ingested[append.stream_id] = now
        counted = (tenant, log_id, minute)
        minutes[counted] = minutes.get(counted, 0) + 1


def _log_of(conn: sqlite3.Connection, tenant: str, fleet: str) -> int:
    """The id of the (tenant, fleet) log, its row made now if it has none yet (unnamed until
    the sealer seals it first), with its position counter."""
    log_id = open_log(conn, tenant, fleet, None)
    conn.execute(  # a log the sealer opened first (a fleet's genesis) has no counter yet
        "INSERT OR IGNORE INTO log_positions (tenant, log_id, next_index)"
        " SELECT tenant, id, max(size, 1) FROM logs WHERE tenant = ? AND id = ?",
        (tenant, log_id),
    )
    return log_id

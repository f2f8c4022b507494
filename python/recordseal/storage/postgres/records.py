"""The records part of the PostgreSQL store: signing keys, streams, subjects, appends
(committed in groups by ``postgres/writer.py``), records, payloads and erasure."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import asyncpg

from recordseal.identifiers import DEFAULT_FLEET
from recordseal.storage.postgres.database import ONE_ROW_BY_KEY, PostgresDatabase
from recordseal.storage.postgres.writer import AppendWriter
from recordseal.storage.records import AppendOutcome
from recordseal.storage.requests import Append, BatchBuilder
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

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection

#: A page of a tenant's streams after a name, in byte order of the names as on SQLite (the
#: index ``streams_by_name``).
LIST_STREAMS = (
    f"SELECT {STREAM_COLUMNS} FROM streams WHERE tenant = $1"
    ' AND name COLLATE "C" > $2 ORDER BY name COLLATE "C" LIMIT $3'
)
#: A page of a stream's records from a seq, with their seal: one range of the index of
#: ``UNIQUE (stream_id, seq)``, read in its order (the stream is looked up first: a join
#: from the stream's name would leave the planner a sort of every record after ``seq``).
LIST_RECORDS = (
    f"SELECT {LISTED_COLUMNS} FROM records r"
    " LEFT JOIN logs l ON l.tenant = r.tenant AND l.id = r.log_id"
    " WHERE r.stream_id = $1 AND r.tenant = $2 AND r.seq >= $3"
    " ORDER BY r.seq LIMIT $4"
)

#: A tenant's subjects by index, one index lookup per key (``ONE_ROW_BY_KEY``).
SUBJECTS_BY_INDEX = (
    "SELECT s.subject_index, s.tenant, s.subject_ref, s.wrapped_key, s.erased_at"
    " FROM unnest($2::bytea[]) AS u(i), LATERAL (SELECT * FROM subjects"
    f" WHERE tenant = $1 AND subject_index = u.i {ONE_ROW_BY_KEY}) s"
)
#: A tenant's stored idempotency keys, one index lookup per key.
IDEMPOTENCY_KEYS_BY_KEY = (
    "SELECT i.key, i.request_hash, i.record_id FROM unnest($2::text[]) AS u(k),"
    " LATERAL (SELECT * FROM idempotency_keys"
    f" WHERE tenant = $1 AND key = u.k {ONE_ROW_BY_KEY}) i"
)

log = logging.getLogger("recordseal.storage")


class PostgresRecords:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._writer: AppendWriter | None = None
        self._vacuum: asyncio.Task[None] | None = None
        self._vacuum_wanted = False

    def start(self) -> None:
        """Start the append writer (on the running event loop)."""
        self._writer = AppendWriter(self._db.url, self._db.writer_connected)

    def on_reconnect(self, hook: Callable[[], Awaitable[None]]) -> None:
        """``hook`` compares the store with the journal again after any store connection
        reopened, before anything is served (``PostgresDatabase.moved``)."""
        self._db.on_moved(hook)

    async def stop(self) -> None:
        if self._vacuum is not None:
            await self._vacuum  # a reclaim under way finishes (it is short) before the pool goes
            self._vacuum = None
        if self._writer is not None:
            await self._writer.stop()
            self._writer = None

    # --- signing keys -------------------------------------------------------------------

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        await self._db.pool.execute(
            "INSERT INTO signing_keys (key_id, algorithm, public_key, not_before, not_after,"
            " revoked_at, compromised_at, location) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            " ON CONFLICT DO NOTHING",
            *key.columns(),
        )

    async def rotate_signing_key(self, new: SigningKeyRow, retire: str, at: str) -> bool:
        async with self._db.pool.acquire() as conn, conn.transaction():
            retired = await conn.execute(
                "UPDATE signing_keys SET not_after = $1 WHERE key_id = $2 AND not_after IS NULL"
                " AND revoked_at IS NULL",
                at,
                retire,
            )
            if retired.split()[-1] == "0":
                return False
            await conn.execute(
                "INSERT INTO signing_keys (key_id, algorithm, public_key, not_before, not_after,"
                " revoked_at, compromised_at, location) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                *new.columns(),
            )
            return True

    async def revoke_signing_key(self, key_id: str, revoked_at: str, compromised_at: str) -> bool:
        status = await self._db.pool.execute(
            "UPDATE signing_keys SET revoked_at = $1, compromised_at = $2 WHERE key_id = $3",
            revoked_at,
            compromised_at,
            key_id,
        )
        return status.split()[-1] != "0"

    async def signing_keys(self) -> list[SigningKeyRow]:
        rows = await self._db.pool.fetch(
            "SELECT key_id, algorithm, public_key, not_before, not_after, revoked_at,"
            " compromised_at, location"
            " FROM signing_keys ORDER BY not_before, key_id"
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
        try:
            async with self._db.pool.acquire() as conn, conn.transaction():
                log_id = await _log_of(conn, tenant, fleet)
                stream_id = await conn.fetchval(
                    "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                    " created_at, fleet, log_id) VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8)"
                    " RETURNING id",
                    tenant,
                    name,
                    json.dumps(declarations),
                    strict,
                    genesis,
                    now,
                    fleet,
                    log_id,
                )
        except asyncpg.UniqueViolationError:
            return None  # the tenant has a stream of this name
        return StreamRow(stream_id, tenant, name, declarations, strict, 1, now, fleet, log_id)

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None:
        row = await self._db.pool.fetchrow(
            f"SELECT {STREAM_COLUMNS} FROM streams WHERE tenant = $1 AND name = $2", tenant, name
        )
        return None if row is None else stream_row(row)

    async def list_streams(self, tenant: str, after: str | None, limit: int) -> list[StreamRow]:
        rows = await self._db.pool.fetch(LIST_STREAMS, tenant, after or "", limit)
        return [stream_row(row) for row in rows]

    # --- subjects -----------------------------------------------------------------------

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        rows = await self._db.pool.fetch(
            SUBJECTS_BY_INDEX,
            tenant,
            list(dict.fromkeys(subject_indexes)),
        )
        return {row[0]: SubjectRow(*row[1:]) for row in rows}

    async def keys_wrapped_before(
        self, generation: int, limit: int
    ) -> list[tuple[str, bytes, str, bytes]]:
        rows = await self._db.pool.fetch(
            "SELECT tenant, subject_index, subject_ref, wrapped_key FROM subjects"
            " WHERE wrapped_key IS NOT NULL AND (length(wrapped_key) = 60"
            " OR (length(wrapped_key) = 61 AND get_byte(wrapped_key, 0) < $1)) LIMIT $2",
            generation,
            limit,
        )
        return [(t, bytes(i), r, bytes(w)) for t, i, r, w in rows]

    async def replace_wrapped_keys(self, changes: Sequence[tuple[str, bytes, bytes, bytes]]) -> int:
        async with self._db.pool.acquire() as conn, conn.transaction():
            stored = 0
            for tenant, index, old, new in changes:
                status = await conn.execute(
                    "UPDATE subjects SET wrapped_key = $1 WHERE tenant = $2 AND subject_index = $3"
                    " AND wrapped_key = $4",
                    new,
                    tenant,
                    index,
                    old,
                )
                stored += int(status.split()[-1])
            return stored

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None:
        row = await self._db.pool.fetchrow(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = $1 AND subject_ref = $2",
            tenant,
            subject_ref,
        )
        return SubjectRow(*row) if row else None

    # --- records ------------------------------------------------------------------------

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[AppendOutcome]:
        assert self._writer is not None, "store is not open"
        # A failed transaction raises here: nothing of it was acknowledged.
        return await self._writer.submit(tenant, appends, now, build)

    async def idempotent_records(
        self, tenant: str, keys: list[str]
    ) -> dict[str, tuple[bytes, str]]:
        rows = await self._db.pool.fetch(
            IDEMPOTENCY_KEYS_BY_KEY,
            tenant,
            keys,
        )
        return {key: (request_hash, record_id) for key, request_hash, record_id in rows}

    async def purge_idempotency_keys(self, older_than: str) -> int:
        status = await self._db.pool.execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1", older_than
        )
        return int(status.split()[-1])

    _RECORD_COLUMNS = (
        "r.record_id, r.tenant, s.name, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf"
    )

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None:
        row = await self._db.pool.fetchrow(
            f"SELECT {self._RECORD_COLUMNS} FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE r.record_id = $1 AND r.tenant = $2",
            record_id,
            tenant,
        )
        return RecordRow(*row) if row else None

    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]:
        rows = await self._db.pool.fetch(
            f"SELECT {self._RECORD_COLUMNS} FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE s.tenant = $1 AND s.name = $2 ORDER BY r.seq",
            tenant,
            stream,
        )
        return [RecordRow(*row) for row in rows]

    async def list_records(
        self, stream: StreamRow, from_seq: int, limit: int
    ) -> list[ListedRecord]:
        rows = await self._db.pool.fetch(LIST_RECORDS, stream.id, stream.tenant, from_seq, limit)
        return [listed_record(stream.name, row) for row in rows]

    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None:
        sealed: bytes | None = await self._db.pool.fetchval(
            "SELECT sealed FROM payloads WHERE record_id = $1 AND tenant = $2",
            record_id,
            tenant,
        )
        return sealed

    async def stream_heads(self) -> list[tuple[str, str, int, bytes]]:
        rows = await self._db.pool.fetch("SELECT tenant, name, next_seq, head FROM streams")
        return [(t, n, s, bytes(h)) for t, n, s, h in rows]

    async def chain_leaf_at(self, tenant: str, stream: str, seq: int) -> bytes | None:
        leaf = await self._db.pool.fetchval(
            "SELECT r.chain_leaf FROM records r"
            " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
            " WHERE s.tenant = $1 AND s.name = $2 AND r.seq = $3",
            tenant,
            stream,
            seq,
        )
        return None if leaf is None else bytes(leaf)

    async def apply_erasures(self, erasures: Sequence[tuple[str, bytes, str, str]]) -> int:
        changed = 0
        async with self._db.pool.acquire() as conn, conn.transaction():
            for tenant, index, subject_ref, erased_at in erasures:
                row = await conn.fetchrow(
                    "SELECT subject_ref, wrapped_key IS NOT NULL AS live FROM subjects"
                    " WHERE tenant = $1 AND subject_index = $2 FOR UPDATE",
                    tenant,
                    index,
                )
                if row is None:
                    await conn.execute(
                        "INSERT INTO subjects (tenant, subject_index, subject_ref, wrapped_key,"
                        " created_at, erased_at) VALUES ($1, $2, $3, NULL, $4, $4)",
                        tenant,
                        index,
                        subject_ref,
                        erased_at,
                    )
                elif row["live"]:
                    await conn.execute(
                        "UPDATE subjects SET wrapped_key = NULL, erased_at = $1"
                        " WHERE tenant = $2 AND subject_index = $3",
                        erased_at,
                        tenant,
                        index,
                    )
                    await conn.execute(
                        "DELETE FROM payloads WHERE tenant = $1 AND subject_ref = $2",
                        tenant,
                        row["subject_ref"],
                    )
                else:
                    continue
                changed += 1
        if changed:
            self._reclaim()
        return changed

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        """Destroy the subject's wrapped key and delete its payloads in one transaction.

        The ``FOR UPDATE`` waits for appends of this subject under way (they hold it
        ``FOR SHARE``), and the DELETE then sees their payloads; appends that come later see
        the key gone and are refused. A VACUUM of both tables follows in the background.
        """
        async with self._db.pool.acquire() as conn, conn.transaction():
            erased_at = await conn.fetchval(
                "SELECT erased_at FROM subjects WHERE tenant = $1 AND subject_ref = $2 FOR UPDATE",
                tenant,
                subject_ref,
            )
            if erased_at is not None:
                return Erasure(False, erased_at, 0)
            await conn.execute(
                "UPDATE subjects SET wrapped_key = NULL, erased_at = $1"
                " WHERE tenant = $2 AND subject_ref = $3",
                now,
                tenant,
                subject_ref,
            )
            status = await conn.execute(
                "DELETE FROM payloads WHERE tenant = $1 AND subject_ref = $2", tenant, subject_ref
            )
        self._reclaim()
        return Erasure(True, now, int(status.split()[-1]))

    def _reclaim(self) -> None:
        """Vacuum subjects and payloads soon, in the background, so the dead row versions of
        an erasure are reclaimed now rather than at the next autovacuum (the answer does not
        wait for it; erasures in quick succession share one run)."""
        self._vacuum_wanted = True
        if self._vacuum is None or self._vacuum.done():
            self._vacuum = asyncio.get_running_loop().create_task(self._vacuum_loop())

    async def _vacuum_loop(self) -> None:
        while self._vacuum_wanted:
            self._vacuum_wanted = False
            try:
                async with self._db.pool.acquire() as conn:
                    await conn.execute("VACUUM subjects, payloads")
            except (asyncpg.PostgresError, OSError) as error:  # autovacuum will do it later
                log.warning("storage.vacuum_failed", extra={"error": type(error).__name__})
                return


async def _log_of(conn: Connection, tenant: str, fleet: str) -> int:
    """The id of the (tenant, fleet) log, its row made now if it has none yet (unnamed until
    the sealer seals it first), with its position counter."""
    await conn.execute(
        "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ($1, $2, NULL, 0, '')"
        " ON CONFLICT DO NOTHING",
        tenant,
        fleet,
    )
    log_id: int = await conn.fetchval(
        "SELECT id FROM logs WHERE tenant = $1 AND fleet = $2 AND retired_at IS NULL",
        tenant,
        fleet,
    )
    await conn.execute(  # a log the sealer opened first (a fleet's genesis) has no counter yet
        "INSERT INTO log_positions (tenant, log_id, next_index)"
        " SELECT tenant, id, greatest(size, 1) FROM logs WHERE tenant = $1 AND id = $2"
        " ON CONFLICT DO NOTHING",
        tenant,
        log_id,
    )
    return log_id

"""PostgreSQL backend (asyncpg): for production, and for several service processes sharing
one database.

Appends are committed in groups by one writer task per process (``postgres_writer.py``);
every other write is its own transaction from the connection pool. Processes coordinate
through the database only: stream rows are locked while sequence numbers are assigned, each
log row while it is sealed, and the sealer leadership is a session advisory lock (released
by the server when its holder's connection dies, so another process takes over).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import asyncpg

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
    SubjectRow,
    TokenRow,
)
from recordseal.storage.postgres_ledger import PostgresLedger
from recordseal.storage.postgres_schema import migrate
from recordseal.storage.postgres_writer import AppendWriter

if TYPE_CHECKING:
    from recordseal.storage.postgres_schema import Connection

log = logging.getLogger("recordseal.storage")

#: Key of the advisory lock held by the sealing process.
SEALER_LOCK = 0x7365616C6572  # "sealer"


class PostgresStore(PostgresLedger):
    """The Store interface on one PostgreSQL database (``postgresql://`` URL)."""

    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self._pool_size = pool_size
        self._pool_: asyncpg.Pool | None = None
        self._writer: AppendWriter | None = None
        self._leader: asyncpg.Connection | None = None  # holds the sealer lock, or tries to
        self._leading = False
        self._claiming = asyncio.Lock()
        self._vacuum: asyncio.Task[None] | None = None
        self._vacuum_wanted = False

    async def open(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        self._pool_ = await asyncpg.create_pool(self.url, min_size=1, max_size=self._pool_size)
        self._writer = AppendWriter(self.url)

    @property
    def _pool(self) -> asyncpg.Pool:
        assert self._pool_ is not None, "store is not open"
        return self._pool_

    async def close(self) -> None:
        if self._vacuum is not None:
            await self._vacuum  # a reclaim under way finishes (it is short) before the pool goes
            self._vacuum = None
        if self._writer is not None:
            await self._writer.stop()
            self._writer = None
        if self._leader is not None:
            await self._leader.close()  # releases the sealer lock, if held
            self._leader = None
            self._leading = False
        if self._pool_ is not None:
            await self._pool_.close()
            self._pool_ = None

    async def claim_sealing(self) -> bool:
        """Hold, or try to take, the session advisory lock of the sealer on a connection kept
        for it (the sealer and the daily transparency job both ask; one at a time)."""
        async with self._claiming:
            if self._leader is not None and self._leading:
                try:
                    await self._leader.execute("SELECT 1")
                    return True
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                    self._leader.terminate()  # the connection died: the lock went with it
                    self._leader = None
            if self._leader is None or self._leader.is_closed():
                self._leader = await asyncpg.connect(self.url)
            self._leading = bool(
                await self._leader.fetchval("SELECT pg_try_advisory_lock($1)", SEALER_LOCK)
            )
            return self._leading

    # --- tokens -------------------------------------------------------------------------

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None:
        await self._pool.execute(
            "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES ($1, $2, $3, $4)",
            token_hash,
            tenant,
            label,
            now,
        )

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        tenant: str | None = await self._pool.fetchval(
            "SELECT tenant FROM tokens WHERE token_hash = $1 AND revoked_at IS NULL", token_hash
        )
        return tenant

    async def list_tokens(self, tenant: str) -> list[TokenRow]:
        rows = await self._pool.fetch(
            "SELECT token_hash, tenant, label, created_at, revoked_at FROM tokens"
            " WHERE tenant = $1 ORDER BY created_at",
            tenant,
        )
        return [TokenRow(h[:8].hex(), t, label, c, r) for h, t, label, c, r in rows]

    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        status = await self._pool.execute(
            "UPDATE tokens SET revoked_at = $1 WHERE tenant = $2 AND revoked_at IS NULL"
            " AND encode(substr(token_hash, 1, 8), 'hex') = lower($3)",
            now,
            tenant,
            token_id,
        )
        return status != "UPDATE 0"

    # --- signing keys -------------------------------------------------------------------

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        await self._pool.execute(
            "INSERT INTO signing_keys"
            " (key_id, algorithm, public_key, not_before, not_after, revoked_at)"
            " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            key.key_id,
            key.algorithm,
            key.public_key,
            key.not_before,
            key.not_after,
            key.revoked_at,
        )

    async def signing_keys(self) -> list[SigningKeyRow]:
        rows = await self._pool.fetch(
            "SELECT key_id, algorithm, public_key, not_before, not_after, revoked_at"
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
        fleet: str = "default",
    ) -> StreamRow:
        try:
            async with self._pool.acquire() as conn, conn.transaction():
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
        except asyncpg.UniqueViolationError as exc:
            raise Conflict(f"stream {name!r} exists") from exc
        return StreamRow(stream_id, tenant, name, declarations, strict, 1, now, fleet, log_id)

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None:
        row = await self._pool.fetchrow(
            "SELECT id, tenant, name, declarations, strict, next_seq, created_at, fleet, log_id"
            " FROM streams WHERE tenant = $1 AND name = $2",
            tenant,
            name,
        )
        if row is None:
            return None
        id_, tenant_, name_, declarations, strict, next_seq, created_at, fleet, log_id = row
        return StreamRow(
            id_,
            tenant_,
            name_,
            json.loads(declarations),
            strict,
            next_seq,
            created_at,
            fleet,
            log_id,
        )

    # --- subjects -----------------------------------------------------------------------

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        rows = await self._pool.fetch(
            "SELECT subject_index, tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = $1 AND subject_index = ANY($2::bytea[])",
            tenant,
            list(dict.fromkeys(subject_indexes)),
        )
        return {row[0]: SubjectRow(*row[1:]) for row in rows}

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None:
        row = await self._pool.fetchrow(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = $1 AND subject_ref = $2",
            tenant,
            subject_ref,
        )
        return SubjectRow(*row) if row else None

    # --- records ------------------------------------------------------------------------

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[NewRecord | StoreError]:
        assert self._writer is not None, "store is not open"
        futures = self._writer.submit(tenant, appends, now, build)
        outcomes: list[NewRecord | StoreError] = []
        for outcome in await asyncio.gather(*futures, return_exceptions=True):
            if isinstance(outcome, NewRecord | StoreError):
                outcomes.append(outcome)
            else:
                raise outcome  # the transaction failed: nothing of it was acknowledged
        return outcomes

    async def idempotent_records(
        self, tenant: str, keys: list[str]
    ) -> dict[str, tuple[bytes, str]]:
        rows = await self._pool.fetch(
            "SELECT key, request_hash, record_id FROM idempotency_keys"
            " WHERE tenant = $1 AND key = ANY($2::text[])",
            tenant,
            keys,
        )
        return {key: (request_hash, record_id) for key, request_hash, record_id in rows}

    async def purge_idempotency_keys(self, older_than: str) -> int:
        status = await self._pool.execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1", older_than
        )
        return int(status.split()[-1])

    _RECORD_COLUMNS = (
        "r.record_id, r.tenant, s.name, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf"
    )

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None:
        row = await self._pool.fetchrow(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE r.record_id = $1 AND r.tenant = $2",
            record_id,
            tenant,
        )
        return RecordRow(*row) if row else None

    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]:
        rows = await self._pool.fetch(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE s.tenant = $1 AND s.name = $2 ORDER BY r.seq",
            tenant,
            stream,
        )
        return [RecordRow(*row) for row in rows]

    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None:
        sealed: bytes | None = await self._pool.fetchval(
            "SELECT p.sealed FROM payloads p JOIN records r ON r.record_id = p.record_id"
            " WHERE p.record_id = $1 AND r.tenant = $2",
            record_id,
            tenant,
        )
        return sealed

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        """Destroy the subject's wrapped key and delete its payloads in one transaction.

        The ``FOR UPDATE`` waits for appends of this subject under way (they hold it
        ``FOR SHARE``), and the DELETE then sees their payloads; appends that come later see
        the key gone and are refused. A VACUUM of both tables follows in the background.
        """
        async with self._pool.acquire() as conn, conn.transaction():
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
            status = await conn.execute("DELETE FROM payloads WHERE subject_ref = $1", subject_ref)
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
                async with self._pool.acquire() as conn:
                    await conn.execute("VACUUM subjects, payloads")
            except (asyncpg.PostgresError, OSError) as error:  # autovacuum will do it later
                log.warning("vacuum after erasure failed: %s", type(error).__name__)
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
        "SELECT id FROM logs WHERE tenant = $1 AND fleet = $2", tenant, fleet
    )
    await conn.execute(  # a log the sealer opened first (a fleet's genesis) has no counter yet
        "INSERT INTO log_positions (log_id, next_index)"
        " SELECT id, greatest(size, 1) FROM logs WHERE id = $1 ON CONFLICT DO NOTHING",
        log_id,
    )
    return log_id

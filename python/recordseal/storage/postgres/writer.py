"""Group commit of record appends on PostgreSQL: one writer task per process.

Every append waiting when a transaction starts joins it. The transaction locks, in a fixed
order (so processes never deadlock each other): the idempotency keys (advisory locks), the
subjects (new ones inserted in sorted order first; then all ``FOR SHARE``, which an erasure's
``FOR UPDATE`` waits for and vice versa) and last the stream rows (``FOR UPDATE``, sorted,
which serialises sequence numbers and chain heads across processes) — the subjects and the
streams in one round trip. The placement rules are ``storage.placing``'s; the records are
built by one call of the service's builder, and written, with their log positions (taken
from each log's counter row in the same statement), by one statement. Nobody is answered
before COMMIT (``synchronous_commit`` on) has returned.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncpg

from recordseal.clock import utc_minute
from recordseal.storage.errors import StorageError, StoreUnavailable
from recordseal.storage.native_placing import place
from recordseal.storage.placing import new_subjects
from recordseal.storage.postgres.database import ONE_ROW_BY_KEY
from recordseal.storage.records import AppendOutcome
from recordseal.storage.requests import Append, BatchBuilder, Call, NewRecord, SubjectClaim

log = logging.getLogger(__name__)

#: Lock waits that PostgreSQL resolves by failing one transaction: nothing was acknowledged,
#: so the whole batch runs again.
_RETRYABLE = (asyncpg.DeadlockDetectedError, asyncpg.SerializationError)
_ATTEMPTS = 5

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection


@dataclass(slots=True)
class Pending:
    """The appends of one ``submit`` waiting for the next transaction, and the future its
    caller awaits (their outcomes, in order)."""

    call: Call
    build: BatchBuilder
    now: str
    future: asyncio.Future[list[AppendOutcome]]

    @property
    def tenant(self) -> str:
        return self.call.tenant

    @property
    def appends(self) -> Sequence[Append]:
        return self.call.appends


class AppendWriter:
    MAX_BATCH = 1024

    def __init__(
        self,
        url: str,
        connected: Callable[[asyncpg.Connection, bool], Awaitable[None]] | None = None,
    ) -> None:
        """``connected(conn, lost)``: awaited for every new connection before its first
        transaction, ``lost`` when the one before it broke (the database may be another one
        now: a failover); what it raises fails the transaction's appends."""
        # A connection of its own, not one from the pool: a pooled connection is reset (one
        # more round trip) every time it goes back, and this one is used all the time.
        self._url = url
        self._connected = connected
        self._broke = False
        self._conn: asyncpg.Connection | None = None
        #: Each submit's appends, in order: a transaction takes whole submits only.
        self._pending: list[Pending] = []
        self._wakeup = asyncio.Event()
        self._closing = False
        self._task = asyncio.get_running_loop().create_task(self._run())

    def submit(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> asyncio.Future[list[AppendOutcome]]:
        """Queue ``appends`` (in order) for the next transaction; the future of their
        outcomes."""
        if self._closing:
            raise RuntimeError("the store is closed")
        future: asyncio.Future[list[AppendOutcome]] = asyncio.get_running_loop().create_future()
        if not appends:
            future.set_result([])
            return future
        self._pending.append(Pending(Call(tenant, appends), build, now, future))
        self._wakeup.set()
        return future

    async def stop(self) -> None:
        self._closing = True
        self._wakeup.set()
        await self._task
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def _connection(self) -> asyncpg.Connection:
        """The writer's connection, opened again if the last one broke."""
        if self._conn is None or self._conn.is_closed():
            # Lost until a new connection is in use: a refresh that failed is tried again.
            self._broke = self._broke or self._conn is not None
            self._conn = None
            connection = await asyncpg.connect(self._url)
            if self._connected is not None:
                try:
                    await self._connected(connection, self._broke)
                except BaseException:
                    await connection.close()
                    raise
            self._conn, self._broke = connection, False
        return self._conn

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if not self._pending:
                if self._closing:
                    return
                continue
            # Whole submits, up to MAX_BATCH appends (one larger submit alone): the records
            # of one call (a batch request) commit together or not at all.
            batch: list[Pending] = []
            size = 0
            for pending in self._pending:
                if batch and size + len(pending.appends) > self.MAX_BATCH:
                    break
                batch.append(pending)
                size += len(pending.appends)
            del self._pending[: len(batch)]
            if self._pending:
                self._wakeup.set()
            outcomes = await self._attempts(batch)
            for pending, (ok, value) in zip(batch, outcomes, strict=True):
                if pending.future.cancelled():
                    continue
                if ok:
                    pending.future.set_result(value)
                else:
                    pending.future.set_exception(value)
            await asyncio.sleep(0)

    async def _attempts(self, batch: list[Pending]) -> list[tuple[bool, Any]]:
        """Run the batch's transaction until it commits, retrying what certainly did not; for
        each submit, whether it did and its outcomes (or the error).

        Retried: a deadlock or serialization failure, and a lost connection before COMMIT
        (the server rolls the transaction back). A connection lost during COMMIT leaves the
        outcome unknown; a new connection finds out which (see ``_committed``).
        """
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                return await self._transaction(batch)
            except _RETRYABLE as exc:
                if attempt == _ATTEMPTS:
                    return [(False, exc)] * len(batch)
                log.info("storage.append_retried", extra={"error": type(exc).__name__})
            except _CommitUnknown as unknown:
                try:
                    committed = await self._committed(batch, unknown)
                except Exception as exc:  # the database is still out of reach
                    return [(False, exc)] * len(batch)
                if committed:
                    return unknown.outcomes
                log.warning("storage.commit_lost", extra={"committed": False, "action": "retried"})
                if attempt == _ATTEMPTS:
                    return [(False, unknown.__cause__ or unknown)] * len(batch)
            except StoreUnavailable as exc:  # compared with the journal again: not yet
                return [(False, exc)] * len(batch)
            except Exception as exc:  # the transaction failed: nobody is acknowledged
                if not self._lost() or attempt == _ATTEMPTS:
                    return [(False, exc)] * len(batch)
                log.warning(
                    "storage.connection_lost", extra={"action": "retried on a new connection"}
                )
                await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    def _lost(self) -> bool:
        return self._conn is None or self._conn.is_closed()

    async def _committed(self, batch: list[Pending], unknown: _CommitUnknown) -> bool:
        """Whether the transaction whose COMMIT lost its connection committed.

        Locking the batch's streams waits for that transaction to end (a server process
        that was terminated still finishes or aborts it before it exits); its records are
        then either all stored or none.
        """
        if not unknown.record_ids:
            return True  # every append was refused: nothing to store either way
        conn = await self._connection()
        async with conn.transaction():
            streams = sorted({(p.tenant, a.stream_id) for p in batch for a in p.appends})
            await conn.execute(  # in the order appends lock them (LOCK_ROWS)
                "SELECT 1 FROM unnest($1::text[], $2::bigint[]) AS u(t, i), LATERAL (SELECT 1"
                f" FROM streams WHERE tenant = u.t AND id = u.i {ONE_ROW_BY_KEY} FOR SHARE) s",
                [t for t, _ in streams],
                [i for _, i in streams],
            )
            stored = await conn.fetchval(
                "SELECT count(*) FROM unnest($1::text[], $2::text[]) AS u(t, r)"
                " JOIN records ON tenant = u.t AND record_id = u.r",
                [tenant for tenant, _ in unknown.record_ids],
                [record_id for _, record_id in unknown.record_ids],
            )
        if stored not in (0, len(unknown.record_ids)):
            raise AssertionError(f"{stored} of {len(unknown.record_ids)} records of one commit")
        return bool(stored)

    async def _transaction(self, batch: list[Pending]) -> list[tuple[bool, Any]]:
        conn = await self._connection()
        transaction = conn.transaction()
        await transaction.start()
        try:
            outcomes, record_ids = await self._write(conn, batch)
        except BaseException:
            if not conn.is_closed():
                await transaction.rollback()
            raise
        try:
            await transaction.commit()
        except Exception as exc:
            if conn.is_closed():
                raise _CommitUnknown(outcomes, record_ids) from exc
            raise
        return outcomes

    async def _write(
        self, conn: asyncpg.Connection, batch: list[Pending]
    ) -> tuple[list[tuple[bool, Any]], list[tuple[str, str]]]:
        """Lock, place and write the batch inside the open transaction; the outcomes of each
        submit and the (tenant, record id) of the records written."""
        known_keys = await _lock_keys(conn, batch)
        await _insert_new_subjects(conn, batch, known_keys)
        # Streams last (in the same round trip as the subjects): from this lock to COMMIT
        # every other writer of these streams waits, so only the build (no await) and two
        # round trips come in between.
        subjects, heads, stream_logs = await _lock_rows(conn, batch)
        lookups = _Locked(known_keys, subjects, heads)
        placed: list[AppendOutcome] = []
        # One build for the appends of one builder (every call of one service shares it).
        for _, run in itertools.groupby(batch, key=lambda pending: pending.build):
            pendings = list(run)
            outcome = place([p.call for p in pendings], lookups, pendings[0].build)
            heads.update(outcome.heads)
            known_keys.update(outcome.keys)
            placed += outcome.outcomes
        outcomes: list[tuple[bool, Any]] = []
        records: list[tuple[Any, ...]] = []
        payloads: list[tuple[Any, ...]] = []
        keys: list[tuple[Any, ...]] = []
        # (tenant, log id) -> positions taken in this transaction
        taken: dict[tuple[str, int], int] = {}
        # the live view's rows (storage/activity.py): stream id -> when a record last
        # arrived; (tenant, log id, UTC minute) -> records appended in it
        ingested: dict[int, str] = {}
        minutes: dict[tuple[str, int, int], int] = {}
        tenants = {a.stream_id: p.tenant for p in batch for a in p.appends}
        minute = utc_minute()  # when the rows are written
        at = 0
        for pending in batch:
            tenant, appends = pending.call
            results = placed[at : at + len(appends)]
            at += len(appends)
            outcomes.append((True, results))
            for append, record in zip(appends, results, strict=True):
                if not isinstance(record, NewRecord):
                    continue  # refused: nothing written for it
                log_id = stream_logs[append.stream_id]
                log = (tenant, log_id)
                records.append(
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
                        taken.get(log, 0),  # its position: the log's next index + this
                    )
                )
                taken[log] = taken.get(log, 0) + 1
                ingested[append.stream_id] = pending.now
                counted = (*log, minute)
                minutes[counted] = minutes.get(counted, 0) + 1
                payloads.append((record.record_id, record.sealed_payload))
                if append.idempotency is not None:
                    claim = append.idempotency
                    keys.append((tenant, claim.key, claim.request_hash, record.record_id,
                                 pending.now))  # fmt: skip
        if records:
            ids = list(heads)
            logs = sorted(taken)
            # One statement, one round trip: log positions, records, payloads (their
            # foreign keys are checked at the statement's end), stream heads and
            # idempotency keys.
            await conn.execute(
                _WRITE,
                *_columns(records, 10),
                [sealed for _, sealed in payloads],
                ids,
                [heads[i][0] for i in ids],
                [heads[i][1] for i in ids],
                *(_columns(keys, 5) if keys else [[]] * 5),
                [log_id for _, log_id in logs],
                [taken[log] for log in logs],
                list(ingested),
                list(ingested.values()),
                [log_id for _, log_id, _ in minutes],
                [minute for _, _, minute in minutes],
                list(minutes.values()),
                [tenants[i] for i in ids],
                [tenant for tenant, _ in logs],
                [tenant for tenant, _, _ in minutes],
            )
        return outcomes, [(row[1], row[0]) for row in records]


class _CommitUnknown(StorageError):
    """The connection was lost while COMMIT was under way: it may or may not have happened."""

    def __init__(self, outcomes: list[tuple[bool, Any]], record_ids: list[tuple[str, str]]) -> None:
        super().__init__("connection lost during COMMIT")
        self.outcomes = outcomes
        self.record_ids = record_ids


# The log positions are taken here, in the last statement before COMMIT: the counter row of
# each log is locked from this statement to COMMIT, so positions are handed out in commit
# order and the committed records of a log always fill a prefix of its positions.
_WRITE = """
WITH positions AS (
    UPDATE log_positions p SET next_index = p.next_index + u.n
    FROM unnest($28::text[], $20::bigint[], $21::bigint[]) AS u(tenant, log_id, n)
    WHERE p.tenant = u.tenant AND p.log_id = u.log_id
    RETURNING p.tenant, p.log_id, p.next_index - u.n AS first
), new_records AS (
    INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header, signature,
                         chain_leaf, log_id, log_index)
    SELECT r.record_id, r.tenant, r.stream_id, r.seq, r.subject_ref, r.header, r.signature,
           r.chain_leaf, r.log_id, p.first + r.offset_
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[],
                $6::bytea[], $7::bytea[], $8::bytea[], $9::bigint[], $10::bigint[])
         AS r(record_id, tenant, stream_id, seq, subject_ref, header, signature, chain_leaf,
              log_id, offset_)
    JOIN positions p ON p.tenant = r.tenant AND p.log_id = r.log_id
), new_payloads AS (
    INSERT INTO payloads (tenant, record_id, subject_ref, sealed)
    SELECT * FROM unnest($2::text[], $1::text[], $5::text[], $11::bytea[])
), heads AS (
    UPDATE streams s SET next_seq = u.next_seq, head = u.head,
        last_ingest_at = coalesce(i.at, s.last_ingest_at)
    FROM unnest($27::text[], $12::bigint[], $13::bigint[], $14::bytea[])
         AS u(tenant, id, next_seq, head)
    LEFT JOIN unnest($22::bigint[], $23::text[]) AS i(id, at) ON i.id = u.id
    WHERE s.tenant = u.tenant AND s.id = u.id
), minutes AS (
    INSERT INTO ingest_minutes (tenant, log_id, minute, records)
    SELECT * FROM unnest($29::text[], $24::bigint[], $25::bigint[], $26::bigint[])
    ON CONFLICT (tenant, log_id, minute)
    DO UPDATE SET records = ingest_minutes.records + excluded.records
)
INSERT INTO idempotency_keys (tenant, key, request_hash, record_id, created_at)
SELECT * FROM unnest($15::text[], $16::text[], $17::bytea[], $18::text[], $19::text[])
"""


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    return [[row[i] for row in rows] for i in range(width)]


#: The stored rows of the idempotency keys of a batch (of any tenants), one lookup per key.
LOCKED_KEYS = (
    "SELECT i.tenant, i.key, i.request_hash, i.record_id"
    " FROM unnest($1::text[], $2::text[]) AS u(t, k), LATERAL (SELECT * FROM"
    f" idempotency_keys WHERE tenant = u.t AND key = u.k {ONE_ROW_BY_KEY}) i"
)


async def _lock_keys(
    conn: Connection, batch: list[Pending]
) -> dict[tuple[str, str], tuple[bytes, str]]:
    """Lock the batch's idempotency keys (in sorted order) and read those already stored."""
    wanted = sorted(
        {
            (p.tenant, a.idempotency.key)
            for p in batch
            for a in p.appends
            if a.idempotency is not None
        }
    )
    if not wanted:
        return {}
    tenants, keys = [t for t, _ in wanted], [k for _, k in wanted]
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(length(t) || ':' || t || k, 0))"
        " FROM unnest($1::text[], $2::text[]) AS u(t, k)",
        tenants,
        keys,
    )
    rows = await conn.fetch(
        LOCKED_KEYS,
        tenants,
        keys,
    )
    return {(r[0], r[1]): (r[2], r[3]) for r in rows}


#: One round trip: share-lock the batch's subjects (sorted), then lock its streams (sorted)
#: ``FOR UPDATE``; the subjects' rows, then the streams' (heads and logs). Both come sorted
#: (by tenant, then index or id: every writer locks in that order), and the ``LATERAL`` lookup
#: (one per key on its whole key, see ``ONE_ROW_BY_KEY``) locks them in that order.
LOCK_ROWS = f"""
WITH locked_subjects AS MATERIALIZED (
    SELECT s.tenant, s.subject_index, s.subject_ref, s.wrapped_key IS NOT NULL AS live
    FROM unnest($1::text[], $2::bytea[]) AS u(t, i),
         LATERAL (SELECT * FROM subjects WHERE tenant = u.t AND subject_index = u.i
                  {ONE_ROW_BY_KEY} FOR SHARE) s
), locked_streams AS MATERIALIZED (
    SELECT s.id, s.next_seq, s.head, s.log_id
    FROM unnest($3::text[], $4::bigint[]) AS u(t, i),
         LATERAL (SELECT * FROM streams WHERE tenant = u.t AND id = u.i
                  {ONE_ROW_BY_KEY} FOR UPDATE) s
)
SELECT tenant, subject_index, subject_ref, live,
       NULL::bigint, NULL::bigint, NULL::bytea, NULL::bigint FROM locked_subjects
UNION ALL
SELECT NULL, NULL, NULL, NULL, id, next_seq, head, log_id FROM locked_streams
"""


async def _lock_rows(
    conn: Connection, batch: list[Pending]
) -> tuple[dict[tuple[str, bytes], tuple[str, bool]], dict[int, tuple[int, bytes]], dict[int, int]]:
    """Lock the batch's subjects (share: an erasure waits for this transaction, and this one
    for an erasure under way) and then its streams, in one round trip; the subjects, the
    stream heads and each stream's log."""
    wanted = sorted({(p.tenant, a.subject.index) for p in batch for a in p.appends})
    streams = sorted({(p.tenant, a.stream_id) for p in batch for a in p.appends})
    rows = await conn.fetch(
        LOCK_ROWS,
        [t for t, _ in wanted],
        [i for _, i in wanted],
        [t for t, _ in streams],
        [i for _, i in streams],
    )
    subjects: dict[tuple[str, bytes], tuple[str, bool]] = {}
    heads: dict[int, tuple[int, bytes]] = {}
    logs: dict[int, int] = {}
    for tenant, index, ref, live, stream_id, next_seq, head, log_id in rows:
        if stream_id is None:
            subjects[(tenant, index)] = (ref, live)
        else:
            heads[stream_id] = (next_seq, head)
            logs[stream_id] = log_id
    return subjects, heads, logs


class _Locked:
    """The placement rules' view of the rows this transaction has locked."""

    def __init__(
        self,
        keys: dict[tuple[str, str], tuple[bytes, str]],
        subjects: dict[tuple[str, bytes], tuple[str, bool]],
        heads: dict[int, tuple[int, bytes]],
    ) -> None:
        self._keys, self._subjects, self._heads = keys, subjects, heads

    def stored_key(self, tenant: str, key: str) -> tuple[bytes, str] | None:
        return self._keys.get((tenant, key))

    def stored_subject(self, tenant: str, subject: SubjectClaim) -> tuple[str, bool] | None:
        return self._subjects.get((tenant, subject.index))

    def head(self, stream_id: int) -> tuple[int, bytes]:
        return self._heads[stream_id]

    def known_keys(self) -> dict[tuple[str, str], tuple[bytes, str]]:
        return self._keys

    def known_subjects(self) -> dict[tuple[str, bytes], tuple[str, bool]]:
        return self._subjects


async def _insert_new_subjects(
    conn: Connection,
    batch: list[Pending],
    known_keys: dict[tuple[str, str], tuple[bytes, str]],
) -> None:
    """Create the batch's new subjects (``placing.new_subjects``: sorted, first claim wins,
    none for an append its idempotency key refuses)."""
    new = new_subjects([p.call for p in batch], lambda t, key: known_keys.get((t, key)))
    if new:
        await conn.execute(
            "INSERT INTO subjects (tenant, subject_index, subject_ref, wrapped_key, created_at)"
            " SELECT t, i, r, k, $5 FROM unnest($1::text[], $2::bytea[], $3::text[],"
            " $4::bytea[]) AS u(t, i, r, k) ON CONFLICT DO NOTHING",
            *_columns(new, 4),
            batch[0].now,
        )

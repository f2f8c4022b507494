"""The continuity journal in a PostgreSQL database on **another server** than the store's
(``RECORDSEAL_JOURNAL=postgresql://…``, docs/continuity.md).

Several hosts share one journal this way. The state is kept as the merge it is
(``journal.JournalState``): one row per stream (its largest head), per log (its largest signed
checkpoint), per erased subject (its earliest erasure) and per retired log, each written by an
upsert that only ever moves forward, so writers in any order give one state. Concurrent
appends of a process share one transaction (``journal.GroupWriter``); it commits with the
server's ``synchronous_commit`` (on by default: durable on the journal server). Every writer
holds a shared advisory lock while it lives, so ``recordseal recover`` sees a running service.
The tables are made on first use, in the schema the URL's ``search_path`` names, under a
transaction-scoped advisory lock: any number of processes may start together on a new
journal database. A write takes its rows in one order (``journal.write_order``), so two
writers never deadlock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import asyncpg

from recordseal.clock import utc_now
from recordseal.storage.journal import (
    Entry,
    Erased,
    Fenced,
    GroupWriter,
    Head,
    JournalError,
    JournalState,
    Recovered,
    Retired,
    Signed,
    Unaccepted,
    largest,
    write_order,
)

if TYPE_CHECKING:
    from recordseal.storage.postgres.schema import Connection

#: Held shared by every writer of a journal database ("journal").
WRITER_LOCK = 0x6A6F75726E616C
#: Held while the tables are made ("journal schema"): one process at a time creates them.
SCHEMA_LOCK = 0x6A6F75726E73

SCHEMA = """
CREATE TABLE IF NOT EXISTS journal_heads (
    tenant  text NOT NULL,
    stream  text NOT NULL,
    seq     bigint NOT NULL,
    leaf    bytea NOT NULL,
    PRIMARY KEY (tenant, stream)
);
CREATE TABLE IF NOT EXISTS journal_checkpoints (
    origin  text PRIMARY KEY,
    size    bigint NOT NULL,
    root    bytea NOT NULL,
    tenant  text,
    fleet   text
);
ALTER TABLE journal_checkpoints ADD COLUMN IF NOT EXISTS frontier bytea[];
CREATE TABLE IF NOT EXISTS journal_conflicts (
    origin  text NOT NULL,
    size    bigint NOT NULL,
    root    bytea NOT NULL,
    other   bytea NOT NULL,
    seen_at text NOT NULL
);
CREATE TABLE IF NOT EXISTS journal_erasures (
    tenant         text NOT NULL,
    subject_index  bytea NOT NULL,
    subject_ref    text NOT NULL,
    erased_at      text NOT NULL,
    PRIMARY KEY (tenant, subject_index)
);
CREATE TABLE IF NOT EXISTS journal_retired (
    origin     text PRIMARY KEY,
    size       bigint NOT NULL,
    root       bytea NOT NULL,
    successor  text NOT NULL
);
CREATE TABLE IF NOT EXISTS journal_fences (
    kind    text NOT NULL,
    tenant  text NOT NULL,
    name    text NOT NULL,
    reason  text NOT NULL,
    since   text NOT NULL,
    fleet   text,
    PRIMARY KEY (kind, tenant, name)
);
CREATE TABLE IF NOT EXISTS journal_unaccepted (
    origin  text NOT NULL,
    size    bigint NOT NULL,
    root    bytea NOT NULL,
    PRIMARY KEY (origin, size)
);
CREATE TABLE IF NOT EXISTS journal_recovered (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    at   text NOT NULL
);
"""

#: The heads of some streams and the checkpoints (and retirements) of some logs, now.
CURRENT_HEADS = (
    "SELECT h.tenant, h.stream, h.seq, h.leaf FROM unnest($1::text[], $2::text[]) AS u(t, s)"
    " JOIN journal_heads h ON h.tenant = u.t AND h.stream = u.s"
)
CURRENT_CHECKPOINTS = (
    "SELECT origin, size, root, tenant, fleet, frontier FROM journal_checkpoints"
    " WHERE origin = ANY($1::text[])"
)
CURRENT_RETIRED = (
    "SELECT origin, size, root, successor FROM journal_retired WHERE origin = ANY($1::text[])"
)


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


class PostgresJournal:
    def __init__(self, url: str) -> None:
        self.url = url
        self.location = redacted(url)
        self._pool: asyncpg.Pool | None = None
        self._holder: asyncpg.Connection | None = None  # holds the writer lock
        self._group = GroupWriter(self._write)

    async def load(self) -> JournalState:
        try:
            holder = await asyncpg.connect(self.url)
        except (OSError, asyncpg.PostgresError) as error:
            raise JournalError(f"journal {self.location}: {error}") from None
        try:
            await holder.execute("SELECT pg_advisory_lock_shared($1)", WRITER_LOCK)
        except (OSError, asyncpg.PostgresError) as error:
            holder.terminate()  # refused: nothing will close it later
            raise JournalError(f"journal {self.location}: {error}") from None
        self._holder = holder
        return await self.read()

    async def read(self) -> JournalState:
        try:
            return await self._read()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise JournalError(f"journal {self.location}: {error}") from None

    async def _read(self) -> JournalState:
        pool = await self._open_pool()
        state = JournalState()
        async with pool.acquire() as conn:
            for tenant, stream, seq, leaf in await conn.fetch(
                "SELECT tenant, stream, seq, leaf FROM journal_heads"
            ):
                state.add(Head(tenant, stream, seq, bytes(leaf)))
            for origin, size, root, tenant, fleet, frontier in await conn.fetch(
                "SELECT origin, size, root, tenant, fleet, frontier FROM journal_checkpoints"
            ):
                nodes = tuple(bytes(node) for node in frontier or ())
                state.add(Signed(origin, size, bytes(root), tenant, fleet, nodes))
            for origin, size, root, other in await conn.fetch(
                "SELECT origin, size, root, other FROM journal_conflicts"
            ):
                state.conflicts.append(
                    (Signed(origin, size, bytes(root)), Signed(origin, size, bytes(other)))
                )
            for tenant, index, ref, at in await conn.fetch(
                "SELECT tenant, subject_index, subject_ref, erased_at FROM journal_erasures"
            ):
                state.add(Erased(tenant, bytes(index), ref, at))
            for origin, size, root, successor in await conn.fetch(
                "SELECT origin, size, root, successor FROM journal_retired"
            ):
                state.add(Retired(origin, size, bytes(root), successor))
            for origin, size, root in await conn.fetch(
                "SELECT origin, size, root FROM journal_unaccepted"
            ):
                state.add(Unaccepted(origin, size, bytes(root)))
            fences, recovered = await _shared(conn)
            for fence in fences:
                state.add(fence)
            if recovered:
                state.add(Recovered(recovered))
        return state

    async def current(
        self, streams: Collection[tuple[str, str]], origins: Collection[str]
    ) -> list[Entry]:
        """One indexed query for the streams' heads, one for the logs' checkpoints."""
        try:
            return await self._current(streams, origins)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise JournalError(f"journal {self.location}: {error}") from None

    async def _current(
        self, streams: Collection[tuple[str, str]], origins: Collection[str]
    ) -> list[Entry]:
        pool = await self._open_pool()
        found: list[Entry] = []
        async with pool.acquire() as conn:
            if streams:
                tenants, names = [t for t, _ in streams], [n for _, n in streams]
                for tenant, stream, seq, leaf in await conn.fetch(CURRENT_HEADS, tenants, names):
                    found.append(Head(tenant, stream, seq, bytes(leaf)))
            if origins:
                wanted = list(origins)
                for origin, size, root, tenant, fleet, frontier in await conn.fetch(
                    CURRENT_CHECKPOINTS, wanted
                ):
                    nodes = tuple(bytes(node) for node in frontier or ())
                    found.append(Signed(origin, size, bytes(root), tenant, fleet, nodes))
                for origin, size, root, successor in await conn.fetch(CURRENT_RETIRED, wanted):
                    found.append(Retired(origin, size, bytes(root), successor))
        return found

    async def shared(self) -> tuple[list[Fenced], str]:
        try:
            pool = await self._open_pool()
            async with pool.acquire() as conn:
                return await _shared(conn)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise JournalError(f"journal {self.location}: {error}") from None

    async def _open_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            try:
                pool = await asyncpg.create_pool(self.url, min_size=1, max_size=4)
            except (OSError, asyncpg.PostgresError) as error:
                raise JournalError(f"journal {self.location}: {error}") from None
            try:
                async with pool.acquire() as conn, conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK)
                    await conn.execute(SCHEMA)
            except (OSError, asyncpg.PostgresError) as error:
                pool.terminate()
                raise JournalError(f"journal {self.location}: {error}") from None
            self._pool = pool
        return self._pool

    async def append(self, entries: Iterable[Entry]) -> None:
        await self._group.append(entries)

    async def _write(self, entries: list[Entry]) -> None:
        pool = await self._open_pool()
        async with pool.acquire() as conn, conn.transaction():
            for entry in sorted(largest(entries), key=write_order):
                await _upsert(conn, entry)

    async def other_writers(self) -> int:
        if self._holder is None:
            raise JournalError("the journal is not open")
        high, low = divmod(WRITER_LOCK, 2**32)
        count: int = await self._holder.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1"
            " AND objid = $2 AND objsubid = 1 AND granted AND pid <> pg_backend_pid()",
            high,
            low,
        )
        return count

    async def aclose(self) -> None:
        """Close the lock holder and the pool; each is dropped at once where its server is gone
        (a close that fails must not leave the other open)."""
        holder, self._holder = self._holder, None
        pool, self._pool = self._pool, None
        try:
            if holder is not None:
                try:
                    await holder.close()
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                    holder.terminate()
        finally:
            if pool is not None:
                try:
                    await pool.close()
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                    pool.terminate()


async def _upsert(conn: Connection, entry: Entry) -> None:
    match entry:
        case Head(tenant, stream, seq, leaf):
            await conn.execute(
                "INSERT INTO journal_heads (tenant, stream, seq, leaf) VALUES ($1, $2, $3, $4)"
                " ON CONFLICT (tenant, stream) DO UPDATE SET seq = excluded.seq,"
                " leaf = excluded.leaf WHERE journal_heads.seq < excluded.seq",
                tenant,
                stream,
                seq,
                leaf,
            )
        case Signed(origin, size, root, tenant, fleet, frontier):
            await conn.execute(
                "INSERT INTO journal_conflicts (origin, size, root, other, seen_at)"
                " SELECT origin, size, root, $3, $4 FROM journal_checkpoints"
                " WHERE origin = $1 AND size = $2 AND root <> $3",
                origin,
                size,
                root,
                utc_now(),
            )
            await conn.execute(
                "INSERT INTO journal_checkpoints (origin, size, root, tenant, fleet, frontier)"
                " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (origin) DO UPDATE SET"
                " size = excluded.size, root = excluded.root, tenant = excluded.tenant,"
                " fleet = excluded.fleet, frontier = excluded.frontier"
                " WHERE journal_checkpoints.size < excluded.size",
                origin,
                size,
                root,
                tenant,
                fleet,
                list(frontier) or None,
            )
        case Erased(tenant, index, ref, at):
            await conn.execute(
                "INSERT INTO journal_erasures (tenant, subject_index, subject_ref, erased_at)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, subject_index) DO UPDATE SET"
                " erased_at = excluded.erased_at, subject_ref = excluded.subject_ref"
                " WHERE excluded.erased_at < journal_erasures.erased_at",
                tenant,
                index,
                ref,
                at,
            )
        case Retired(origin, size, root, successor):
            await conn.execute(
                "INSERT INTO journal_retired (origin, size, root, successor)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT (origin) DO NOTHING",
                origin,
                size,
                root,
                successor,
            )
        case Fenced(kind, tenant, name, reason, since, fleet):
            await conn.execute(
                "INSERT INTO journal_fences (kind, tenant, name, reason, since, fleet)"
                " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kind, tenant, name) DO UPDATE"
                " SET reason = excluded.reason, since = excluded.since, fleet = excluded.fleet"
                " WHERE excluded.since < journal_fences.since"
                " OR journal_fences.since <= coalesce((SELECT at FROM journal_recovered), '')",
                kind,
                tenant or "",
                name,
                reason,
                since,
                fleet,
            )
        case Unaccepted(origin, size, root):
            await conn.execute(
                "INSERT INTO journal_unaccepted (origin, size, root) VALUES ($1, $2, $3)"
                " ON CONFLICT DO NOTHING",
                origin,
                size,
                root,
            )
        case Recovered(at):
            await conn.execute(
                "INSERT INTO journal_recovered (at) VALUES ($1) ON CONFLICT (one) DO UPDATE"
                " SET at = excluded.at WHERE journal_recovered.at < excluded.at",
                at,
            )


async def _shared(conn: Connection) -> tuple[list[Fenced], str]:
    fences = [
        Fenced(kind, tenant or None, name, reason, since, fleet)
        for kind, tenant, name, reason, since, fleet in await conn.fetch(
            "SELECT kind, tenant, name, reason, since, fleet FROM journal_fences"
        )
    ]
    recovered = await conn.fetchval("SELECT at FROM journal_recovered")
    return fences, recovered or ""

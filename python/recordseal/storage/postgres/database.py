"""One PostgreSQL database as the store's parts share it: its URL and a connection pool.

It also notices when its server changes under the running process (a failover: the proxy,
virtual address or multi-host URL now reaches a promoted standby). Every new connection
(pooled, the append writer's, the sealer's) reads its server's identity, the postmaster's
start time; when it differs from the one the process knew, or when the writer's connection
was lost, the store is **moved**: until the process has read the journal again, re-applied
its erasures and compared every stream and log (``ledger.continuity``, ``refresh``), no
connection is handed out (``StoreUnavailable``, answered 503), so nothing is served from the
new server before that — reads included.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable

import asyncpg

from recordseal.storage.errors import StoreUnavailable
from recordseal.storage.postgres.schema import migrate

log = logging.getLogger("recordseal.storage")

#: What PostgreSQL's driver raises when the server does not answer, is shutting down or is a
#: standby not promoted yet (read-only): the store is unavailable for now, and a request
#: sent again later may succeed (answered ``503 store_unavailable``).
SERVER_DOWN: tuple[type[Exception], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.ReadOnlySQLTransactionError,
)

#: The identity of the server a connection reaches: a promoted standby has its own.
SERVER_IDENTITY = "SELECT pg_postmaster_start_time()::text"

#: Set in the task that compares the moved store with the journal: its connections pass.
_REFRESHING: contextvars.ContextVar[bool] = contextvars.ContextVar("refreshing", default=False)

#: Seconds between two tries of a refresh that failed (the store or the journal still down).
REFRESH_RETRY = 0.5
#: Seconds the append writer waits for a refresh before its appends are answered 503.
REFRESH_WAIT = 5.0

#: Ends a ``LATERAL`` subquery that reads one row by its whole primary key, once per element
#: of an array parameter: ``FROM unnest($2) AS u(k), LATERAL (SELECT … WHERE tenant = $1 AND
#: key = u.k LIMIT 1)``. asyncpg prepares every statement, and after five runs PostgreSQL may
#: keep a generic plan made while the table was small. For ``tenant = $1 AND key = ANY($2)``
#: (or a join with ``unnest``) that plan scans every row of the tenant and compares it with
#: each key, until the next ANALYZE: 8 ms for 100 keys among 4,500 subjects, 64 ms among
#: 50,000 (docs/records.md). The ``LIMIT`` keeps the subquery from being flattened into a
#: join, so every plan, generic or not, is one index lookup per key.
ONE_ROW_BY_KEY = "LIMIT 1"


class PostgresDatabase:
    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._server: str | None = None
        #: compares the store with the journal again (``Continuity.refresh``)
        self._refresh: Callable[[], Awaitable[None]] | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._moved = False

    async def open(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await migrate(conn)
            self._server = await conn.fetchval(SERVER_IDENTITY)
        finally:
            await conn.close()
        self._pool = await asyncpg.create_pool(
            self.url,
            min_size=1,
            max_size=self._pool_size,
            init=self.connected,
            setup=self._handing_out,
        )

    async def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
            await asyncio.gather(self._refreshing, return_exceptions=True)
            self._refreshing = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    # --- a server changed under the running process ----------------------------------------

    def on_moved(self, refresh: Callable[[], Awaitable[None]]) -> None:
        """``refresh`` runs (once per move) before the store serves again."""
        self._refresh = refresh

    async def connected(self, conn: asyncpg.Connection) -> None:
        """Every new connection: a server other than the one known means a move."""
        server = await conn.fetchval(SERVER_IDENTITY)
        if server != self._server:
            self._server = server
            self.moved("the store's server changed")
        self._check_fresh()

    async def _handing_out(self, conn: object) -> None:
        self._check_fresh()

    def _check_fresh(self) -> None:
        if self._moved and not _REFRESHING.get():
            raise StoreUnavailable(
                "the store's server changed; the service is comparing it with the continuity"
                " journal before it serves again"
            )

    def moved(self, why: str) -> None:
        """The store may be another database now: nothing is served until ``refresh`` ran."""
        if self._refresh is None:
            return  # not started yet: the start compares the store with the journal
        self._moved = True
        if self._refreshing is None or self._refreshing.done():
            log.warning("store.moved", extra={"reason": why})
            self._refreshing = asyncio.get_running_loop().create_task(self._run_refresh())

    async def writer_connected(self, conn: asyncpg.Connection, lost: bool) -> None:
        """A new connection of the append writer; ``lost``: its last one broke (the database
        may be another one now, whatever its identity says: a restore under a running
        server). Waits, for a while, until the store has been compared with the journal;
        ``StoreUnavailable`` if it could not be yet."""
        server = await conn.fetchval(SERVER_IDENTITY)
        if lost or server != self._server:
            self._server = server
            self.moved("a store connection was lost")
        if self._moved and self._refreshing is not None:
            await asyncio.wait({self._refreshing}, timeout=REFRESH_WAIT)
        self._check_fresh()

    async def _run_refresh(self) -> None:
        _REFRESHING.set(True)
        assert self._refresh is not None
        while True:
            try:
                await self._refresh()
            # Boundary of the refresh task: the store or the journal does not answer yet;
            # nothing is served meanwhile, and the refresh is tried again.
            except Exception as error:
                log.warning("store.refresh_failed", extra={"error": type(error).__name__})
                await asyncio.sleep(REFRESH_RETRY)
            else:
                self._moved = False
                return

    @property
    def pool(self) -> asyncpg.Pool:
        assert self._pool is not None, "store is not open"
        return self._pool

"""References for the load script between the trivial endpoint and the real service.

``/durable/...`` decodes the body like the trivial endpoint, then stores the raw payload in one
table, durably before the answer:

- SQLite (``DURABLE_DB``, a file): through the service's own group-commit writer (WAL,
  synchronous=FULL, fsync before the answer);
- PostgreSQL (``DURABLE_PG_URL`` set): one connection per process, every write waiting when a
  transaction starts joins it (one ``executemany``), as the service's own writer does;
  ``synchronous_commit`` on, so COMMIT returns after the WAL flush.

``/floor/...`` does the least any implementation of the spec must do per record, each step
with the service's own fastest part: the commitment (native core), AES-256-GCM of the
canonical payload, an Ed25519 signature over a header-sized message (native), and the same
durable write. No header assembly, chain, subject lookup, idempotency or sealing: its rate is
an upper bound for ``POST /v1/records`` on this machine and stack.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import msgspec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from litestar import Litestar, Request, Response, post

from recordseal._native import Ed25519Signer
from recordseal.core import commit_record
from recordseal.storage.sqlite.schema import connect
from recordseal.storage.sqlite.writer import Batch, GroupCommitWriter
from recordseal.web.gc_tuning import tune_collector
from recordseal.web.schemas import BatchBody, RecordBody

_decode = msgspec.json.Decoder(RecordBody).decode
_decode_batch = msgspec.json.Decoder(BatchBody).decode
_PG_URL = os.environ.get("DURABLE_PG_URL")
_PATH = Path(os.environ.get("DURABLE_DB", "durable.sqlite3"))
#: The process's one sink: ``_sink[0](rows)`` returns once the rows are durable.
_sink: list[Callable[[list[tuple[bytes, bytes]]], Awaitable[None]]] = []
_signer = Ed25519Signer(bytes(32))
_aead = AESGCM(bytes(32))
_SALT_KEY = bytes(32)
_HEADER = b"h" * 420  # the size of a canonical record header


def _insert(rows: list[tuple[bytes, bytes]]) -> Callable[[sqlite3.Connection, Batch], None]:
    def job(conn: sqlite3.Connection, batch: Batch) -> None:
        conn.executemany("INSERT INTO bodies (body, signature) VALUES (?, ?)", rows)

    return job


def _floor(payload: bytes) -> tuple[bytes, bytes]:
    committed = commit_record(payload, {}, False, _SALT_KEY, "0190c5d2-0000-7000-8000-000000000000")
    nonce = os.urandom(12)
    sealed = nonce + _aead.encrypt(nonce, committed.canonical, b"record-id")
    return sealed, _signer.sign(_HEADER + committed.root)


class _PostgresGroupCommit:
    """Group commit on one asyncpg connection: every write waiting when a transaction starts
    joins it; nobody is answered before its COMMIT has returned."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._pending: list[tuple[list[tuple[bytes, bytes]], asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def submit(self, rows: list[tuple[bytes, bytes]]) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((rows, future))
        self._wakeup.set()
        return future

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            batch, self._pending = self._pending, []
            if not batch:
                continue
            try:
                async with self._conn.transaction():
                    await self._conn.executemany(
                        "INSERT INTO bodies (body, signature) VALUES ($1, $2)",
                        [row for rows, _ in batch for row in rows],
                    )
            except Exception as exc:  # nobody in the batch is acknowledged
                for _, future in batch:
                    future.set_exception(exc)
            else:
                for _, future in batch:
                    future.set_result(None)

    async def stop(self) -> None:
        self._task.cancel()
        await self._conn.close()


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    if _PG_URL:
        pg = await asyncpg.connect(_PG_URL)
        async with pg.transaction():  # the workers start together: one creates the table
            await pg.execute("SELECT pg_advisory_xact_lock(1)")
            await pg.execute(
                "CREATE TABLE IF NOT EXISTS bodies (id bigserial PRIMARY KEY, body bytea,"
                " signature bytea)"
            )
        postgres = _PostgresGroupCommit(pg)
        _sink.append(postgres.submit)
        yield
        await postgres.stop()
        return
    conn = connect(_PATH)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS bodies (id INTEGER PRIMARY KEY, body BLOB, signature BLOB)"
    )
    conn.close()
    writer = GroupCommitWriter(_PATH)
    _sink.append(lambda rows: writer.submit(_insert(rows)))
    yield
    await writer.stop()


def _created(status: int) -> Response[bytes]:
    return Response(b'{"ok":true}', status_code=status, media_type="application/json")


@post("/durable/v1/records", status_code=201)
async def durable(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    body = _decode(await request.body())
    await _sink[0]([(bytes(body.payload), b"")])
    return _created(201)


@post("/durable/v1/records:batch", status_code=200, request_max_body_size=32 * 1024 * 1024)
async def durable_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    items = _decode_batch(await request.body()).records
    await _sink[0]([(bytes(_decode(raw).payload), b"") for raw in items])
    return _created(200)


@post("/floor/v1/records", status_code=201)
async def floor(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    body = _decode(await request.body())
    await _sink[0]([_floor(bytes(body.payload))])
    return _created(201)


@post("/floor/v1/records:batch", status_code=200, request_max_body_size=32 * 1024 * 1024)
async def floor_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    items = _decode_batch(await request.body()).records
    await _sink[0]([_floor(bytes(_decode(raw).payload)) for raw in items])
    return _created(200)


tune_collector()  # the service's own collector settings, as recordseal.web.asgi applies them
app = Litestar([durable, durable_batch, floor, floor_batch], lifespan=[lifespan])

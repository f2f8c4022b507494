"""References for the load script between the trivial endpoint and the real service.

``/durable/...`` decodes the body like the trivial endpoint, then stores the raw payload in one
SQLite table through the service's own group-commit writer (WAL, synchronous=FULL, fsync before
the answer).

``/floor/...`` does the least any implementation of the spec must do per record, each step
with the service's own fastest part: the commitment (native core), AES-256-GCM of the
canonical payload, an Ed25519 signature over a header-sized message (native), and the same
durable write. No header assembly, chain, subject lookup, idempotency or sealing: its rate is
an upper bound for ``POST /v1/records`` on this machine and stack.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from litestar import Litestar, Request, Response, post

from recordseal._native import Ed25519Signer
from recordseal.core import commit_record
from recordseal.storage.sqlite_schema import connect
from recordseal.storage.sqlite_writer import Batch, GroupCommitWriter
from recordseal.web.gc_tuning import tune_collector
from recordseal.web.schemas import BatchBody, RecordBody

_decode = msgspec.json.Decoder(RecordBody).decode
_decode_batch = msgspec.json.Decoder(BatchBody).decode
_PATH = Path(os.environ["DURABLE_DB"])
_writer: list[GroupCommitWriter] = []
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


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    conn = connect(_PATH)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS bodies (id INTEGER PRIMARY KEY, body BLOB, signature BLOB)"
    )
    # The writer's batch always updates the stream heads it advanced (none here).
    conn.execute("CREATE TABLE IF NOT EXISTS streams (id INTEGER PRIMARY KEY, next_seq, head)")
    conn.close()
    _writer.append(GroupCommitWriter(_PATH))
    yield
    await _writer[0].stop()


def _created(status: int) -> Response[bytes]:
    return Response(b'{"ok":true}', status_code=status, media_type="application/json")


@post("/durable/v1/records", status_code=201)
async def durable(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    body = _decode(await request.body())
    await _writer[0].submit(_insert([(bytes(body.payload), b"")]))
    return _created(201)


@post("/durable/v1/records:batch", status_code=200, request_max_body_size=32 * 1024 * 1024)
async def durable_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    items = _decode_batch(await request.body()).records
    await _writer[0].submit(_insert([(bytes(_decode(raw).payload), b"") for raw in items]))
    return _created(200)


@post("/floor/v1/records", status_code=201)
async def floor(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    body = _decode(await request.body())
    await _writer[0].submit(_insert([_floor(bytes(body.payload))]))
    return _created(201)


@post("/floor/v1/records:batch", status_code=200, request_max_body_size=32 * 1024 * 1024)
async def floor_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    items = _decode_batch(await request.body()).records
    await _writer[0].submit(_insert([_floor(bytes(_decode(raw).payload)) for raw in items]))
    return _created(200)


tune_collector()  # the service's own collector settings, as recordseal.web.asgi applies them
app = Litestar([durable, durable_batch, floor, floor_batch], lifespan=[lifespan])

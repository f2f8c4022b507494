"""What the record API pays for refusing frozen tenants (issue 30): every ingest call asks
``TenantStates`` whether its tenant is active, which reads the tenant's row at most once a
second per process. Four cases, each one round on the same event loop:

- ``token_check``: the bearer token's check of every request (``TokenService.tenant_of``,
  cached), the reference: the same kind of per-request cached lookup;
- ``frozen_check``: the frozen-tenant check as ingest makes it (cached);
- ``frozen_read``: the same with no cache (one indexed SQLite read each time: what a
  process pays once a second per tenant);
- ``ingest_one``: one record through ``RecordService.post_record`` on SQLite (check included).

Report the medians as ratios against ``token_check`` (and ``frozen_check`` against
``ingest_one``) measured in the same run.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.continuity_support import fresh_continuity
from tests.ingesting import record_body

from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.services.records import RecordService
from recordseal.services.tenant_states import TenantStates
from recordseal.services.tokens import TokenService
from recordseal.storage.base import Store
from recordseal.storage.sqlite import SQLiteStore


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    yield running
    running.close()


@pytest.fixture(scope="module")
def store(loop: asyncio.AbstractEventLoop) -> Iterator[tuple[Store, str]]:
    """A SQLite store with tenant ``acme`` (registered by its token) and its token."""
    with tempfile.TemporaryDirectory() as folder:
        opened = SQLiteStore(Path(folder) / "recordseal.sqlite3")
        loop.run_until_complete(opened.open())
        token = loop.run_until_complete(TokenService(opened.tokens).create("acme"))
        try:
            yield opened, token
        finally:
            loop.run_until_complete(opened.close())


def test_token_check(benchmark: Any, loop: asyncio.AbstractEventLoop, store: Any) -> None:
    opened, token = store
    tokens = TokenService(opened.tokens, cache_seconds=3600)
    bearer = f"Bearer {token}"
    assert benchmark(lambda: loop.run_until_complete(tokens.tenant_of(bearer))) == "acme"


def test_frozen_check(benchmark: Any, loop: asyncio.AbstractEventLoop, store: Any) -> None:
    states = TenantStates(store[0].hierarchy, cache_seconds=3600)
    assert benchmark(lambda: loop.run_until_complete(states.active("acme"))) is True


def test_frozen_read(benchmark: Any, loop: asyncio.AbstractEventLoop, store: Any) -> None:
    states = TenantStates(store[0].hierarchy, cache_seconds=0)
    assert benchmark(lambda: loop.run_until_complete(states.active("acme"))) is True


def test_ingest_one(benchmark: Any, loop: asyncio.AbstractEventLoop, store: Any) -> None:
    opened, _ = store
    signer = HeaderSigner.from_seed(b"s" * 32)
    records = RecordService(opened, KeyWrapper(b"k" * 32), signer, continuity=fresh_continuity())
    loop.run_until_complete(records.create_stream("acme", "orders", None, False))
    count = iter(range(10**9))

    def one() -> object:
        n = next(count)
        body = record_body("orders", "order.placed", "2026-11-21T08:00:00Z", f"c-{n % 50}",
                           b'{"amount": %d}' % n)  # fmt: skip
        return loop.run_until_complete(records.post_record("acme", body))

    benchmark(one)

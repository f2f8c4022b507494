"""What a panel request pays for reading its state from the database (issue 16).

Each panel request verifies its cookie, reads the sign-out epochs of its scopes and, for a
legacy session, its passkey role. Before, the epoch and the roles were in the worker's
memory (so a worker did not see another's sign-in). Three cases, each one round on the same
event loop, so the loop's own cost is in all of them:

- ``memory``: the cookie's signature and a dict lookup (what the old per-worker path cost);
- ``sqlite``: the same through the SQLite store (two indexed reads);
- ``postgres``: the same through PostgreSQL on this machine (two round trips).

Report the medians as ratios against ``memory`` measured in the same run.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recordseal.panel.cookies import CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession
from recordseal.panel.tenants import InMemoryTenantStore
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.storage.panel import PasskeyRow
from recordseal.web.panel.context import PanelContext

KEYRING = CookieKeyring(SigningKey("panel-1", b"k" * 32))
COOKIE = KEYRING.issue(LegacySession("operator-1", int(time.time()) + 3600, 3))


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    yield running
    running.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """The tests' throwaway PostgreSQL cluster (tests/pg_cluster.py, from the repository)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.pg_cluster import Cluster

    started = Cluster.start()
    try:
        yield started
    finally:
        started.stop()


def _opened(loop: asyncio.AbstractEventLoop, settings: Settings) -> Store:
    store = open_store(settings)
    loop.run_until_complete(store.open())
    passkey = PasskeyRow(b"cred", "operator-1", b"key", 0, "operator", time.time())
    loop.run_until_complete(store.panel.add_passkeys([passkey]))
    loop.run_until_complete(store.panel.adopt_signout_epoch("", 3))
    return store


def _authorize(loop: asyncio.AbstractEventLoop, context: PanelContext) -> object:
    async def once() -> object:
        session = await context.verify(COOKIE)
        assert session is not None
        return await context.passkey_role("operator-1")

    return loop.run_until_complete(once())


def test_panel_auth_memory(benchmark, loop) -> None:
    roles = {"operator-1": "operator"}

    async def once() -> object:
        session = KEYRING.verify(COOKIE, time.time(), epoch=3)
        assert session is not None
        return roles.get("operator-1")

    assert benchmark(lambda: loop.run_until_complete(once())) == "operator"


def test_panel_auth_sqlite(benchmark, loop) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = _opened(loop, Settings(data_dir=Path(folder)))
        try:
            context = PanelContext(InMemoryTenantStore(), KEYRING, store.panel)
            assert benchmark(_authorize, loop, context) == "operator"
        finally:
            loop.run_until_complete(store.close())


def test_panel_auth_postgres(benchmark, loop, cluster) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = _opened(loop, Settings(data_dir=Path(folder), database_url=cluster.url()))
        try:
            context = PanelContext(InMemoryTenantStore(), KEYRING, store.panel)
            assert benchmark(_authorize, loop, context) == "operator"
        finally:
            loop.run_until_complete(store.close())

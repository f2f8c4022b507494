"""Helpers for panel tests: the real panel store (SQLite in a temporary directory) behind an
in-process app, and passkeys with a role put into it the way a registration would."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.sessions import Role
from recordseal.storage.panel import PanelStore, PasskeyRow
from recordseal.storage.sqlite import SQLiteStore


def passkey_of(user_id: str, role: Role) -> PasskeyRow:
    """A stored passkey of ``user_id`` (its key is never used: sessions are minted)."""
    return PasskeyRow(secrets.token_bytes(16), user_id, b"unused-cose-key", 0, role, time.time())


async def grant(store: PanelStore, roles: dict[str, Role]) -> None:
    """Give each user a passkey with its role, as a registration link would."""
    await store.add_passkeys([passkey_of(user, role) for user, role in roles.items()])


def grant_in(
    client: TestClient[Any],
    user_id: str,
    role: Role = "operator",
    store: PanelStore | None = None,
) -> None:
    """``grant`` on the panel store of a running app (on the app's own event loop); the
    store is the app's unless given."""
    panel_store = store or client.app.state.panel.store
    client.blocking_portal.call(grant, panel_store, {user_id: role})


class PanelDatabase:
    """A SQLite store in ``directory`` (a test's temporary directory, which pytest removes),
    opened and closed by an app's lifespan."""

    def __init__(self, directory: Path, roles: dict[str, Role] | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "recordseal.sqlite3"
        self.backend = SQLiteStore(self.path)
        self.roles = dict(roles or {})

    @property
    def store(self) -> PanelStore:
        return self.backend.panel

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        await self.backend.open()
        await grant(self.store, self.roles)
        try:
            yield
        finally:
            await self.backend.close()

    def query(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        """Rows straight from the database file (what another process would read)."""
        with sqlite3.connect(self.path) as db:
            return db.execute(sql, parameters).fetchall()

    def epochs(self) -> dict[str, int]:
        """The sign-out epoch of every scope that has one."""
        return dict(self.query("SELECT scope, epoch FROM panel_signout"))  # type: ignore[arg-type]

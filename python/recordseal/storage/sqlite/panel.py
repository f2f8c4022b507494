"""The panel's part of the SQLite store (``PanelStore``): the SQL only.

Writes go through the store's group-commit writer (so they share its cross-process lock and
never stall ingest on SQLite's busy handler); reads use the store's reader connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from recordseal.storage.panel import (
    PASSKEY_COLUMNS,
    PROVIDER_COLUMNS,
    AuditEntry,
    LinkRow,
    LinkUse,
    ManifestStep,
    PasskeyRow,
    ProviderRow,
    RoleName,
)
from recordseal.storage.single_use import SingleUse, SingleUseRows, sqlite_marks
from recordseal.storage.sqlite.database import SQLiteDatabase
from recordseal.storage.sqlite.writer import Batch

R = TypeVar("R")

_MANIFEST_STEPS = {
    # (SQL, parameters from (digest, expected))
    "start": "UPDATE fleet_manifest_head SET digest = ?, refused = NULL WHERE digest IS NOT ?",
    "applied": (
        "UPDATE fleet_manifest_head SET digest = ?, refused = NULL"
        " WHERE digest IS ? AND NOT (digest IS ? AND refused IS NULL)"
    ),
    "refused": (
        "UPDATE fleet_manifest_head SET refused = ? WHERE digest IS ? AND refused IS NOT ?"
    ),
}


def _step_parameters(step: ManifestStep) -> tuple[Any, ...]:
    if step.kind == "start":
        return (step.digest, step.digest)
    return (step.digest, step.expected, step.digest)


def _passkey(row: Sequence[Any]) -> PasskeyRow:
    credential_id, user_id, public_key, sign_count, role, created_at = row
    return PasskeyRow(
        bytes(credential_id), user_id, bytes(public_key), sign_count, role, created_at
    )


def _provider(row: Sequence[Any]) -> ProviderRow:
    provider_id, tenant, organization, config, secret, registered_at = row
    return ProviderRow(
        provider_id,
        tenant,
        organization,
        bytes(config),
        bytes(secret) if secret is not None else None,
        registered_at,
    )


class SQLitePanelStore(SingleUseRows):
    """``PanelStore`` on the database of a ``SQLiteStore``, through its writer and reader."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        return self._db.read(sql, params)

    async def _submit(self, job: Callable[[sqlite3.Connection], Any]) -> Any:
        def run(conn: sqlite3.Connection, batch: Batch) -> Any:
            return job(conn)

        return await self._db.writer.submit(run)

    # -- passkeys, links and ceremonies -------------------------------------------------

    async def add_link(self, link: LinkRow) -> None:
        await self._submit(
            lambda conn: conn.execute(
                "INSERT OR IGNORE INTO panel_links"
                " (token_hash, role, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)",
                (link.token_hash, link.role, link.created_at, link.expires_at, link.used_at),
            )
        )

    async def link(self, token_hash: bytes) -> LinkRow | None:
        rows = self._read(
            "SELECT token_hash, role, created_at, expires_at, used_at FROM panel_links"
            " WHERE token_hash = ?",
            (token_hash,),
        )
        if not rows:
            return None
        found, role, created_at, expires_at, used_at = rows[0]
        return LinkRow(bytes(found), role, created_at, expires_at, used_at)

    async def register_passkey(self, token_hash: bytes, passkey: PasskeyRow) -> LinkUse:
        def job(conn: sqlite3.Connection) -> LinkUse:
            row = conn.execute(
                "SELECT role, expires_at, used_at FROM panel_links WHERE token_hash = ?",
                (token_hash,),
            ).fetchone()
            if row is None:
                return LinkUse("unknown", None)
            role, expires_at, used_at = row
            if used_at is not None:
                return LinkUse("used", role)
            if not passkey.created_at < expires_at:
                return LinkUse("expired", role)
            conn.execute(
                "UPDATE panel_links SET used_at = ? WHERE token_hash = ?",
                (passkey.created_at, token_hash),
            )
            conn.execute(
                f"INSERT INTO panel_passkeys ({PASSKEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    passkey.credential_id,
                    passkey.user_id,
                    passkey.public_key,
                    passkey.sign_count,
                    role,
                    passkey.created_at,
                ),
            )
            return LinkUse("valid", role)

        use: LinkUse = await self._submit(job)
        return use

    async def passkey(self, credential_id: bytes) -> PasskeyRow | None:
        rows = self._read(
            f"SELECT {PASSKEY_COLUMNS} FROM panel_passkeys WHERE credential_id = ?",
            (credential_id,),
        )
        return _passkey(rows[0]) if rows else None

    async def update_sign_count(self, credential_id: bytes, sign_count: int) -> None:
        await self._submit(
            lambda conn: conn.execute(
                "UPDATE panel_passkeys SET sign_count = ? WHERE credential_id = ?",
                (sign_count, credential_id),
            )
        )

    async def passkey_roles(self, user_id: str) -> list[RoleName]:
        rows = self._read(
            "SELECT DISTINCT role FROM panel_passkeys WHERE user_id = ? ORDER BY role", (user_id,)
        )
        return [role for (role,) in rows]

    async def has_passkeys(self) -> bool:
        return bool(self._read("SELECT EXISTS (SELECT 1 FROM panel_passkeys)", ())[0][0])

    async def add_passkeys(self, passkeys: Sequence[PasskeyRow]) -> int:
        def job(conn: sqlite3.Connection) -> int:
            added = 0
            for p in passkeys:
                added += conn.execute(
                    f"INSERT OR IGNORE INTO panel_passkeys ({PASSKEY_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (p.credential_id, p.user_id, p.public_key, p.sign_count, p.role, p.created_at),
                ).rowcount
            return added

        added: int = await self._submit(job)
        return added

    # -- ceremonies and pending sso sign-ins (``SingleUseRows``) ------------------------

    async def _put(self, kind: SingleUse[R], key: object, row: R, now: float) -> None:
        def job(conn: sqlite3.Connection) -> None:
            conn.execute(kind.purge(sqlite_marks), (now,))
            conn.execute(kind.put(sqlite_marks), kind.values(key, row))

        await self._submit(job)

    async def _take(self, kind: SingleUse[R], key: object) -> R | None:
        def job(conn: sqlite3.Connection) -> R | None:
            row = conn.execute(kind.take(sqlite_marks), (key,)).fetchone()
            return None if row is None else kind.read(row)

        taken: R | None = await self._submit(job)
        return taken

    async def pending_login_count(self) -> int:
        count: int = self._read("SELECT count(*) FROM panel_pending_logins", ())[0][0]
        return count

    # -- providers -----------------------------------------------------------------------

    def _provider_values(self, p: ProviderRow) -> tuple[Any, ...]:
        return (p.provider_id, p.tenant, p.organization, p.config, p.secret, p.registered_at)

    async def add_provider(self, provider: ProviderRow) -> bool:
        added: int = await self._submit(
            lambda conn: (
                conn.execute(
                    f"INSERT INTO panel_providers ({PROVIDER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant,"
                    " organization = excluded.organization, config = excluded.config,"
                    " secret = excluded.secret, registered_at = excluded.registered_at,"
                    " removed_at = NULL WHERE panel_providers.removed_at IS NOT NULL",
                    self._provider_values(provider),
                ).rowcount
            )
        )
        return added > 0

    async def remove_provider(self, provider_id: str, now: float) -> bool:
        removed: int = await self._submit(
            lambda conn: (
                conn.execute(
                    "UPDATE panel_providers SET removed_at = ? WHERE id = ? AND removed_at IS NULL",
                    (now, provider_id),
                ).rowcount
            )
        )
        return removed > 0

    async def import_provider(self, provider: ProviderRow) -> bool:
        added: int = await self._submit(
            lambda conn: (
                conn.execute(
                    f"INSERT OR IGNORE INTO panel_providers ({PROVIDER_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    self._provider_values(provider),
                ).rowcount
            )
        )
        return added > 0

    async def provider(self, provider_id: str) -> ProviderRow | None:
        rows = self._read(
            f"SELECT {PROVIDER_COLUMNS} FROM panel_providers WHERE id = ? AND removed_at IS NULL",
            (provider_id,),
        )
        return _provider(rows[0]) if rows else None

    async def providers(self) -> list[ProviderRow]:
        rows = self._read(
            f"SELECT {PROVIDER_COLUMNS} FROM panel_providers WHERE removed_at IS NULL ORDER BY id",
            (),
        )
        return [_provider(row) for row in rows]

    # -- sign-out epochs -----------------------------------------------------------------

    async def signout_epochs(self, scopes: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(scopes))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self._read(
            f"SELECT scope, epoch FROM panel_signout WHERE scope IN ({marks})", tuple(wanted)
        )
        return {scope: epoch for scope, epoch in rows}

    async def current_signout_epoch(self) -> int:
        epoch: int = self._read("SELECT coalesce(max(epoch), 0) FROM panel_signout", ())[0][0]
        return epoch

    async def raise_signout_epoch(self, scope: str) -> int:
        def job(conn: sqlite3.Connection) -> int:
            (epoch,) = conn.execute(
                "INSERT INTO panel_signout (scope, epoch)"
                " SELECT ?, coalesce(max(epoch), 0) + 1 FROM panel_signout WHERE true"
                " ON CONFLICT (scope) DO UPDATE SET epoch = excluded.epoch RETURNING epoch",
                (scope,),
            ).fetchone()
            return int(epoch)

        epoch: int = await self._submit(job)
        return epoch

    async def adopt_signout_epoch(self, scope: str, epoch: int) -> None:
        await self._submit(
            lambda conn: conn.execute(
                "INSERT INTO panel_signout (scope, epoch) VALUES (?, ?)"
                " ON CONFLICT (scope) DO UPDATE SET epoch = max(epoch, excluded.epoch)",
                (scope, epoch),
            )
        )

    # -- the fleet audit stream ----------------------------------------------------------

    async def record_audit(
        self, entries: Sequence[AuditEntry], step: ManifestStep | None = None
    ) -> list[AuditEntry]:
        def job(conn: sqlite3.Connection) -> list[AuditEntry]:
            if step is not None:
                moved = conn.execute(_MANIFEST_STEPS[step.kind], _step_parameters(step))
                if moved.rowcount == 0:
                    return []
            return [
                entry
                for entry in entries
                if conn.execute(
                    "INSERT OR IGNORE INTO fleet_audit (key, at, event, tenant, fleet, line)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (entry.key, entry.at, entry.event, entry.tenant, entry.fleet, entry.line),
                ).rowcount
            ]

        recorded: list[AuditEntry] = await self._submit(job)
        return recorded

    async def audit_entries(
        self, *, tenant: str | None = None, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, AuditEntry]]:
        where = "id > ?" + (" AND tenant = ?" if tenant is not None else "")
        parameters = (after, tenant, limit) if tenant is not None else (after, limit)
        rows = self._read(
            f"SELECT id, event, fleet, tenant, at, line, key FROM fleet_audit WHERE {where}"
            " ORDER BY id LIMIT ?",
            parameters,
        )
        return [(row[0], AuditEntry(*row[1:])) for row in rows]

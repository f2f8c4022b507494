"""The panel's part of the PostgreSQL store (``PanelStore``): the SQL only.

Every method is one statement or one transaction from the store's connection pool, so every
process on the database sees each write as soon as it commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import asyncpg

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
from recordseal.storage.postgres.database import PostgresDatabase
from recordseal.storage.single_use import SingleUse, SingleUseRows, postgres_marks

R = TypeVar("R")

_MANIFEST_STEPS = {
    "start": (
        "UPDATE fleet_manifest_head SET digest = $1, refused = NULL"
        " WHERE digest IS DISTINCT FROM $1"
    ),
    "applied": (
        "UPDATE fleet_manifest_head SET digest = $1, refused = NULL"
        " WHERE digest IS NOT DISTINCT FROM $2 AND NOT (digest = $1 AND refused IS NULL)"
    ),
    "refused": (
        "UPDATE fleet_manifest_head SET refused = $1"
        " WHERE digest IS NOT DISTINCT FROM $2 AND refused IS DISTINCT FROM $1"
    ),
}


def _step_parameters(step: ManifestStep) -> tuple[Any, ...]:
    return (step.digest,) if step.kind == "start" else (step.digest, step.expected)


def _provider(row: asyncpg.Record) -> ProviderRow:
    return ProviderRow(*row)


class PostgresPanelStore(SingleUseRows):
    """``PanelStore`` on the database of a ``PostgresStore``, through its pool."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    def _pool(self) -> asyncpg.Pool:
        return self._db.pool

    # -- passkeys, links and ceremonies -------------------------------------------------

    async def add_link(self, link: LinkRow) -> None:
        await self._pool().execute(
            "INSERT INTO panel_links (token_hash, role, created_at, expires_at, used_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            link.token_hash,
            link.role,
            link.created_at,
            link.expires_at,
            link.used_at,
        )

    async def link(self, token_hash: bytes) -> LinkRow | None:
        row = await self._pool().fetchrow(
            "SELECT token_hash, role, created_at, expires_at, used_at FROM panel_links"
            " WHERE token_hash = $1",
            token_hash,
        )
        return LinkRow(*row) if row else None

    async def register_passkey(self, token_hash: bytes, passkey: PasskeyRow) -> LinkUse:
        async with self._pool().acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "SELECT role, expires_at, used_at FROM panel_links WHERE token_hash = $1"
                " FOR UPDATE",
                token_hash,
            )
            if row is None:
                return LinkUse("unknown", None)
            role, expires_at, used_at = row
            if used_at is not None:
                return LinkUse("used", role)
            if not passkey.created_at < expires_at:
                return LinkUse("expired", role)
            await conn.execute(
                "UPDATE panel_links SET used_at = $1 WHERE token_hash = $2",
                passkey.created_at,
                token_hash,
            )
            await conn.execute(
                f"INSERT INTO panel_passkeys ({PASSKEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)",
                passkey.credential_id,
                passkey.user_id,
                passkey.public_key,
                passkey.sign_count,
                role,
                passkey.created_at,
            )
            return LinkUse("valid", role)

    async def passkey(self, credential_id: bytes) -> PasskeyRow | None:
        row = await self._pool().fetchrow(
            f"SELECT {PASSKEY_COLUMNS} FROM panel_passkeys WHERE credential_id = $1", credential_id
        )
        return PasskeyRow(*row) if row else None

    async def update_sign_count(self, credential_id: bytes, sign_count: int) -> None:
        await self._pool().execute(
            "UPDATE panel_passkeys SET sign_count = $1 WHERE credential_id = $2",
            sign_count,
            credential_id,
        )

    async def passkey_roles(self, user_id: str) -> list[RoleName]:
        rows = await self._pool().fetch(
            "SELECT DISTINCT role FROM panel_passkeys WHERE user_id = $1 ORDER BY role", user_id
        )
        return [row[0] for row in rows]

    async def has_passkeys(self) -> bool:
        found: bool = await self._pool().fetchval("SELECT EXISTS (SELECT 1 FROM panel_passkeys)")
        return found

    async def add_passkeys(self, passkeys: Sequence[PasskeyRow]) -> int:
        async with self._pool().acquire() as conn, conn.transaction():
            added = 0
            for p in passkeys:
                status = await conn.execute(
                    f"INSERT INTO panel_passkeys ({PASSKEY_COLUMNS})"
                    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                    p.credential_id,
                    p.user_id,
                    p.public_key,
                    p.sign_count,
                    p.role,
                    p.created_at,
                )
                added += status == "INSERT 0 1"
            return added

    # -- ceremonies and pending sso sign-ins (``SingleUseRows``) ------------------------

    async def _put(self, kind: SingleUse[R], key: object, row: R, now: float) -> None:
        async with self._pool().acquire() as conn, conn.transaction():
            await conn.execute(kind.purge(postgres_marks), now)
            await conn.execute(kind.put(postgres_marks), *kind.values(key, row))

    async def _take(self, kind: SingleUse[R], key: object) -> R | None:
        row = await self._pool().fetchrow(kind.take(postgres_marks), key)
        return None if row is None else kind.read(row)

    async def pending_login_count(self) -> int:
        count: int = await self._pool().fetchval("SELECT count(*) FROM panel_pending_logins")
        return count

    # -- providers -----------------------------------------------------------------------

    async def add_provider(self, provider: ProviderRow) -> bool:
        row = await self._pool().fetchrow(
            f"INSERT INTO panel_providers ({PROVIDER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
            " ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant,"
            " organization = excluded.organization, config = excluded.config,"
            " secret = excluded.secret, registered_at = excluded.registered_at,"
            " removed_at = NULL WHERE panel_providers.removed_at IS NOT NULL RETURNING id",
            *_values(provider),
        )
        return row is not None

    async def remove_provider(self, provider_id: str, now: float) -> bool:
        status = await self._pool().execute(
            "UPDATE panel_providers SET removed_at = $1 WHERE id = $2 AND removed_at IS NULL",
            now,
            provider_id,
        )
        return status != "UPDATE 0"

    async def import_provider(self, provider: ProviderRow) -> bool:
        status = await self._pool().execute(
            f"INSERT INTO panel_providers ({PROVIDER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
            " ON CONFLICT DO NOTHING",
            *_values(provider),
        )
        return status == "INSERT 0 1"

    async def provider(self, provider_id: str) -> ProviderRow | None:
        row = await self._pool().fetchrow(
            f"SELECT {PROVIDER_COLUMNS} FROM panel_providers WHERE id = $1 AND removed_at IS NULL",
            provider_id,
        )
        return _provider(row) if row else None

    async def providers(self) -> list[ProviderRow]:
        rows = await self._pool().fetch(
            f"SELECT {PROVIDER_COLUMNS} FROM panel_providers WHERE removed_at IS NULL ORDER BY id"
        )
        return [_provider(row) for row in rows]

    # -- sign-out epochs -----------------------------------------------------------------

    async def signout_epochs(self, scopes: Sequence[str]) -> dict[str, int]:
        rows = await self._pool().fetch(
            "SELECT scope, epoch FROM panel_signout WHERE scope = ANY($1::text[])",
            list(dict.fromkeys(scopes)),
        )
        return {scope: epoch for scope, epoch in rows}

    async def current_signout_epoch(self) -> int:
        epoch: int = await self._pool().fetchval(
            "SELECT coalesce(max(epoch), 0) FROM panel_signout"
        )
        return epoch

    async def raise_signout_epoch(self, scope: str) -> int:
        epoch: int = await self._pool().fetchval(
            "INSERT INTO panel_signout (scope, epoch)"
            " SELECT $1, coalesce(max(epoch), 0) + 1 FROM panel_signout"
            " ON CONFLICT (scope) DO UPDATE SET epoch = excluded.epoch RETURNING epoch",
            scope,
        )
        return epoch

    async def adopt_signout_epoch(self, scope: str, epoch: int) -> None:
        await self._pool().execute(
            "INSERT INTO panel_signout (scope, epoch) VALUES ($1, $2)"
            " ON CONFLICT (scope) DO UPDATE"
            " SET epoch = greatest(panel_signout.epoch, excluded.epoch)",
            scope,
            epoch,
        )

    # -- the fleet audit stream ----------------------------------------------------------

    async def record_audit(
        self, entries: Sequence[AuditEntry], step: ManifestStep | None = None
    ) -> list[AuditEntry]:
        async with self._pool().acquire() as conn, conn.transaction():
            if step is not None:
                moved = await conn.execute(_MANIFEST_STEPS[step.kind], *_step_parameters(step))
                if moved == "UPDATE 0":
                    return []
            recorded = []
            for entry in entries:
                inserted = await conn.fetchval(
                    "INSERT INTO fleet_audit (key, at, event, tenant, fleet, line)"
                    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id",
                    entry.key,
                    entry.at,
                    entry.event,
                    entry.tenant,
                    entry.fleet,
                    entry.line,
                )
                if inserted is not None:
                    recorded.append(entry)
            return recorded

    async def audit_entries(
        self, *, tenant: str | None = None, after: int = 0, limit: int = 1000
    ) -> list[tuple[int, AuditEntry]]:
        rows = await self._pool().fetch(
            "SELECT id, event, fleet, tenant, at, line, key FROM fleet_audit"
            " WHERE id > $1 AND ($2::text IS NULL OR tenant = $2) ORDER BY id LIMIT $3",
            after,
            tenant,
            limit,
        )
        return [(row[0], AuditEntry(*row[1:])) for row in rows]


def _values(p: ProviderRow) -> tuple[Any, ...]:
    return (p.provider_id, p.tenant, p.organization, p.config, p.secret, p.registered_at)

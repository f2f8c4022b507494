"""The tokens part of the PostgreSQL store."""

from __future__ import annotations

from recordseal.storage.postgres.database import PostgresDatabase
from recordseal.storage.rows import TokenRow


class PostgresTokens:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> bool:
        async with self._db.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO tenants (id, display_name, contact_email, active, source, created_at)"
                " VALUES ($1, $1, NULL, true, 'implicit', $2) ON CONFLICT DO NOTHING",
                tenant,
                now,
            )
            # FOR SHARE: a freeze committing meanwhile waits for this token, or this for it.
            active = await conn.fetchval(
                "SELECT active FROM tenants WHERE id = $1 FOR SHARE", tenant
            )
            if not active:
                return False
            await conn.execute(
                "INSERT INTO tokens (token_hash, tenant, label, created_at)"
                " VALUES ($1, $2, $3, $4)",
                token_hash,
                tenant,
                label,
                now,
            )
            return True

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        tenant: str | None = await self._db.pool.fetchval(
            "SELECT tenant FROM tokens WHERE token_hash = $1 AND revoked_at IS NULL", token_hash
        )
        return tenant

    async def list_tokens(self, tenant: str | None = None) -> list[TokenRow]:
        rows = await self._db.pool.fetch(
            "SELECT token_hash, tenant, label, created_at, revoked_at, last_used_at FROM tokens"
            " WHERE $1::text IS NULL OR tenant = $1 ORDER BY tenant, created_at",
            tenant,
        )
        return [TokenRow(row[0][:8].hex(), *row[1:]) for row in rows]

    async def revoke_token(self, tenant: str | None, token_id: str, now: str) -> int:
        status = await self._db.pool.execute(
            "UPDATE tokens SET revoked_at = $1 WHERE ($2::text IS NULL OR tenant = $2)"
            " AND revoked_at IS NULL AND encode(substr(token_hash, 1, 8), 'hex') = lower($3)",
            now,
            tenant,
            token_id,
        )
        return int(status.split()[-1])

    async def mark_used(self, token_hashes: list[bytes], now: str) -> None:
        await self._db.pool.execute(
            "UPDATE tokens SET last_used_at = $1 WHERE token_hash = ANY($2::bytea[])"
            " AND (last_used_at IS NULL OR last_used_at < $1)",
            now,
            token_hashes,
        )

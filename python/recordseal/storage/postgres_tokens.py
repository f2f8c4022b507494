"""The tokens part of the PostgreSQL store."""

from __future__ import annotations

from recordseal.storage.postgres_database import PostgresDatabase
from recordseal.storage.rows import TokenRow


class PostgresTokens:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None:
        await self._db.pool.execute(
            "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES ($1, $2, $3, $4)",
            token_hash,
            tenant,
            label,
            now,
        )

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        tenant: str | None = await self._db.pool.fetchval(
            "SELECT tenant FROM tokens WHERE token_hash = $1 AND revoked_at IS NULL", token_hash
        )
        return tenant

    async def list_tokens(self, tenant: str) -> list[TokenRow]:
        rows = await self._db.pool.fetch(
            "SELECT token_hash, tenant, label, created_at, revoked_at FROM tokens"
            " WHERE tenant = $1 ORDER BY created_at",
            tenant,
        )
        return [TokenRow(h[:8].hex(), t, label, c, r) for h, t, label, c, r in rows]

    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        status = await self._db.pool.execute(
            "UPDATE tokens SET revoked_at = $1 WHERE tenant = $2 AND revoked_at IS NULL"
            " AND encode(substr(token_hash, 1, 8), 'hex') = lower($3)",
            now,
            tenant,
            token_id,
        )
        return status != "UPDATE 0"

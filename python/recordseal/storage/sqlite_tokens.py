"""The tokens part of the SQLite store."""

from __future__ import annotations

import sqlite3

from recordseal.storage.rows import TokenRow
from recordseal.storage.sqlite_database import SQLiteDatabase
from recordseal.storage.sqlite_writer import Batch


class SQLiteTokens:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.execute(
                "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES (?, ?, ?, ?)",
                (token_hash, tenant, label, now),
            )

        await self._db.writer.submit(job)

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        rows = self._db.read(
            "SELECT tenant FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )
        return rows[0][0] if rows else None

    async def list_tokens(self, tenant: str) -> list[TokenRow]:
        rows = self._db.read(
            "SELECT token_hash, tenant, label, created_at, revoked_at FROM tokens"
            " WHERE tenant = ? ORDER BY created_at",
            (tenant,),
        )
        return [TokenRow(h[:8].hex(), t, label, c, r) for h, t, label, c, r in rows]

    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        def job(conn: sqlite3.Connection, batch: Batch) -> bool:
            cursor = conn.execute(
                "UPDATE tokens SET revoked_at = ? WHERE tenant = ? AND revoked_at IS NULL"
                " AND hex(substr(token_hash, 1, 8)) = upper(?)",
                (now, tenant, token_id),
            )
            return cursor.rowcount > 0

        return await self._db.writer.submit(job)

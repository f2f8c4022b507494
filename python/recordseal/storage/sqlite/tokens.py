"""The tokens part of the SQLite store."""

from __future__ import annotations

import sqlite3

from recordseal.storage.rows import TokenRow
from recordseal.storage.sqlite.database import SQLiteDatabase
from recordseal.storage.sqlite.writer import Batch


class SQLiteTokens:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> bool:
        def job(conn: sqlite3.Connection, batch: Batch) -> bool:
            conn.execute(
                "INSERT OR IGNORE INTO tenants"
                " (id, display_name, contact_email, active, source, created_at)"
                " VALUES (?, ?, NULL, 1, 'implicit', ?)",
                (tenant, tenant, now),
            )
            (active,) = conn.execute(
                "SELECT active FROM tenants WHERE id = ?", (tenant,)
            ).fetchone()
            if not active:
                return False
            conn.execute(
                "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES (?, ?, ?, ?)",
                (token_hash, tenant, label, now),
            )
            return True

        stored: bool = await self._db.writer.submit(job)
        return stored

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        rows = self._db.read(
            "SELECT tenant FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )
        return rows[0][0] if rows else None

    async def list_tokens(self, tenant: str | None = None) -> list[TokenRow]:
        rows = self._db.read(
            "SELECT token_hash, tenant, label, created_at, revoked_at, last_used_at FROM tokens"
            " WHERE ? IS NULL OR tenant = ? ORDER BY tenant, created_at",
            (tenant, tenant),
        )
        return [TokenRow(h[:8].hex(), *row) for h, *row in rows]

    async def revoke_token(self, tenant: str | None, token_id: str, now: str) -> int:
        def job(conn: sqlite3.Connection, batch: Batch) -> int:
            cursor = conn.execute(
                "UPDATE tokens SET revoked_at = ? WHERE (? IS NULL OR tenant = ?)"
                " AND revoked_at IS NULL AND hex(substr(token_hash, 1, 8)) = upper(?)",
                (now, tenant, tenant, token_id),
            )
            return cursor.rowcount

        return await self._db.writer.submit(job)

    async def mark_used(self, token_hashes: list[bytes], now: str) -> None:
        def job(conn: sqlite3.Connection, batch: Batch) -> None:
            conn.executemany(
                "UPDATE tokens SET last_used_at = ? WHERE token_hash = ?"
                " AND (last_used_at IS NULL OR last_used_at < ?)",
                [(now, token_hash, now) for token_hash in token_hashes],
            )

        await self._db.writer.submit(job)

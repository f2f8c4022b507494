"""Take a store's database back to an earlier schema version, its rows kept: each table is
made again as that version's migrations make it, and the columns it had then are copied
into it. A later migration's upgrade of real rows can then be tested on rows the current
code wrote (records signed and chained, logs sealed, checkpoints signed)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

import asyncpg

from recordseal.settings import Settings
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.sqlite import schema as sqlite_schema


def take_back(settings: Settings, version: int) -> None:
    """Put the database of ``settings`` at schema ``version`` (a log of no tenant is NULL
    there, as before the tenant led the keys)."""
    if settings.database_url:
        asyncio.run(_take_back_postgres(settings.database_url, version))
    else:
        _take_back_sqlite(settings.database_path, version)


def _take_back_sqlite(path: Path, version: int) -> None:
    earlier = sqlite3.connect(":memory:")
    for script in sqlite_schema.MIGRATIONS[:version]:
        for statement in script.split(";"):
            if statement.strip():
                earlier.execute(statement)
    tables = earlier.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"
    ).fetchall()
    indexes = [
        sql
        for (sql,) in earlier.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    ]
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN IMMEDIATE")
        for name, sql in tables:
            columns = ", ".join(row[1] for row in earlier.execute(f"PRAGMA table_info({name})"))
            made = re.sub(rf'^CREATE TABLE "?{name}"?', f"CREATE TABLE {name}_earlier", sql)
            conn.execute(made)
            conn.execute(
                f"INSERT INTO {name}_earlier ({columns}) SELECT {columns} FROM {name}"
                " ORDER BY rowid"
                if _has_rowid(conn, name)
                else f"INSERT INTO {name}_earlier ({columns}) SELECT {columns} FROM {name}"
            )
            conn.execute(f"DROP TABLE {name}")
            conn.execute(f"ALTER TABLE {name}_earlier RENAME TO {name}")
        earlier_names = {name for name, _ in tables}
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall():
            if name not in earlier_names | {"schema_version"}:  # made by a later migration
                conn.execute(f"DROP TABLE {name}")
        for sql in indexes:
            conn.execute(sql)
        conn.execute("UPDATE logs SET tenant = NULL WHERE tenant = ''")
        conn.execute("DELETE FROM schema_version WHERE version > ?", (version,))
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("COMMIT")
    finally:
        conn.close()
        earlier.close()


def _has_rowid(conn: sqlite3.Connection, name: str) -> bool:
    try:
        conn.execute(f"SELECT rowid FROM {name} LIMIT 0")
    except sqlite3.OperationalError:
        return False
    return True


async def _take_back_postgres(url: str, version: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        schema = await conn.fetchval("SELECT current_schema()")
        earlier = f"{schema}_earlier"
        await conn.execute(f"CREATE SCHEMA {earlier}")
        await conn.execute(f"SET search_path = {earlier}")
        await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
        for script in postgres_schema.MIGRATIONS[:version]:
            await conn.execute(script)
        await conn.execute("INSERT INTO schema_version SELECT generate_series(1, $1::int)", version)
        tables = [
            name
            for (name,) in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename"
                " <> 'schema_version'",
                earlier,
            )
        ]
        # Foreign keys and triggers are not checked while rows are copied in any order.
        await conn.execute("SET session_replication_role = replica")
        for name in tables:
            columns = ", ".join(
                row[0]
                for row in await conn.fetch(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
                    earlier,
                    name,
                )
            )
            await conn.execute(f"DELETE FROM {earlier}.{name}")
            await conn.execute(
                f"INSERT INTO {earlier}.{name} ({columns}) OVERRIDING SYSTEM VALUE"
                f" SELECT {columns} FROM {schema}.{name}"
            )
            for (column,) in await conn.fetch(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = $1"
                " AND table_name = $2 AND is_identity = 'YES'",
                earlier,
                name,
            ):
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{earlier}.{name}', '{column}'),"
                    f" (SELECT coalesce(max({column}), 0) + 1 FROM {earlier}.{name}), false)"
                )
        await conn.execute("SET session_replication_role = origin")
        await conn.execute(f"UPDATE {earlier}.logs SET tenant = NULL WHERE tenant = ''")
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")
        await conn.execute(f"ALTER SCHEMA {earlier} RENAME TO {schema}")
    finally:
        await conn.close()

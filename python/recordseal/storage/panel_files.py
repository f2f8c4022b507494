"""Readers of the panel files that earlier versions kept in the data directory, for their
one-time import into the database (``panel/legacy_import.py``):

- ``panel.sqlite3``: tables ``credentials`` (passkeys), ``links`` and ``challenges``;
- ``panel-sso.sqlite3``: table ``pending_logins``.

Both are opened as ordinary SQLite databases (so a write-ahead log left beside one is read
too) and closed before the caller renames them. A table of another layout is skipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recordseal.storage.panel import CeremonyRow, LinkRow, PasskeyRow, PendingLoginRow

_CREDENTIALS = ("credential_id", "user_id", "public_key", "sign_count", "role", "created_at")
_LINKS = ("token_hash", "role", "created_at", "expires_at", "used_at")
_CHALLENGES = ("state_id", "kind", "challenge", "user_id", "token_hash", "expires_at")
_PENDING = ("nonce_hash", "provider_ref", "return_url", "stash", "binding", "expires_at")


@dataclass
class PasskeyFile:
    """The rows of an earlier ``panel.sqlite3``."""

    passkeys: list[PasskeyRow] = field(default_factory=list)
    links: list[LinkRow] = field(default_factory=list)
    ceremonies: list[tuple[str, CeremonyRow]] = field(default_factory=list)


@contextmanager
def _database(path: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(path, timeout=10)) as db:
        yield db


def _rows(db: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Every row of ``table`` when it has exactly ``columns``, else none."""
    found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
    if found != columns:
        return []
    return list(db.execute(f"SELECT {', '.join(columns)} FROM {table}"))


def _blob(value: object) -> bytes | None:
    return bytes(value) if isinstance(value, bytes | bytearray | memoryview) else None


def read_passkey_file(path: Path) -> PasskeyFile:
    content = PasskeyFile()
    with _database(path) as db:
        for cid, user, key, count, role, created in _rows(db, "credentials", _CREDENTIALS):
            content.passkeys.append(
                PasskeyRow(bytes(cid), str(user), bytes(key), int(count), str(role), float(created))
            )
        for token_hash, role, created, expires, used in _rows(db, "links", _LINKS):
            content.links.append(
                LinkRow(
                    bytes(token_hash),
                    str(role),
                    float(created),
                    float(expires),
                    float(used) if used is not None else None,
                )
            )
        for state, kind, challenge, user, token_hash, expires in _rows(
            db, "challenges", _CHALLENGES
        ):
            ceremony = CeremonyRow(
                "register" if kind == "register" else "authenticate",
                bytes(challenge),
                str(user) if user is not None else None,
                _blob(token_hash),
                float(expires),
            )
            content.ceremonies.append((str(state), ceremony))
    return content


def read_pending_file(path: Path) -> list[tuple[bytes, PendingLoginRow]]:
    with _database(path) as db:
        return [
            (
                bytes(nonce_hash),
                PendingLoginRow(
                    str(provider_ref),
                    str(return_url),
                    _blob(stash),
                    _blob(binding),
                    float(expires),
                ),
            )
            for nonce_hash, provider_ref, return_url, stash, binding, expires in _rows(
                db, "pending_logins", _PENDING
            )
        ]

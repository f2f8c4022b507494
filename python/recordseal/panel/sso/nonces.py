"""Pending sso logins (spec 3, 8): single-use state nonces that expire after 10 minutes.

``start`` stores a fresh nonce (256 random bits, base64url) with the provider reference, the
return URL and the provider's ``stash``; ``take`` removes it and answers what was stored, so a
nonce is consumed by its first callback whether or not that login then succeeds. Rows live in
one SQLite file (``<data_dir>/panel-sso.sqlite3`` in the service) so that every worker process
sees the nonces the others issued; only SHA-256 of the nonce is stored.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

NONCE_LIFETIME = 10 * 60

TakeStatus: TypeAlias = Literal["ok", "unknown", "expired"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_logins (
    nonce_hash   BLOB PRIMARY KEY,
    provider_ref TEXT NOT NULL,
    return_url   TEXT NOT NULL,
    stash        TEXT,
    expires_at   REAL NOT NULL
);
"""


@dataclass(frozen=True)
class PendingLogin:
    """What ``start`` stored; ``stash`` is the provider's per-attempt secret."""

    provider_ref: str
    return_url: str
    stash: str | None = field(repr=False)


def _hash(nonce: str) -> bytes:
    return hashlib.sha256(nonce.encode("utf-8", "replace")).digest()


class PendingLogins:
    """The pending map of spec 3, in one SQLite file shared by worker processes."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            yield db
        finally:
            db.close()

    def new_nonce(self) -> str:
        return secrets.token_urlsafe(32)

    def put(self, nonce: str, provider_ref: str, return_url: str, stash: str | None) -> None:
        """Store a pending login under ``nonce`` (from ``new_nonce``) for 10 minutes."""
        now = self.clock()
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM pending_logins WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO pending_logins VALUES (?, ?, ?, ?, ?)",
                (_hash(nonce), provider_ref, return_url, stash, now + NONCE_LIFETIME),
            )
            db.execute("COMMIT")

    def take(self, nonce: str) -> tuple[TakeStatus, PendingLogin | None]:
        """Remove the nonce and answer its login; ``unknown`` (never issued or used before)
        and ``expired`` answer no login."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute(
                "SELECT provider_ref, return_url, stash, expires_at FROM pending_logins"
                " WHERE nonce_hash = ?",
                (_hash(nonce),),
            ).fetchone()
            if row is not None:
                db.execute("DELETE FROM pending_logins WHERE nonce_hash = ?", (_hash(nonce),))
            db.execute("COMMIT")
        if row is None:
            return "unknown", None
        provider_ref, return_url, stash, expires_at = row
        if not self.clock() < expires_at:
            return "expired", None
        return "ok", PendingLogin(provider_ref, return_url, stash)

    def __len__(self) -> int:
        with self._connect() as db:
            (count,) = db.execute("SELECT count(*) FROM pending_logins").fetchone()
        return int(count)

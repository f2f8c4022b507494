"""Pending sso logins (docs/panel.md, "Sessions"): single-use state nonces that expire after 10
minutes.

``start`` stores a fresh nonce (256 random bits, base64url) with the provider reference, the
return URL and the provider's ``stash``; ``take`` removes it and answers what was stored, so a
nonce is consumed by its first callback whether or not that login then succeeds. Rows live in
one SQLite file (``<data_dir>/panel-sso.sqlite3`` in the service) so that every worker process
sees the nonces the others issued; only SHA-256 of the nonce is stored.

Two more things are kept so that the file is of no use to someone who can read it:

- the ``stash`` (the PKCE verifier) is stored sealed: AES-256-GCM under a key derived (HKDF-SHA-256,
  info ``recordseal/sso-stash/v1``) from the nonce itself, which the file does not hold, with
  the nonce hash as associated data; only a callback that presents the nonce can open it;
- ``binding``: SHA-256 of the browser-binding value of the browser that called start (see
  ``login.py``), compared at the callback so a callback URL is of no use in another browser.

The file is created with mode 0600 (SQLite gives its ``-wal`` and ``-shm`` files the same
mode). A file of an older layout is dropped and created again: pending logins live at most
10 minutes, so only logins in flight across the upgrade are lost.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from recordseal.storage.sqlite_locks import enable_wal, retry_while_locked

NONCE_LIFETIME = 10 * 60
STASH_INFO = b"recordseal/sso-stash/v1"
_STASH_VERSION = b"\x01"

TakeStatus: TypeAlias = Literal["ok", "unknown", "expired"]

_COLUMNS = ("nonce_hash", "provider_ref", "return_url", "stash", "binding", "expires_at")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_logins (
    nonce_hash   BLOB PRIMARY KEY,
    provider_ref TEXT NOT NULL,
    return_url   TEXT NOT NULL,
    stash        BLOB,
    binding      BLOB,
    expires_at   REAL NOT NULL
);
"""


@dataclass(frozen=True)
class PendingLogin:
    """What ``start`` stored; ``stash`` is the provider's per-attempt secret (opened),
    ``binding`` SHA-256 of the starting browser's binding value (None: none was given)."""

    provider_ref: str
    return_url: str
    stash: str | None = field(repr=False)
    binding: bytes | None = field(default=None, repr=False)


def _hash(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "replace")).digest()


def binding_hash(binding: str) -> bytes:
    """What the pending map keeps of a browser-binding value."""
    return hashlib.sha256(
        b"recordseal/sso-binding/v1\x00" + binding.encode("utf-8", "replace")
    ).digest()


def _stash_key(nonce: str) -> AESGCM:
    key = HKDF(hashes.SHA256(), 32, salt=None, info=STASH_INFO).derive(
        nonce.encode("utf-8", "replace")
    )
    return AESGCM(key)


def seal_stash(nonce: str, stash: str) -> bytes:
    """``stash`` sealed under the nonce (see the module docstring)."""
    iv = secrets.token_bytes(12)
    sealed = _stash_key(nonce).encrypt(iv, stash.encode("utf-8"), _hash(nonce))
    return _STASH_VERSION + iv + sealed


def open_stash(nonce: str, sealed: bytes) -> str | None:
    """The stash sealed under ``nonce``; None when it does not open."""
    if not sealed.startswith(_STASH_VERSION) or len(sealed) < 1 + 12 + 16:
        return None
    try:
        plain = _stash_key(nonce).decrypt(sealed[1:13], sealed[13:], _hash(nonce))
    except InvalidTag:
        return None
    return plain.decode("utf-8")


def _create_table(db: sqlite3.Connection) -> None:
    """The table in its current shape (an older shape is dropped: its logins expire within
    10 minutes anyway); safe to run again."""
    columns = tuple(row[1] for row in db.execute("PRAGMA table_info(pending_logins)"))
    if columns and columns != _COLUMNS:
        db.execute("DROP TABLE IF EXISTS pending_logins")
    db.executescript(_SCHEMA)


class PendingLogins:
    """The pending map of docs/panel.md, "Sessions", in one SQLite file shared by worker
    processes."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)  # also a file an older version created with the umask
        with self._connect() as db:
            enable_wal(db)
            retry_while_locked(lambda: _create_table(db))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            yield db
        finally:
            db.close()

    def new_nonce(self) -> str:
        return secrets.token_urlsafe(32)

    def put(
        self,
        nonce: str,
        provider_ref: str,
        return_url: str,
        stash: str | None,
        binding: str | None = None,
    ) -> None:
        """Store a pending login under ``nonce`` (from ``new_nonce``) for 10 minutes, with the
        binding value of the browser that started it."""
        now = self.clock()
        sealed = seal_stash(nonce, stash) if stash is not None else None
        bound = binding_hash(binding) if binding is not None else None
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM pending_logins WHERE expires_at <= ?", (now,))
            db.execute(
                f"INSERT INTO pending_logins ({', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
                (_hash(nonce), provider_ref, return_url, sealed, bound, now + NONCE_LIFETIME),
            )
            db.execute("COMMIT")

    def take(self, nonce: str) -> tuple[TakeStatus, PendingLogin | None]:
        """Remove the nonce and answer its login; ``unknown`` (never issued or used before)
        and ``expired`` answer no login."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute(
                "SELECT provider_ref, return_url, stash, binding, expires_at FROM pending_logins"
                " WHERE nonce_hash = ?",
                (_hash(nonce),),
            ).fetchone()
            if row is not None:
                db.execute("DELETE FROM pending_logins WHERE nonce_hash = ?", (_hash(nonce),))
            db.execute("COMMIT")
        if row is None:
            return "unknown", None
        provider_ref, return_url, sealed, bound, expires_at = row
        if not self.clock() < expires_at:
            return "expired", None
        stash = open_stash(nonce, bytes(sealed)) if sealed is not None else None
        return "ok", PendingLogin(
            provider_ref, return_url, stash, bytes(bound) if bound is not None else None
        )

    def __len__(self) -> int:
        with self._connect() as db:
            (count,) = db.execute("SELECT count(*) FROM pending_logins").fetchone()
        return int(count)

"""Persistent passkey state of the operator panel (docs/panel.md, "Sessions"):
``<data_dir>/panel.sqlite3``.

Three tables, in one SQLite file (WAL journal, ``synchronous=FULL``) created on first use:

- ``credentials``: one row per registered passkey (user id, credential id, COSE public key,
  sign count, role ``operator`` or ``viewer``, created_at). The role is the per-passkey role
  store of docs/panel.md, "Sessions".
- ``links``: one-time registration links. Only SHA-256 of the random token is stored (the
  token is 256 random bits, so a plain hash suffices); a link expires 15 minutes after it is
  made, is single use, and names the role it grants.
- ``challenges``: pending WebAuthn ceremonies keyed by a random state id; single use,
  5 minutes. Keeping them here (not in process memory) lets several workers share them.

Every method opens its own short connection, so one ``PasskeyStore`` may be used from any
thread. Times are seconds since the Unix epoch from ``clock`` (replaceable in tests).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from recordseal.panel.sessions import ROLES, Role
from recordseal.storage.sqlite_locks import enable_wal, retry_while_locked

DATABASE_NAME = "panel.sqlite3"
LINK_LIFETIME = 15 * 60
CHALLENGE_LIFETIME = 5 * 60

LinkStatus: TypeAlias = Literal["valid", "unknown", "used", "expired"]
CeremonyKind: TypeAlias = Literal["register", "authenticate"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS credentials (
    credential_id BLOB PRIMARY KEY,
    user_id       TEXT NOT NULL,
    public_key    BLOB NOT NULL,
    sign_count    INTEGER NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('operator', 'viewer')),
    created_at    REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS credentials_user ON credentials (user_id);
CREATE TABLE IF NOT EXISTS links (
    token_hash BLOB PRIMARY KEY,
    role       TEXT NOT NULL CHECK (role IN ('operator', 'viewer')),
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at    REAL
);
CREATE TABLE IF NOT EXISTS challenges (
    state_id   TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('register', 'authenticate')),
    challenge  BLOB NOT NULL,
    user_id    TEXT,
    token_hash BLOB,
    expires_at REAL NOT NULL
);
"""


class LinkGone(Exception):
    """The registration link is unknown, used or expired; ``status`` says which."""

    def __init__(self, status: LinkStatus) -> None:
        super().__init__(f"registration link is {status}")
        self.status = status


@dataclass(frozen=True)
class Credential:
    credential_id: bytes
    user_id: str
    public_key: bytes
    sign_count: int
    role: Role
    created_at: float


@dataclass(frozen=True)
class PendingCeremony:
    """A consumed challenge: what the finish step checks the browser's answer against."""

    kind: CeremonyKind
    challenge: bytes
    user_id: str | None
    token_hash: bytes | None


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _role(value: str) -> Role:
    for role in ROLES:
        if value == role:
            return role
    raise ValueError(f"role {value!r} is not one of {', '.join(ROLES)}")


class PasskeyStore:
    """Credentials, one-time registration links and pending challenges in one SQLite file."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            enable_wal(db)
            retry_while_locked(lambda: db.executescript(_SCHEMA))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            yield db
        finally:
            db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- registration links ------------------------------------------------------------

    def create_link(self, role: Role = "operator") -> str:
        """A fresh one-time token (returned once, stored hashed) granting ``role``."""
        role = _role(role)
        token = _b64u(secrets.token_bytes(32))
        now = self.clock()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO links (token_hash, role, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (hash_token(token), role, now, now + LINK_LIFETIME),
            )
        return token

    def link_status(self, token: str) -> tuple[LinkStatus, Role | None]:
        """Whether ``token`` may still be used, and the role it grants."""
        with self._connect() as db:
            row = db.execute(
                "SELECT role, expires_at, used_at FROM links WHERE token_hash = ?",
                (hash_token(token),),
            ).fetchone()
        if row is None:
            return "unknown", None
        role, expires_at, used_at = row
        if used_at is not None:
            return "used", _role(role)
        if not self.clock() < expires_at:
            return "expired", _role(role)
        return "valid", _role(role)

    # -- challenges --------------------------------------------------------------------

    def put_challenge(
        self,
        kind: CeremonyKind,
        challenge: bytes,
        *,
        user_id: str | None = None,
        token_hash: bytes | None = None,
    ) -> str:
        """Keeps ``challenge`` for 5 minutes under a new random state id, which it returns."""
        state_id = _b64u(secrets.token_bytes(24))
        now = self.clock()
        with self._transaction() as db:
            db.execute("DELETE FROM challenges WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO challenges (state_id, kind, challenge, user_id, token_hash,"
                " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (state_id, kind, challenge, user_id, token_hash, now + CHALLENGE_LIFETIME),
            )
        return state_id

    def take_challenge(self, state_id: str, kind: CeremonyKind) -> PendingCeremony | None:
        """Removes and returns the pending ceremony (single use); None if unknown or expired."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT kind, challenge, user_id, token_hash, expires_at FROM challenges"
                " WHERE state_id = ?",
                (state_id,),
            ).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM challenges WHERE state_id = ?", (state_id,))
        stored_kind, challenge, user_id, token_hash, expires_at = row
        if stored_kind != kind or not self.clock() < expires_at:
            return None
        return PendingCeremony(kind, bytes(challenge), user_id, token_hash)

    # -- credentials -------------------------------------------------------------------

    def register_with_link(
        self,
        token_hash: bytes,
        user_id: str,
        credential_id: bytes,
        public_key: bytes,
        sign_count: int,
    ) -> Role:
        """Consumes the link and stores the credential with the link's role, atomically.

        Raises ``LinkGone`` when the link is unknown, used or expired (nothing is stored).
        """
        now = self.clock()
        with self._transaction() as db:
            row = db.execute(
                "SELECT role, expires_at, used_at FROM links WHERE token_hash = ?", (token_hash,)
            ).fetchone()
            if row is None:
                raise LinkGone("unknown")
            role, expires_at, used_at = row
            if used_at is not None:
                raise LinkGone("used")
            if not now < expires_at:
                raise LinkGone("expired")
            db.execute("UPDATE links SET used_at = ? WHERE token_hash = ?", (now, token_hash))
            db.execute(
                "INSERT INTO credentials (credential_id, user_id, public_key, sign_count, role,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (credential_id, user_id, public_key, sign_count, role, now),
            )
        return _role(role)

    def credential(self, credential_id: bytes) -> Credential | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT credential_id, user_id, public_key, sign_count, role, created_at"
                " FROM credentials WHERE credential_id = ?",
                (credential_id,),
            ).fetchone()
        if row is None:
            return None
        cid, user_id, public_key, sign_count, role, created_at = row
        return Credential(
            bytes(cid), user_id, bytes(public_key), sign_count, _role(role), created_at
        )

    def update_sign_count(self, credential_id: bytes, sign_count: int) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE credentials SET sign_count = ? WHERE credential_id = ?",
                (sign_count, credential_id),
            )

    def roles(self) -> dict[str, Role]:
        """User id -> role of every registered passkey (the highest role wins per user)."""
        result: dict[str, Role] = {}
        with self._connect() as db:
            for user_id, role in db.execute("SELECT user_id, role FROM credentials"):
                if result.get(user_id) != "operator":
                    result[user_id] = _role(role)
        return result


def passkey_context(data_dir: str | Path) -> PasskeyStore:
    """The store at ``<data_dir>/panel.sqlite3`` (created on first use)."""
    return PasskeyStore(Path(data_dir) / DATABASE_NAME)

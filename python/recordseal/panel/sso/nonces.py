"""Pending sso logins (docs/panel.md, "Sessions"): single-use state nonces that expire after 10
minutes.

``start`` stores a fresh nonce (256 random bits, base64url) with the provider reference, the
return URL and the provider's ``stash``; ``take`` removes it and answers what was stored, so a
nonce is consumed by its first callback whether or not that login then succeeds. Rows live in
the panel's part of the store (``storage/panel.py``), in the database of the records, so a
sign-in started through one worker or host completes through any other; only SHA-256 of the
nonce is stored.

Two more things are kept so that the rows are of no use to someone who can read them:

- the ``stash`` (the PKCE verifier) is stored sealed: AES-256-GCM under a key derived (HKDF-SHA-256,
  info ``recordseal/sso-stash/v1``) from the nonce itself, which the database does not hold,
  with the nonce hash as associated data; only a callback that presents the nonce can open it;
- ``binding``: SHA-256 of the browser-binding value of the browser that called start (see
  ``login.py``), compared at the callback so a callback URL is of no use in another browser.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from recordseal.storage.panel import PanelStore, PendingLoginRow

NONCE_LIFETIME = 10 * 60
STASH_INFO = b"recordseal/sso-stash/v1"
_STASH_VERSION = b"\x01"

TakeStatus: TypeAlias = Literal["ok", "unknown", "expired"]


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


class PendingLogins:
    """The pending map of docs/sso.md, "Pending logins at rest", in the panel's store (shared
    by every worker and host)."""

    def __init__(self, store: PanelStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def new_nonce(self) -> str:
        return secrets.token_urlsafe(32)

    async def put(
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
        row = PendingLoginRow(provider_ref, return_url, sealed, bound, now + NONCE_LIFETIME)
        await self.store.put_pending_login(_hash(nonce), row, now)

    async def take(self, nonce: str) -> tuple[TakeStatus, PendingLogin | None]:
        """Remove the nonce and answer its login; ``unknown`` (never issued or used before)
        and ``expired`` answer no login."""
        row = await self.store.take_pending_login(_hash(nonce))
        if row is None:
            return "unknown", None
        if not self.clock() < row.expires_at:
            return "expired", None
        stash = open_stash(nonce, row.stash) if row.stash is not None else None
        return "ok", PendingLogin(row.provider_ref, row.return_url, stash, row.binding)

    async def count(self) -> int:
        """How many sign-ins are pending (expired ones not yet dropped included)."""
        return await self.store.pending_login_count()

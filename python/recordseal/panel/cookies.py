"""Signed session cookies with key rotation (docs/panel.md, "Sessions").

Token format (all ASCII)::

    token   = b64u(payload) "." key_id "." b64u(mac)
    mac     = HMAC-SHA-256(secret of key_id, key_id || 0x00 || payload)

``payload`` is the UTF-8 wire form of ``recordseal.panel.sessions``; ``b64u`` is base64url
without padding, and only the canonical encoding is accepted. ``key_id`` is 1 to 32
characters of ``[A-Za-z0-9_-]``; binding it into the MAC stops a token from being replayed
under another key. A ``CookieKeyring`` signs with its one active key and still verifies with
older keys until they are retired. Verification answers None for every failure (bad MAC,
unknown or retired key, malformed, expired, signed out) so callers cannot tell them apart.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from recordseal.panel.sessions import (
    LegacySession,
    PayloadError,
    Session,
    TenantSession,
    decode_payload,
    encode_payload,
)

COOKIE_NAME = "__Host-recordseal-session"
KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
MIN_SECRET_BYTES = 32
_B64U = re.compile(r"[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class SigningKey:
    """One HMAC key; the secret stays out of ``repr`` so it cannot reach a log line."""

    key_id: str
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not KEY_ID.fullmatch(self.key_id):
            raise ValueError(
                f"cookie key id {self.key_id!r} must be 1 to 32 characters of [A-Za-z0-9_-]"
            )
        if len(self.secret) < MIN_SECRET_BYTES:
            raise ValueError(
                f"cookie key {self.key_id!r} has {len(self.secret)} secret bytes;"
                f" at least {MIN_SECRET_BYTES} are required"
            )

    def mac(self, payload: bytes) -> bytes:
        message = self.key_id.encode("ascii") + b"\x00" + payload
        return hmac.new(self.secret, message, hashlib.sha256).digest()


class CookieKeyring:
    """The active signing key plus verify-only keys kept through a rotation."""

    def __init__(self, active: SigningKey, verify_only: Iterable[SigningKey] = ()) -> None:
        self._active = active
        self._keys: dict[str, SigningKey] = {}
        for key in (*verify_only, active):
            if key.key_id in self._keys:
                raise ValueError(f"cookie key id {key.key_id!r} appears twice in the keyring")
            self._keys[key.key_id] = key

    @property
    def active_key_id(self) -> str:
        return self._active.key_id

    @property
    def key_ids(self) -> frozenset[str]:
        return frozenset(self._keys)

    def rotate(self, new: SigningKey) -> None:
        """Sign with ``new`` from now on; the previous key keeps verifying until retired."""
        if new.key_id in self._keys:
            raise ValueError(f"cookie key id {new.key_id!r} is already in the keyring")
        self._keys[new.key_id] = new
        self._active = new

    def retire(self, key_id: str) -> None:
        """Forget a verify-only key: every cookie signed with it stops verifying."""
        if key_id == self._active.key_id:
            raise ValueError(f"cookie key {key_id!r} is the active key; rotate before retiring")
        if self._keys.pop(key_id, None) is None:
            raise ValueError(f"cookie key {key_id!r} is not in the keyring")

    def issue(self, session: Session) -> str:
        """A signed token for ``session``; PayloadError if a field breaks a rule."""
        payload = encode_payload(session).encode("utf-8")
        return self.sign_payload(payload)

    def sign_payload(self, payload: bytes) -> str:
        """Signs raw wire bytes as they are (for payloads written by older versions)."""
        key = self._active
        return f"{_b64encode(payload)}.{key.key_id}.{_b64encode(key.mac(payload))}"

    def verify(self, token: str, now: float, *, epoch: int | None = None) -> Session | None:
        """The session of a valid token, or None.

        ``epoch`` is the current sign-out-everywhere epoch: a session whose ``g=`` is lower is
        refused, and one without ``g=`` counts as epoch 0 (it keeps verifying until the first
        sign-out-everywhere).
        """
        payload = self._authentic_payload(token)
        if payload is None:
            return None
        try:
            session = decode_payload(payload.decode("utf-8"))
        except (UnicodeDecodeError, PayloadError):
            return None
        if not now < session.exp:
            return None
        if epoch is not None and (session.epoch or 0) < epoch:
            return None
        return session

    def verify_subject(self, token: str, now: float, *, epoch: int | None = None) -> str | None:
        """The subject of a valid token of either shape (the user id of a legacy one)."""
        session = self.verify(token, now, epoch=epoch)
        if isinstance(session, TenantSession):
            return session.subject
        if isinstance(session, LegacySession):
            return session.user_id
        return None

    def _authentic_payload(self, token: str) -> bytes | None:
        parts = token.split(".")
        if len(parts) != 3:
            return None
        encoded_payload, key_id, encoded_mac = parts
        key = self._keys.get(key_id)
        payload = _b64decode(encoded_payload)
        mac = _b64decode(encoded_mac)
        if key is None or payload is None or mac is None:
            return None
        if not hmac.compare_digest(key.mac(payload), mac):
            return None
        return payload


def set_cookie_header(token: str, max_age: int) -> str:
    """The ``Set-Cookie`` value; ``__Host-`` requires Secure, Path=/ and no Domain."""
    if isinstance(max_age, bool) or not isinstance(max_age, int) or max_age < 0:
        raise ValueError(f"max_age {max_age!r} must be a non-negative integer of seconds")
    if not re.fullmatch(r"[A-Za-z0-9_.-]*", token):
        raise ValueError("a session token holds only base64url characters and '.'")
    return f"{COOKIE_NAME}={token}; Max-Age={max_age}; Path=/; Secure; HttpOnly; SameSite=Lax"


def clear_cookie_header() -> str:
    """The ``Set-Cookie`` value that removes the session cookie (sign-out)."""
    return set_cookie_header("", 0)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes | None:
    """Strict base64url without padding; a non-canonical encoding is refused."""
    if not _B64U.fullmatch(text) or len(text) % 4 == 1:
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if _b64encode(data) == text else None

"""Per-subject keys and payload encryption (AES-256-GCM).

Each data subject has a random 32-byte key, stored only wrapped by the key-encryption key
(KEK). From the subject key HKDF derives the payload key and the salt key; destroying the
wrapped subject key therefore makes both payloads and salts unrecoverable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

NONCE_BYTES = 12
SALT_KEY_INFO = b"recordseal/salt-key/v1"
PAYLOAD_KEY_INFO = b"recordseal/payload-key/v1"
SUBJECT_INDEX_INFO = b"recordseal/subject-index/v1"
WRAP_CONTEXT = b"recordseal/subject-key/v1"


class VaultError(Exception):
    """A wrapped key or ciphertext failed to authenticate (wrong KEK or tampered data)."""


def _hkdf(key: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)


def _derive_subject_keys(subject_key: bytes) -> tuple[bytes, bytes]:
    """``(salt_key, payload_key)`` through ``cryptography``, where the extension is not built."""
    if len(subject_key) != 32:
        raise ValueError(f"a subject key is 32 bytes, not {len(subject_key)}")
    return _hkdf(subject_key, SALT_KEY_INFO), _hkdf(subject_key, PAYLOAD_KEY_INFO)


try:
    # The same bytes (tests/vectors/subject_keys.json), with one HKDF-Extract for both keys.
    from recordseal._native import derive_subject_keys
except ModuleNotFoundError as missing:
    # Only an absent extension falls back, as in recordseal.core.
    if missing.name != "recordseal._native":
        raise
    derive_subject_keys = _derive_subject_keys


class SubjectKeys:
    """The keys derived from one subject key, and the payload cipher keyed on first use."""

    __slots__ = ("_payload_aead", "payload_key", "salt_key")

    def __init__(self, salt_key: bytes, payload_key: bytes) -> None:
        self.salt_key = salt_key
        self.payload_key = payload_key
        # Keyed lazily: keying AES-GCM costs about as much as sealing a 1 KB payload, and the
        # native ingest pipeline seals with the payload key itself. Cached subjects reuse it.
        self._payload_aead: AESGCM | None = None

    @classmethod
    def derive(cls, subject_key: bytes) -> SubjectKeys:
        return cls(*derive_subject_keys(subject_key))

    @property
    def _aead(self) -> AESGCM:
        if self._payload_aead is None:
            self._payload_aead = AESGCM(self.payload_key)
        return self._payload_aead

    def encrypt_payload(self, record_id: str, plaintext: bytes) -> bytes:
        """``nonce ‖ ciphertext``; the record id is the associated data."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, record_id.encode())

    def decrypt_payload(self, record_id: str, sealed: bytes) -> bytes:
        nonce, body = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, body, record_id.encode())
        except InvalidTag as exc:
            raise VaultError("payload failed authentication") from exc


class KeyWrapper:
    """Wraps and unwraps subject keys under the KEK, bound to tenant and subject handle."""

    def __init__(self, kek: bytes) -> None:
        if len(kek) != 32:
            raise ValueError("the key-encryption key must be 32 bytes")
        self._aead = AESGCM(kek)
        self._index_mac = hmac.new(_hkdf(kek, SUBJECT_INDEX_INFO), digestmod=hashlib.sha256)

    @staticmethod
    def _context(tenant: str, subject_ref: str) -> bytes:
        return b"\x00".join((WRAP_CONTEXT, tenant.encode(), subject_ref.encode()))

    def new_subject_key(self, tenant: str, subject_ref: str) -> tuple[bytes, bytes]:
        """A fresh subject key and its wrapped form."""
        key = secrets.token_bytes(32)
        nonce = secrets.token_bytes(NONCE_BYTES)
        wrapped = nonce + self._aead.encrypt(nonce, key, self._context(tenant, subject_ref))
        return key, wrapped

    def unwrap(self, tenant: str, subject_ref: str, wrapped: bytes) -> bytes:
        nonce, body = wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, body, self._context(tenant, subject_ref))
        except InvalidTag as exc:
            raise VaultError("subject key failed authentication") from exc

    def subject_index(self, tenant: str, subject_id: str) -> bytes:
        """A keyed hash that finds a subject without storing its identifier in clear."""
        mac = self._index_mac.copy()  # keyed once; copying is cheaper than keying again
        mac.update(b"\x00".join((tenant.encode(), subject_id.encode())))
        return mac.digest()

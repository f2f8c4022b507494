"""Per-subject keys and payload encryption (AES-256-GCM).

Each data subject has a random 32-byte key, stored only wrapped by the key-encryption key
(KEK). From the subject key HKDF derives the payload key and the salt key; destroying the
wrapped subject key therefore makes both payloads and salts unrecoverable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from recordseal.core.backend import extension
from recordseal.crypto.errors import CryptoError

NONCE_BYTES = 12
SALT_KEY_INFO = b"recordseal/salt-key/v1"
PAYLOAD_KEY_INFO = b"recordseal/payload-key/v1"
SUBJECT_INDEX_INFO = b"recordseal/subject-index/v1"
WRAP_CONTEXT = b"recordseal/subject-key/v1"


class VaultError(CryptoError):
    """A wrapped key or ciphertext failed to authenticate (wrong KEK or tampered data)."""


def _hkdf(key: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)


def _derive_subject_keys(subject_key: bytes) -> tuple[bytes, bytes]:
    """``(salt_key, payload_key)`` through ``cryptography``, where the extension is not built."""
    if len(subject_key) != 32:
        raise ValueError(f"a subject key is 32 bytes, not {len(subject_key)}")
    return _hkdf(subject_key, SALT_KEY_INFO), _hkdf(subject_key, PAYLOAD_KEY_INFO)


if extension is not None:
    # The same bytes (tests/vectors/subject_keys.json), with one HKDF-Extract for both keys.
    from recordseal._native import derive_subject_keys
else:
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


class Aead(Protocol):
    """AES-256-GCM as ``cryptography``'s ``AESGCM`` offers it; a KEK in a hardware module
    (``recordseal._native.ModuleKey``) offers the same."""

    def encrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...
    def decrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...


class Mac(Protocol):
    """HMAC-SHA-256 under a key held in a hardware module."""

    def mac(self, message: bytes) -> bytes: ...


class _HmacKey:
    """HMAC-SHA-256 under a key held here, keyed once (copying is cheaper than keying)."""

    __slots__ = ("_keyed",)

    def __init__(self, key: bytes) -> None:
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)

    def mac(self, message: bytes) -> bytes:
        mac = self._keyed.copy()
        mac.update(message)
        return mac.digest()


#: A subject key wrapped by the first KEK: nonce, 32-byte key, GCM tag (no generation byte).
LEGACY_WRAPPED = NONCE_BYTES + 32 + 16


class KeyWrapper:
    """Wraps and unwraps subject keys under the KEK, bound to tenant and subject handle.

    After ``recordseal keys rotate kek`` there are several KEKs by generation (1: the first,
    ``kek.key``); subject keys are wrapped by the newest, and a wrapped key names its KEK: the
    first KEK's are ``nonce ‖ ciphertext`` (60 bytes, as ever), a later one's are prefixed by
    its generation byte (61 bytes). The subject index key is derived from the first KEK and
    kept as its own file once the first KEK is destroyed (docs/operations.md, "Keys"). A KEK
    or index key in a hardware module is given as the module's key (``Aead``, ``Mac``)."""

    _aeads: dict[int, Aead]
    #: the newest KEK's generation: the one that wraps
    generation: int
    _index_mac: Mac

    def __init__(
        self,
        kek: bytes | Mapping[int, bytes | Aead],
        index_key: bytes | Mac | None = None,
    ) -> None:
        keks = {1: kek} if isinstance(kek, bytes) else dict(kek)
        if not keks or any(isinstance(k, bytes) and len(k) != 32 for k in keks.values()):
            raise ValueError("the key-encryption key must be 32 bytes")
        if not all(1 <= g <= 255 for g in keks):
            raise ValueError("KEK generations are 1 to 255")
        if index_key is None:
            first = keks.get(1)
            if not isinstance(first, bytes):
                raise ValueError(
                    "without the first KEK as bytes the subject index key must be given"
                )
            index_key = subject_index_key(first)
        self._set(keks, index_key)

    def _adopt(self, other: KeyWrapper) -> None:
        """Take ``other``'s KEKs and index key (a directory that changed)."""
        self._aeads, self.generation, self._index_mac = (
            other._aeads,
            other.generation,
            other._index_mac,
        )

    def _set(self, keks: Mapping[int, bytes | Aead], index_key: bytes | Mac) -> None:
        self._aeads = {g: AESGCM(k) if isinstance(k, bytes) else k for g, k in keks.items()}
        self.generation = max(keks)
        self._index_mac = _HmacKey(index_key) if isinstance(index_key, bytes) else index_key

    @staticmethod
    def _context(tenant: str, subject_ref: str) -> bytes:
        return b"\x00".join((WRAP_CONTEXT, tenant.encode(), subject_ref.encode()))

    @staticmethod
    def generation_of(wrapped: bytes) -> int:
        """The generation of the KEK that wrapped ``wrapped``."""
        return 1 if len(wrapped) == LEGACY_WRAPPED else wrapped[0]

    def wrap(self, tenant: str, subject_ref: str, key: bytes) -> bytes:
        """``key`` wrapped by the newest KEK."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        body = self._aeads[self.generation].encrypt(nonce, key, self._context(tenant, subject_ref))
        prefix = b"" if self.generation == 1 else bytes([self.generation])
        return prefix + nonce + body

    def new_subject_key(self, tenant: str, subject_ref: str) -> tuple[bytes, bytes]:
        """A fresh subject key and its wrapped form."""
        key = secrets.token_bytes(32)
        return key, self.wrap(tenant, subject_ref, key)

    def unwrap(self, tenant: str, subject_ref: str, wrapped: bytes) -> bytes:
        generation = self.generation_of(wrapped)
        aead = self._aeads.get(generation)
        if aead is None:
            raise VaultError(f"the subject key is wrapped by KEK {generation}, which is not here")
        sealed = wrapped if generation == 1 else wrapped[1:]
        nonce, body = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
        try:
            return aead.decrypt(nonce, body, self._context(tenant, subject_ref))
        except InvalidTag as exc:
            raise VaultError("subject key failed authentication") from exc

    def rewrap(self, tenant: str, subject_ref: str, wrapped: bytes) -> bytes:
        """The same subject key, wrapped by the newest KEK."""
        return self.wrap(tenant, subject_ref, self.unwrap(tenant, subject_ref, wrapped))

    def subject_index(self, tenant: str, subject_id: str) -> bytes:
        """A keyed hash that finds a subject without storing its identifier in clear."""
        return self._index_mac.mac(b"\x00".join((tenant.encode(), subject_id.encode())))


def subject_index_key(first_kek: bytes) -> bytes:
    """The subject index key: HKDF of the first KEK, for as long as subjects exist."""
    return _hkdf(first_kek, SUBJECT_INDEX_INFO)

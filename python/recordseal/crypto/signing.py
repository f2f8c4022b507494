"""The service's Ed25519 header-signing key and the public key directory entry for it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from recordseal.core.backend import extension
from recordseal.crypto.keyfiles import read_or_create_secret

if TYPE_CHECKING:  # the verifier's wheel ships this module without the hardware-module one
    from recordseal.crypto.hsm import ModuleUri

#: Signed bytes are this context, a zero byte, then the RFC 8785 header.
HEADER_CONTEXT = b"recordseal/header/v1\x00"


def key_id_of(public_key: bytes) -> str:
    """A short stable name for a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public_key).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class HeaderSigner:
    """Signs canonical header bytes with the hosted ingest key.

    A file key's signatures come from the native core (``ed25519-dalek``) when it is built,
    else from ``cryptography``: Ed25519 is deterministic, so both give the same bytes (tested).
    A key in a hardware module signs there (``in_module``).
    """

    key_id: str
    public_key: bytes
    _sign: Callable[[bytes, bytes], bytes]
    #: a file key's 32-byte seed (the reference pipeline signs with it); None in a module
    seed: bytes | None = field(repr=False)
    #: what the native ingest pipeline signs with: an ``Ed25519Signer`` of the seed or the
    #: module's ``ModuleKey``; None where the extension is not built
    native: Any = field(repr=False, default=None)
    #: the key's ``pkcs11:`` URI when it is in a module, else ""
    location: str = ""

    @classmethod
    def from_seed(cls, seed: bytes) -> HeaderSigner:
        private = Ed25519PrivateKey.from_private_bytes(seed)
        public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        if extension is None:
            return cls(key_id_of(public), public, lambda m, p: private.sign(p + m), seed)
        from recordseal._native import Ed25519Signer

        native = Ed25519Signer(seed)
        return cls(key_id_of(public), public, native.sign, seed, native)

    @classmethod
    def in_module(cls, location: ModuleUri) -> HeaderSigner:
        """The Ed25519 key ``location`` names in a hardware module (KeyLocationError when the
        module refuses)."""
        from recordseal.crypto.hsm import ModuleEd25519Key

        key = ModuleEd25519Key.open(location)
        public = key.public_bytes_raw
        return cls(
            key_id_of(public),
            public,
            lambda m, p: key.sign(p + m),
            None,
            key.native,
            str(location),
        )

    @classmethod
    def load_or_create(cls, data_dir: Path) -> HeaderSigner:
        """The key in ``data_dir/keys/header-signing.ed25519``, generated on first start."""
        return cls.from_seed(read_or_create_secret(data_dir / "keys" / "header-signing.ed25519"))

    def sign(self, canonical_header: bytes) -> bytes:
        return self._sign(canonical_header, HEADER_CONTEXT)

    def sign_message(self, message: bytes) -> bytes:
        """Sign a whole message that already starts with its context: a gap header's
        (``chain.gap_signing_message``) or an erasure receipt's
        (``chain.erasure_receipt_message``)."""
        return self._sign(message, b"")


def verify_signature(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is the key's Ed25519 signature over ``message``."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def verify_header_signature(public_key: bytes, canonical_header: bytes, signature: bytes) -> bool:
    """True when ``signature`` is the key's Ed25519 signature over the header."""
    return verify_signature(public_key, HEADER_CONTEXT + canonical_header, signature)

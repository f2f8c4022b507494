"""ML-DSA-44 cosignatures (c2sp.org/tlog-cosignature v1.1, signature type 0x06).

The signed message is the ``cosigned_message`` structure, serialized as RFC 8446 section 3
says (one length byte before each opaque field, integers big-endian)::

    struct {
        uint8 label[12] = "subtree/v1\\n\\0";
        opaque cosigner_name<1..2^8-1>;
        uint64 timestamp;
        opaque log_origin<1..2^8-1>;
        uint64 start;
        uint64 end;
        uint8 hash[32];
    } cosigned_message;

signed with ML-DSA-44 (FIPS 204, the pure form, empty context). recordseal signs and verifies
checkpoints only: the subtree ``[0, size)`` with the checkpoint's root hash. The message does
not cover extension lines, so a checkpoint that has any is neither signed nor verified. The
note signature is timestamp (8 bytes, big-endian) ‖ ML-DSA-44 signature (2420 bytes). A
witness cosigns with the time (never 0, c2sp.org/tlog-witness); a log signing its own
checkpoint with this type writes 0, stating no time (c2sp.org/tlog-checkpoint).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, Self

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey, MLDSA44PublicKey

from .checkpoint import Checkpoint
from .cosignature import Cosignature, CosignerKey, check_timestamp
from .errors import TlogError
from .keys import MLDSA44, encode_vkey, is_valid_name, key_id

LABEL = b"subtree/v1\n\x00"
SIGNATURE_SIZE = 2420
SEED_SIZE = 32
_MAX_OPAQUE = 255
_EMPTY_ROOT = hashlib.sha256(b"").digest()


def _opaque(value: str, what: str) -> bytes:
    data = value.encode()
    if not 1 <= len(data) <= _MAX_OPAQUE:
        message = f"the {what} has {len(data)} bytes, not 1 to {_MAX_OPAQUE}"
        raise TlogError("cosignature_malformed", message, {"field": what})
    return bytes([len(data)]) + data


def subtree_message(cosigner: str, timestamp: int, checkpoint_text: str) -> bytes:
    """The ``cosigned_message`` of ``cosigner`` over a checkpoint body (the subtree [0, size)).

    Refused (``cosignature_malformed`` or ``checkpoint_malformed``): a body that is not a
    checkpoint, one with extension lines, an empty tree whose root is not SHA-256 of the empty
    string, a name or origin of 0 or more than 255 bytes, a timestamp above 2^63 - 1.
    """
    checkpoint = Checkpoint.parse(checkpoint_text)
    if checkpoint.extensions:
        message = "an ML-DSA-44 cosignature covers no extension lines: the checkpoint has some"
        raise TlogError("cosignature_malformed", message, {"field": "extensions"})
    if checkpoint.size == 0 and checkpoint.root_hash != _EMPTY_ROOT:
        message = "the root of an empty tree is SHA-256 of the empty string"
        raise TlogError("cosignature_malformed", message, {"field": "root_hash"})
    check_timestamp(timestamp)
    return b"".join(
        (
            LABEL,
            _opaque(cosigner, "cosigner name"),
            timestamp.to_bytes(8, "big"),
            _opaque(checkpoint.origin, "log origin"),
            (0).to_bytes(8, "big"),
            checkpoint.size.to_bytes(8, "big"),
            checkpoint.root_hash,
        )
    )


def mldsa44_verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        MLDSA44PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class MLDSA44CosignatureVerifier(CosignerKey):
    """An ML-DSA-44 cosigning key (type 0x06): a witness's, or a log's own checkpoint key."""

    SIGNATURE_TYPE: ClassVar[int] = MLDSA44
    SIGNATURE_SIZE: ClassVar[int] = SIGNATURE_SIZE

    def verify_signed(self, checkpoint_text: str, timestamp: int, signature: bytes) -> bool:
        return mldsa44_verify(
            self.public_key, subtree_message(self.name, timestamp, checkpoint_text), signature
        )


class MLDSA44SigningKey(Protocol):
    """What signs with ML-DSA-44: a ``cryptography`` private key, or one whose seed is kept
    elsewhere and used on demand (``crypto/wrapped_seeds.py``)."""

    def public_key(self) -> MLDSA44PublicKey: ...

    def sign(self, data: bytes) -> bytes: ...


class MLDSA44CosignatureSigner:
    """Produces ML-DSA-44 cosignatures under a key name.

    ``clock`` gives the time a note signature (:meth:`sign`) states; ``None`` states none
    (timestamp 0), as a log does when it signs its own checkpoints.
    """

    SIGNATURE_TYPE = MLDSA44

    def __init__(
        self,
        name: str,
        private_key: MLDSA44SigningKey,
        *,
        clock: Callable[[], float] | None = time.time,
    ) -> None:
        if not is_valid_name(name):
            raise TlogError("name_invalid", f"key name {name!r} is empty or has a space or '+'")
        self._name = name
        self._private = private_key
        self._public = private_key.public_key().public_bytes_raw()
        self._clock = clock

    @classmethod
    def from_seed(
        cls, name: str, seed: bytes, *, clock: Callable[[], float] | None = time.time
    ) -> Self:
        """The key for a 32-byte FIPS 204 seed (the private key's ξ)."""
        return cls(name, MLDSA44PrivateKey.from_seed_bytes(seed), clock=clock)

    @classmethod
    def generate(cls, name: str, *, clock: Callable[[], float] | None = time.time) -> Self:
        return cls(name, MLDSA44PrivateKey.generate(), clock=clock)

    @property
    def name(self) -> str:
        return self._name

    @property
    def public_key(self) -> bytes:
        return self._public

    @property
    def key_id(self) -> int:
        return key_id(self._name, MLDSA44, self._public)

    @property
    def vkey(self) -> str:
        return encode_vkey(self._name, MLDSA44, self._public)

    def verifier(self) -> MLDSA44CosignatureVerifier:
        return MLDSA44CosignatureVerifier(self._name, self._public)

    def cosign(self, checkpoint_text: str, timestamp: int | None = None) -> Cosignature:
        """Cosign a checkpoint body at ``timestamp`` (default: the clock's, 0 without one)."""
        if timestamp is None:
            timestamp = 0 if self._clock is None else int(self._clock())
        signature = self._private.sign(subtree_message(self._name, timestamp, checkpoint_text))
        return Cosignature(self._name, self.key_id, timestamp, signature)

    def sign(self, message: bytes) -> bytes:
        """Note-signer form (timestamp ‖ signature), so ``sign_note`` can use it."""
        return self.cosign(message.decode()).note_signature.signature

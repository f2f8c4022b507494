"""Timestamped cosignatures (c2sp.org/tlog-cosignature), and the Ed25519 one (``cosignature/v1``).

A cosignature is a note signature whose bytes are an 8-byte big-endian POSIX timestamp
followed by a signature: of type 0x04, an Ed25519 signature over::

    cosignature/v1
    time <timestamp>
    <checkpoint body>

of type 0x06, an ML-DSA-44 signature over the ``subtree/v1`` message (:mod:`.subtree`). It
states that, at that time, this was the largest consistent tree the cosigner had seen for the
checkpoint's origin (a timestamp of 0 states no time: tlog-cosignature lets a signer make
no such statement, as a log does when it signs its own checkpoint with ML-DSA-44).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from .checkpoint import Checkpoint
from .errors import TlogError
from .keys import (
    COSIGNATURE_V1,
    NamedEd25519Key,
    NamedPublicKey,
    ed25519_verify,
    encode_vkey,
)
from .note import NoteSignature

HEADER = "cosignature/v1\n"
MAX_TIMESTAMP = 2**63 - 1
TIMESTAMP_SIZE = 8
_ED25519_SIGNATURE_SIZE = 64
#: The signature sizes after the timestamp: Ed25519 (type 0x04) and ML-DSA-44 (type 0x06).
SIGNATURE_SIZES = (_ED25519_SIGNATURE_SIZE, 2420)


def cosigned_message(checkpoint_text: str, timestamp: int) -> bytes:
    """The bytes a cosigner signs; ``checkpoint_text`` must be a valid checkpoint body."""
    Checkpoint.parse(checkpoint_text)
    check_timestamp(timestamp)
    return f"{HEADER}time {timestamp}\n{checkpoint_text}".encode()


def check_timestamp(timestamp: int) -> None:
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        message = f"cosignature timestamp {timestamp} is outside 0..2^63-1"
        raise TlogError("cosignature_malformed", message, {"timestamp": timestamp})


@dataclass(frozen=True, slots=True)
class Cosignature:
    """One cosignature: who (name, key ID), when (POSIX seconds) and the signature (Ed25519
    or ML-DSA-44: the cosigner's key tells)."""

    name: str
    key_id: int
    timestamp: int
    signature: bytes

    @property
    def time(self) -> datetime:
        """The timestamp as an aware UTC datetime."""
        return datetime.fromtimestamp(self.timestamp, UTC)

    @property
    def note_signature(self) -> NoteSignature:
        payload = self.timestamp.to_bytes(TIMESTAMP_SIZE, "big") + self.signature
        return NoteSignature(self.name, self.key_id, payload)

    @property
    def line(self) -> str:
        """The note signature line, newline included."""
        return self.note_signature.line

    @classmethod
    def from_note_signature(cls, signature: NoteSignature) -> Cosignature:
        """Read the timestamp out of a note signature; its length must be 8 + 64 bytes
        (Ed25519) or 8 + 2420 bytes (ML-DSA-44)."""
        raw = signature.signature
        if len(raw) - TIMESTAMP_SIZE not in SIGNATURE_SIZES:
            raise TlogError(
                "cosignature_malformed",
                f"cosignature of {signature.name} has {len(raw)} bytes, not 72 nor 2428",
                {"name": signature.name, "key_id": f"{signature.key_id:08x}"},
            )
        timestamp = int.from_bytes(raw[:TIMESTAMP_SIZE], "big")
        check_timestamp(timestamp)
        return cls(signature.name, signature.key_id, timestamp, raw[TIMESTAMP_SIZE:])

    @classmethod
    def parse_line(cls, line: str) -> Cosignature:
        return cls.from_note_signature(NoteSignature.parse_line(line))


@dataclass(frozen=True, slots=True)
class CosignerKey(NamedPublicKey):
    """A cosigner's public key of one cosignature type; also a note verifier for it."""

    #: the signature's size after the timestamp
    SIGNATURE_SIZE: ClassVar[int]

    @abstractmethod
    def verify_signed(self, checkpoint_text: str, timestamp: int, signature: bytes) -> bool:
        """Whether ``signature`` is this key's over the checkpoint body at ``timestamp``."""

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Note-verifier form: ``signature`` is timestamp ‖ signature."""
        if len(signature) != TIMESTAMP_SIZE + self.SIGNATURE_SIZE:
            return False
        timestamp = int.from_bytes(signature[:TIMESTAMP_SIZE], "big")
        try:
            check_timestamp(timestamp)
            return self.verify_signed(message.decode(), timestamp, signature[TIMESTAMP_SIZE:])
        except (TlogError, UnicodeDecodeError):
            return False

    def verify_cosignature(
        self, checkpoint_text: str, cosignature: Cosignature, *, max_timestamp: int | None = None
    ) -> None:
        """Raise unless ``cosignature`` is this key's valid cosignature over the checkpoint.

        ``max_timestamp`` (POSIX seconds) refuses cosignatures dated after it.
        """
        evidence: dict[str, str | int] = {
            "name": cosignature.name,
            "key_id": f"{cosignature.key_id:08x}",
            "timestamp": cosignature.timestamp,
        }
        if (cosignature.name, cosignature.key_id) != (self.name, self.key_id):
            message = (
                f"cosignature is by {cosignature.name}+{cosignature.key_id:08x},"
                f" not {self.name}+{self.key_id:08x}"
            )
            raise TlogError("cosignature_unknown_key", message, evidence)
        if len(cosignature.signature) != self.SIGNATURE_SIZE:
            message = (
                f"cosignature of {self.name} has a signature of {len(cosignature.signature)}"
                f" bytes, not {self.SIGNATURE_SIZE}"
            )
            raise TlogError("cosignature_malformed", message, evidence)
        if max_timestamp is not None and cosignature.timestamp > max_timestamp:
            message = f"cosignature time {cosignature.timestamp} is after {max_timestamp}"
            raise TlogError("cosignature_future", message, {**evidence, "limit": max_timestamp})
        if not self.verify_signed(checkpoint_text, cosignature.timestamp, cosignature.signature):
            message = f"the cosignature of {self.name} does not verify over this checkpoint"
            raise TlogError("cosignature_invalid", message, evidence)


@dataclass(frozen=True, slots=True)
class CosignatureVerifier(CosignerKey):
    """A witness's Ed25519 cosigning key (``cosignature/v1``, type 0x04)."""

    SIGNATURE_TYPE: ClassVar[int] = COSIGNATURE_V1
    SIGNATURE_SIZE: ClassVar[int] = _ED25519_SIGNATURE_SIZE

    def verify_signed(self, checkpoint_text: str, timestamp: int, signature: bytes) -> bool:
        signed = cosigned_message(checkpoint_text, timestamp)
        return ed25519_verify(self.public_key, signed, signature)


class CosignatureSigner(NamedEd25519Key):
    """A witness's cosigning key: produces ``cosignature/v1`` signatures."""

    SIGNATURE_TYPE = COSIGNATURE_V1

    @property
    def vkey(self) -> str:
        return encode_vkey(self._name, COSIGNATURE_V1, self._public)

    def verifier(self) -> CosignatureVerifier:
        return CosignatureVerifier(self._name, self._public)

    def cosign(self, checkpoint_text: str, timestamp: int | None = None) -> Cosignature:
        """Cosign a checkpoint body at ``timestamp`` (default: now, in whole seconds)."""
        when = int(time.time()) if timestamp is None else timestamp
        signature = self._private.sign(cosigned_message(checkpoint_text, when))
        return Cosignature(self._name, self.key_id, when, signature)

    def sign(self, message: bytes) -> bytes:
        """Note-signer form (timestamp ‖ signature, now), so ``sign_note`` can use it."""
        return self.cosign(message.decode()).note_signature.signature


def verify_cosignatures(
    checkpoint_text: str,
    signatures: Iterable[NoteSignature],
    verifiers: Iterable[CosignerKey],
    *,
    max_timestamp: int | None = None,
) -> list[Cosignature]:
    """The valid cosignatures by known witnesses among ``signatures``, in order.

    Signatures by other keys (the log's own, unknown witnesses) are ignored; a known
    witness's signature that does not verify raises.
    """
    known = {(verifier.name, verifier.key_id): verifier for verifier in verifiers}
    found: list[Cosignature] = []
    for signature in signatures:
        verifier = known.get((signature.name, signature.key_id))
        if verifier is None:
            continue
        cosignature = Cosignature.from_note_signature(signature)
        verifier.verify_cosignature(checkpoint_text, cosignature, max_timestamp=max_timestamp)
        found.append(cosignature)
    return found

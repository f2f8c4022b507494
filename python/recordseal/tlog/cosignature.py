"""Timestamped Ed25519 cosignatures (c2sp.org/tlog-cosignature, ``cosignature/v1``).

A cosignature is a note signature of type 0x04 whose bytes are an 8-byte big-endian POSIX
timestamp followed by an Ed25519 signature over::

    cosignature/v1
    time <timestamp>
    <checkpoint body>

It states that, at that time, this was the largest consistent tree the cosigner had seen for
the checkpoint's origin.
"""

from __future__ import annotations

import time
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
_TIMESTAMP_SIZE = 8
_SIGNATURE_SIZE = 64


def cosigned_message(checkpoint_text: str, timestamp: int) -> bytes:
    """The bytes a cosigner signs; ``checkpoint_text`` must be a valid checkpoint body."""
    Checkpoint.parse(checkpoint_text)
    _check_timestamp(timestamp)
    return f"{HEADER}time {timestamp}\n{checkpoint_text}".encode()


def _check_timestamp(timestamp: int) -> None:
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        message = f"cosignature timestamp {timestamp} is outside 0..2^63-1"
        raise TlogError("cosignature_malformed", message, {"timestamp": timestamp})


@dataclass(frozen=True, slots=True)
class Cosignature:
    """One cosignature: who (name, key ID), when (POSIX seconds) and the Ed25519 signature."""

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
        payload = self.timestamp.to_bytes(_TIMESTAMP_SIZE, "big") + self.signature
        return NoteSignature(self.name, self.key_id, payload)

    @property
    def line(self) -> str:
        """The note signature line, newline included."""
        return self.note_signature.line

    @classmethod
    def from_note_signature(cls, signature: NoteSignature) -> Cosignature:
        """Read the timestamp out of a note signature; its length must be 8 + 64 bytes."""
        raw = signature.signature
        if len(raw) != _TIMESTAMP_SIZE + _SIGNATURE_SIZE:
            raise TlogError(
                "cosignature_malformed",
                f"cosignature of {signature.name} has {len(raw)} bytes, not 72",
                {"name": signature.name, "key_id": f"{signature.key_id:08x}"},
            )
        timestamp = int.from_bytes(raw[:_TIMESTAMP_SIZE], "big")
        _check_timestamp(timestamp)
        return cls(signature.name, signature.key_id, timestamp, raw[_TIMESTAMP_SIZE:])

    @classmethod
    def parse_line(cls, line: str) -> Cosignature:
        return cls.from_note_signature(NoteSignature.parse_line(line))


@dataclass(frozen=True, slots=True)
class CosignatureVerifier(NamedPublicKey):
    """A witness's Ed25519 cosigning key; also a note verifier for type-0x04 signatures."""

    SIGNATURE_TYPE: ClassVar[int] = COSIGNATURE_V1

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Note-verifier form: ``signature`` is timestamp ‖ Ed25519 signature."""
        if len(signature) != _TIMESTAMP_SIZE + _SIGNATURE_SIZE:
            return False
        timestamp = int.from_bytes(signature[:_TIMESTAMP_SIZE], "big")
        try:
            signed = cosigned_message(message.decode(), timestamp)
        except (TlogError, UnicodeDecodeError):
            return False
        return ed25519_verify(self.public_key, signed, signature[_TIMESTAMP_SIZE:])

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
        if max_timestamp is not None and cosignature.timestamp > max_timestamp:
            message = f"cosignature time {cosignature.timestamp} is after {max_timestamp}"
            raise TlogError("cosignature_future", message, {**evidence, "limit": max_timestamp})
        signed = cosigned_message(checkpoint_text, cosignature.timestamp)
        if not ed25519_verify(self.public_key, signed, cosignature.signature):
            message = f"the cosignature of {self.name} does not verify over this checkpoint"
            raise TlogError("cosignature_invalid", message, evidence)


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
    verifiers: Iterable[CosignatureVerifier],
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

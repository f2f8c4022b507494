"""Checking a refreshed bundle against the one it replaces, offline (docs/bundle.md,
"Refreshing a proof").

A refresh must return the same disclosure (header, signature, fields, coverage untouched)
with a proof of the same log entry, and, when the old bundle had a seal, an RFC 6962
consistency proof showing one checkpoint's tree is a prefix of the other's: the old proof and
the new one are of one log, not of a fork.
"""

from __future__ import annotations

from dataclasses import dataclass

from recordseal.core import verify_consistency

from .bundle import Bundle, decode_bundle
from .encoding import b64decode, b64encode
from .errors import BundleError, refused
from .sealing import open_seal

#: The HTTP header of ``POST /v1/proofs:refresh`` that carries the consistency proof.
CONSISTENCY_HEADER = "Recordseal-Consistency"


@dataclass(frozen=True, slots=True)
class Consistency:
    """An RFC 6962 consistency proof from a tree of ``from_size`` leaves to ``to_size``."""

    from_size: int
    to_size: int
    proof: tuple[bytes, ...]

    def header(self) -> str:
        """``<from_size> <to_size>`` then the proof's hashes in base64, space-separated."""
        hashes = [b64encode(node) for node in self.proof]
        return " ".join([str(self.from_size), str(self.to_size), *hashes])

    @classmethod
    def parse(cls, text: str) -> Consistency:
        """The header's value; :class:`BundleError` when it is not of that form."""
        parts = text.split(" ")
        if len(parts) < 2 or not all(part.isdigit() for part in parts[:2]):
            raise BundleError("consistency", "not '<from_size> <to_size> <hash>...'")
        hashes = []
        for part in parts[2:]:
            node = b64decode(part)
            if node is None or len(node) != 32:
                raise BundleError("consistency", "a proof hash is not base64 of 32 bytes")
            hashes.append(node)
        return cls(int(parts[0]), int(parts[1]), tuple(hashes))


@dataclass(frozen=True, slots=True)
class RefreshCheck:
    """What a refreshed bundle was found to be: its checkpoint sizes before and after."""

    bundle: Bundle
    old_size: int | None  # None: the old bundle had no seal
    new_size: int | None  # None: the record is not sealed yet


def check_refresh(old: bytes, new: bytes, consistency: str | None) -> RefreshCheck:
    """Raise :class:`BundleError` unless ``new`` is ``old`` with a newer proof of the same
    entry, consistent with the old one (``consistency``: the header's value, needed when
    ``old`` has a seal)."""
    before, after = decode_bundle(old), decode_bundle(new)
    for member in ("format", "header", "signature", "fields", "coverage"):
        if getattr(before, member) != getattr(after, member):
            raise BundleError("refresh", f"the refreshed bundle changed its {member}")
    if after.seal is None:
        if before.seal is not None:
            raise BundleError("refresh", "the refreshed bundle lost its seal")
        return RefreshCheck(after, None, None)
    new_seal = open_seal(after.seal)
    if before.seal is None:
        return RefreshCheck(after, None, new_seal.checkpoint.size)
    old_seal = open_seal(before.seal)
    if (before.seal.log, old_seal.proof.index) != (after.seal.log, new_seal.proof.index):
        raise BundleError("refresh", "the refreshed proof is of another log or entry")
    if consistency is None:
        raise BundleError("refresh", f"no {CONSISTENCY_HEADER} proof came with the refresh")
    proof = Consistency.parse(consistency)
    small, large = sorted(
        [
            (old_seal.checkpoint.size, old_seal.checkpoint.root_hash),
            (new_seal.checkpoint.size, new_seal.checkpoint.root_hash),
        ]
    )
    if (proof.from_size, proof.to_size) != (small[0], large[0]):
        raise BundleError("refresh", "the consistency proof is not between the two checkpoints")
    with refused("the two checkpoints are not consistent: {error}", document="refresh"):
        verify_consistency(small[0], large[0], small[1], large[1], list(proof.proof))
    return RefreshCheck(after, old_seal.checkpoint.size, new_seal.checkpoint.size)

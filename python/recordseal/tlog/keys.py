"""Note keys (c2sp.org/signed-note): key names, key IDs, vkeys, and Ed25519 keys.

A key is identified by its name and a 4-byte key ID, SHA-256(name ‖ 0x0A ‖ signature type ‖
public key)[:4]; its vkey ``<name>+<key ID hex>+<base64(type ‖ public key)>`` is the text form
that verifiers are configured with. Three signature types are known: 0x01 (Ed25519 notes),
0x04 (Ed25519 ``cosignature/v1``) and 0x06 (ML-DSA-44 ``subtree/v1`` cosignatures, which a log
also signs its checkpoints with: :mod:`.subtree`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import ClassVar, Protocol, Self

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from . import strict_base64
from .errors import TlogError

#: Signature type of plain Ed25519 note signatures (signed-note, "Signature types").
ED25519 = 0x01
#: Signature type of timestamped Ed25519 cosignatures (c2sp.org/tlog-cosignature).
COSIGNATURE_V1 = 0x04
#: Signature type of timestamped ML-DSA-44 (sub)tree cosignatures (c2sp.org/tlog-cosignature
#: v1.1); logs sign checkpoints with it too (c2sp.org/tlog-checkpoint).
MLDSA44 = 0x06

KEY_ID_SIZE = 4
#: The public key size of each known signature type.
KEY_SIZES = {ED25519: 32, COSIGNATURE_V1: 32, MLDSA44: 1312}
#: The algorithm of each known signature type, as key directories and trust stores name it.
ALGORITHMS = {ED25519: "Ed25519", COSIGNATURE_V1: "Ed25519", MLDSA44: "ML-DSA-44"}
#: ASCII control characters other than newline, which notes and key names must not contain.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f]")
_HEX8 = re.compile("[0-9a-fA-F]{8}")


def is_valid_name(name: str) -> bool:
    """A key name: non-empty, no Unicode space, no plus, no control character."""
    return (
        bool(name)
        and "+" not in name
        and not any(char.isspace() for char in name)
        and CONTROL.search(name) is None
    )


def key_id(name: str, signature_type: int, public_key: bytes) -> int:
    """SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4], as a big-endian uint32."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([signature_type]) + public_key)
    return int.from_bytes(digest.digest()[:KEY_ID_SIZE], "big")


class NoteVerifier(Protocol):
    """Verifies one key's signatures; ``(name, key_id)`` identifies the key."""

    @property
    def name(self) -> str: ...

    @property
    def key_id(self) -> int: ...

    def verify(self, message: bytes, signature: bytes) -> bool:
        """True when ``signature`` (without the key ID) is valid over the note text."""
        ...


class NoteSigner(Protocol):
    """Signs note texts with one key."""

    @property
    def name(self) -> str: ...

    @property
    def key_id(self) -> int: ...

    def sign(self, message: bytes) -> bytes:
        """The signature bytes (without the key ID) over the note text."""
        ...


# --- verifier keys -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerifierKey:
    """A parsed vkey ``<name>+<key ID hex>+<base64(signature type ‖ public key)>``."""

    name: str
    signature_type: int
    public_key: bytes

    @property
    def key_id(self) -> int:
        return key_id(self.name, self.signature_type, self.public_key)

    def __str__(self) -> str:
        material = strict_base64.encode(bytes([self.signature_type]) + self.public_key)
        return f"{self.name}+{self.key_id:08x}+{material}"


def encode_vkey(name: str, signature_type: int, public_key: bytes) -> str:
    """The vkey text of a key; refuses an invalid name."""
    if not is_valid_name(name):
        raise TlogError("name_invalid", f"key name {name!r} is empty or has a space or '+'")
    return str(VerifierKey(name, signature_type, public_key))


def parse_vkey(text: str) -> VerifierKey:
    """Parse and check a vkey: name rules, 8 hex digits, canonical base64, matching key ID.

    Only the known types are accepted: 0x01 and 0x04 (Ed25519, 32-byte keys) and 0x06
    (ML-DSA-44, 1312-byte keys).
    """
    name, _, rest = text.partition("+")
    id_hex, _, material_b64 = rest.partition("+")
    evidence = {"vkey": text}
    if not is_valid_name(name):
        raise TlogError("key_malformed", "vkey name is empty or has a space or '+'", evidence)
    if not _HEX8.fullmatch(id_hex):
        raise TlogError("key_malformed", "vkey key ID is not 8 hex digits", evidence)
    material = strict_base64.decode(material_b64)
    if not material:
        raise TlogError("key_malformed", "vkey key material is not canonical base64", evidence)
    signature_type, public_key = material[0], material[1:]
    size = KEY_SIZES.get(signature_type)
    if size is None:
        message = (
            f"vkey signature type 0x{signature_type:02x} is not Ed25519 (0x01 or 0x04)"
            " nor ML-DSA-44 (0x06)"
        )
        raise TlogError("key_unsupported", message, evidence)
    if len(public_key) != size:
        algorithm = ALGORITHMS[signature_type]
        message = f"vkey {algorithm} key has {len(public_key)} bytes, not {size}"
        raise TlogError("key_malformed", message, evidence)
    key = VerifierKey(name, signature_type, public_key)
    if key.key_id != int(id_hex, 16):
        raise TlogError(
            "key_hash_mismatch",
            f"vkey says key ID {id_hex}, the key's is {key.key_id:08x}",
            {**evidence, "expected": f"{key.key_id:08x}", "found": id_hex},
        )
    return key


# --- Ed25519 keys --------------------------------------------------------------------------


class Ed25519Signing(Protocol):
    """An Ed25519 private key as the signers use it: ``cryptography``'s, or one in a hardware
    module (recordseal.crypto.hsm.ModuleEd25519Key)."""

    def sign(self, data: bytes) -> bytes: ...
    def public_key(self) -> Ed25519PublicKey: ...


def raw_public_key(private_key: Ed25519Signing) -> bytes:
    return private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def ed25519_verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class NamedPublicKey:
    """A public key under a key name, for one signature type (C2SP key IDs and vkeys)."""

    SIGNATURE_TYPE: ClassVar[int]

    name: str
    public_key: bytes

    @classmethod
    def from_vkey(cls, vkey: str) -> Self:
        """From a vkey of this class's type (another type names a different key ID: refused)."""
        key = parse_vkey(vkey)
        if key.signature_type != cls.SIGNATURE_TYPE:
            message = (
                f"vkey of {key.name} has type 0x{key.signature_type:02x},"
                f" expected 0x{cls.SIGNATURE_TYPE:02x}"
            )
            raise TlogError("key_unsupported", message, {"vkey": vkey})
        return cls(key.name, key.public_key)

    @property
    def key_id(self) -> int:
        return key_id(self.name, self.SIGNATURE_TYPE, self.public_key)

    @property
    def vkey(self) -> str:
        return encode_vkey(self.name, self.SIGNATURE_TYPE, self.public_key)


@dataclass(frozen=True, slots=True)
class Ed25519Verifier(NamedPublicKey):
    """Verifies plain Ed25519 note signatures (type 0x01), e.g. a log's checkpoints."""

    SIGNATURE_TYPE: ClassVar[int] = ED25519

    def verify(self, message: bytes, signature: bytes) -> bool:
        return ed25519_verify(self.public_key, message, signature)


class NamedEd25519Key:
    """An Ed25519 private key under a key name, for one signature type (C2SP key IDs)."""

    SIGNATURE_TYPE: int

    def __init__(self, name: str, private_key: Ed25519Signing) -> None:
        if not is_valid_name(name):
            raise TlogError("name_invalid", f"key name {name!r} is empty or has a space or '+'")
        self._name = name
        self._private = private_key
        self._public = raw_public_key(private_key)

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> Self:
        """The key for a 32-byte RFC 8032 private key (seed)."""
        return cls(name, Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def generate(cls, name: str) -> Self:
        return cls(name, Ed25519PrivateKey.generate())

    @property
    def name(self) -> str:
        return self._name

    @property
    def public_key(self) -> bytes:
        return self._public

    @property
    def key_id(self) -> int:
        return key_id(self._name, self.SIGNATURE_TYPE, self._public)


class Ed25519Signer(NamedEd25519Key):
    """Signs notes with an Ed25519 key under a key name (type 0x01)."""

    SIGNATURE_TYPE = ED25519

    def verifier(self) -> Ed25519Verifier:
        return Ed25519Verifier(self._name, self._public)

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)

"""The log (checkpoint) keys in the keys directory, and their rotation (docs/operations.md,
"Keys"; docs/tlog.md, "Rotating the log key").

``log-signing.ed25519`` is the first log key; ``recordseal keys rotate log`` adds
``log-signing-<n>.ed25519``. A key in a hardware module is a ``.pkcs11`` file of the same name
instead, holding its URI (crypto/hsm.py; ``keys init log --hsm URI``, ``keys rotate log
--hsm URI``). Each generation also has an ML-DSA-44 key, ``log-signing.ml-dsa-44`` and
``log-signing-<n>.ml-dsa-44`` (a 32-byte FIPS 204 seed: no PKCS#11 module here has ML-DSA),
made with its Ed25519 key, or at the first start of a data directory that has none. When the
generation's Ed25519 key is in a module, its ML-DSA-44 seed is written wrapped under an AES key
generated in that module (``log-signing[-<n>].ml-dsa-44.wrapped``, crypto/wrapped_seeds.py),
never in the clear: every checkpoint carries both algorithms' signatures (docs/tlog.md, "Dual-signed
checkpoints"). Every key not marked retired (``<file>.retired`` beside it) signs
each checkpoint: during a rotation a checkpoint is a signed note with both generations'
signatures, so a witness that knows either accepts it and the log never stops being
witnessed.
``recordseal keys rotate log --complete`` retires all but the newest once every witness knows
it. A retired key signs nothing more but stays in the key directory, so every checkpoint it
signed keeps verifying. The sealer re-reads the directory at most every ``RELOAD_SECONDS``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from recordseal.crypto.hsm import (
    REFERENCE_SUFFIX,
    ModuleEd25519Key,
    ModuleUri,
    read_public,
    read_reference,
    write_reference,
)
from recordseal.crypto.keyfiles import create_secret, read_or_create_secret, sync_directory
from recordseal.crypto.signing import key_id_of
from recordseal.tlog import Checkpoint, Ed25519Signer, MLDSA44CosignatureSigner, sign_note
from recordseal.tlog.subtree import MLDSA44SigningKey

ED25519 = "Ed25519"
ML_DSA_44 = "ML-DSA-44"
FIRST = "log-signing.ed25519"
#: The first log key when it is in a module.
FIRST_IN_MODULE = "log-signing" + REFERENCE_SUFFIX
MLDSA_SUFFIX = ".ml-dsa-44"
_FIRST = re.compile(r"log-signing\.(ed25519|pkcs11)")
_LATER = re.compile(r"log-signing-([1-9][0-9]{0,5})\.(ed25519|pkcs11)")
_FIRST_MLDSA = re.compile(r"log-signing\.ml-dsa-44(?:\.wrapped)?")
_LATER_MLDSA = re.compile(r"log-signing-([1-9][0-9]{0,5})\.ml-dsa-44(?:\.wrapped)?")
RETIRED = ".retired"
#: Beside a key file: the RFC 3339 time from which the key is known compromised.
COMPROMISED = ".compromised"
RELOAD_SECONDS = 2.0

#: A log key under a log's name: an Ed25519 note signer, or an ML-DSA-44 one that states no
#: time (timestamp 0, docs/tlog.md).
LogSigner = Ed25519Signer | MLDSA44CosignatureSigner


@dataclass(frozen=True, slots=True)
class LogKey:
    generation: int
    path: Path
    #: a key file's seed; None for a key in a module (``location``)
    seed: bytes | None
    retired: bool
    compromised_at: str | None = None
    location: ModuleUri | None = None

    #: a module key's public half, as its reference file records it (or a wrapped ML-DSA-44
    #: seed's, as its file does)
    public: bytes | None = None
    #: ``Ed25519`` or ``ML-DSA-44``
    algorithm: str = ED25519
    #: the module key an ML-DSA-44 seed is wrapped under (None: a plain key file)
    wrapped_by: ModuleUri | None = None

    def private(self) -> Ed25519PrivateKey | ModuleEd25519Key:
        if self.location is not None:
            return ModuleEd25519Key(self.location, self.public)  # opened when it signs
        assert self.seed is not None and self.algorithm == ED25519
        return Ed25519PrivateKey.from_private_bytes(self.seed)

    def signer(self, origin: str) -> LogSigner:
        """The key under a log's name (C2SP: the key name is the origin)."""
        if self.algorithm == ML_DSA_44:
            return MLDSA44CosignatureSigner(origin, self._mldsa(), clock=None)
        return Ed25519Signer(origin, self.private())

    def _mldsa(self) -> MLDSA44SigningKey:
        if self.wrapped_by is not None:
            from recordseal.crypto.wrapped_seeds import WrappedMLDSA44Key

            assert self.public is not None
            return WrappedMLDSA44Key(self.path, self.public)  # unwrapped when it signs
        assert self.seed is not None
        return MLDSA44PrivateKey.from_seed_bytes(self.seed)

    @property
    def key_id(self) -> str:
        """As a header key's: the first 16 hex digits of SHA-256 of the public key."""
        return key_id_of(self.signer("x").public_key)

    @property
    def where(self) -> str:
        """The key file, or the module URI (never a PIN)."""
        if self.wrapped_by is not None:
            return f"{self.path} (wrapped by {self.wrapped_by})"
        return str(self.location) if self.location is not None else str(self.path)


def _files(keys_dir: Path) -> list[tuple[int, Path]]:
    found = []
    for path in keys_dir.iterdir() if keys_dir.is_dir() else []:
        later = _LATER.fullmatch(path.name)
        if _FIRST.fullmatch(path.name):
            found.append((1, path))
        elif later and int(later.group(1)) > 1:
            found.append((int(later.group(1)), path))
    generations = [n for n, _ in found]
    if len(set(generations)) != len(generations):
        raise ValueError(f"{keys_dir}: a log key generation is both a file and a module key")
    return sorted(found)


def _mldsa_files(keys_dir: Path) -> dict[int, Path]:
    found: dict[int, Path] = {}
    for path in keys_dir.iterdir() if keys_dir.is_dir() else []:
        later = _LATER_MLDSA.fullmatch(path.name)
        generation = 1 if _FIRST_MLDSA.fullmatch(path.name) else None
        if later and int(later.group(1)) > 1:
            generation = int(later.group(1))
        if generation is None:
            continue
        if generation in found:
            raise ValueError(f"{keys_dir}: ML-DSA-44 key {generation} is both wrapped and not")
        found[generation] = path
    return found


def _create_mldsa(keys_dir: Path, generation: int, location: ModuleUri | None) -> None:
    """A generation's ML-DSA-44 seed: wrapped in the module of its Ed25519 key, if any."""
    path = mldsa_path(keys_dir, generation)
    if location is None:
        read_or_create_secret(path)
        return
    from recordseal.crypto.wrapped_seeds import SUFFIX, create_wrapped_seed

    create_wrapped_seed(path.with_name(path.name + SUFFIX), location)


def mldsa_path(keys_dir: Path, generation: int) -> Path:
    """The ML-DSA-44 key file of a generation."""
    stem = "log-signing" if generation == 1 else f"log-signing-{generation}"
    return keys_dir / (stem + MLDSA_SUFFIX)


def log_keys(keys_dir: Path) -> list[LogKey]:
    """Every log key by generation, oldest first, each generation's Ed25519 key before its
    ML-DSA-44 one; the first (a file) is made when there is none, and the newest generation's
    ML-DSA-44 key when it has none (a data directory made before ML-DSA-44)."""
    found = _files(keys_dir)
    if not found or found[0][0] != 1:
        read_or_create_secret(keys_dir / FIRST)
        found = _files(keys_dir)
    mldsa = _mldsa_files(keys_dir)
    newest, newest_path = found[-1]
    if newest not in mldsa:
        in_module = newest_path.suffix == REFERENCE_SUFFIX
        _create_mldsa(keys_dir, newest, read_reference(newest_path) if in_module else None)
        mldsa = _mldsa_files(keys_dir)
    keys = []
    for n, path in found:
        keys.append(_read(n, path))
        if n in mldsa:
            keys.append(_read_mldsa(n, mldsa[n]))
    return keys


def has_log_key(keys_dir: Path) -> bool:
    return bool(_files(keys_dir))


def _read(generation: int, path: Path) -> LogKey:
    in_module = path.suffix == REFERENCE_SUFFIX
    return LogKey(
        generation,
        path,
        None if in_module else path.read_bytes(),
        path.with_name(path.name + RETIRED).exists(),
        _compromised_at(path),
        read_reference(path) if in_module else None,
        read_public(path) if in_module else None,
    )


def _read_mldsa(generation: int, path: Path) -> LogKey:
    from recordseal.crypto.wrapped_seeds import SUFFIX, wrapped_by, wrapped_public

    wrapped = path.name.endswith(SUFFIX)
    return LogKey(
        generation,
        path,
        None if wrapped else path.read_bytes(),  # a wrapped seed is unwrapped when it signs
        path.with_name(path.name + RETIRED).exists(),
        _compromised_at(path),
        public=wrapped_public(path) if wrapped else None,
        algorithm=ML_DSA_44,
        wrapped_by=wrapped_by(path) if wrapped else None,
    )


def init_in_module(keys_dir: Path, location: ModuleUri) -> LogKey:
    """The first log key, generated in a module (refused when the directory has a log key)."""
    if has_log_key(keys_dir):
        raise ValueError(f"{keys_dir} has a log key already: rotate it (keys rotate log --hsm)")
    if 1 not in _mldsa_files(keys_dir):
        _create_mldsa(keys_dir, 1, location)
    return _generate(keys_dir / FIRST_IN_MODULE, 1, location)


def _generate(path: Path, generation: int, location: ModuleUri) -> LogKey:
    from recordseal.crypto.hsm import ED25519

    key = location.generate(ED25519)
    write_reference(path, location, key.public_key)
    return _read(generation, path)


def _compromised_at(path: Path) -> str | None:
    marker = path.with_name(path.name + COMPROMISED)
    return marker.read_text().strip() if marker.is_file() else None


def mark_compromised(key: LogKey, at: str) -> None:
    """Record that ``key`` is compromised from ``at`` (the key directory then says so)."""
    marker = key.path.with_name(key.path.name + COMPROMISED)
    marker.write_text(at + "\n")
    marker.chmod(0o600)
    sync_directory(key.path.parent)


def rotate(keys_dir: Path, location: ModuleUri | None = None) -> LogKey:
    """A new generation of log keys, signing beside the current ones from the sealer's next
    re-read: its Ed25519 key (a file, or generated in the module ``location`` names; returned)
    and its ML-DSA-44 key (a file, made first, so the generation never lacks it)."""
    generation = log_keys(keys_dir)[-1].generation + 1
    if location is None:
        create_secret(mldsa_path(keys_dir, generation))
    else:
        _create_mldsa(keys_dir, generation, location)
    if location is not None:
        return _generate(
            keys_dir / f"log-signing-{generation}{REFERENCE_SUFFIX}", generation, location
        )
    path = keys_dir / f"log-signing-{generation}.ed25519"
    return LogKey(generation, path, create_secret(path), False)


def complete(keys_dir: Path) -> list[LogKey]:
    """Retire every key but the newest generation's (they keep verifying); the keys retired
    now."""
    keys = log_keys(keys_dir)
    newest = keys[-1].generation
    retiring = [k for k in keys if k.generation < newest and not k.retired]
    for key in retiring:
        key.path.with_name(key.path.name + RETIRED).touch(mode=0o600)
    if retiring:
        sync_directory(keys_dir)
    return retiring


class LogKeyring:
    """The log keys as the keys directory holds them, re-read at most every RELOAD_SECONDS
    (``keys_dir`` None: fixed keys, never re-read)."""

    def __init__(
        self,
        keys: list[LogKey],
        keys_dir: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys, self._dir, self._clock = keys, keys_dir, clock
        self._checked = clock()

    @classmethod
    def of_directory(cls, keys_dir: Path) -> LogKeyring:
        return cls(log_keys(keys_dir), keys_dir)

    @classmethod
    def of_seed(cls, seed: bytes, mldsa_seed: bytes | None = None) -> LogKeyring:
        """Fixed keys (tests and tools that hold the seeds): an Ed25519 key, and an ML-DSA-44
        key beside it when ``mldsa_seed`` is given."""
        keys = [LogKey(1, Path(FIRST), seed, False)]
        if mldsa_seed is not None:
            keys.append(LogKey(1, mldsa_path(Path(), 1), mldsa_seed, False, algorithm=ML_DSA_44))
        return cls(keys)

    def follow(self) -> None:
        if self._dir is None or self._clock() - self._checked < RELOAD_SECONDS:
            return
        self._checked = self._clock()
        self._keys = log_keys(self._dir)

    @property
    def keys(self) -> list[LogKey]:
        return list(self._keys)

    def signing(self, origin: str) -> list[LogSigner]:
        """The signers of a checkpoint of ``origin``: every key not retired."""
        self.follow()
        return [k.signer(origin) for k in self._keys if not k.retired]

    def compromise_of(self, vkey: str) -> str | None:
        """When the log key of ``vkey`` (under any log's name) is known compromised, or None."""
        self.follow()
        public = vkey.rsplit("+", 1)[-1]
        for key in self._keys:
            if key.compromised_at and key.signer("x").verifier().vkey.rsplit("+", 1)[-1] == public:
                return key.compromised_at
        return None

    def every(self, origin: str) -> list[LogSigner]:
        """Every key of ``origin``, retired ones too: what verifies its checkpoints."""
        self.follow()
        return [k.signer(origin) for k in self._keys]


def as_signers(found: LogSigner | Sequence[LogSigner]) -> list[LogSigner]:
    """One signer or several, as a list (callers that hold one key give one)."""
    return [found] if isinstance(found, LogSigner) else list(found)


def checkpoint_signer(signers: Sequence[LogSigner], origin: str) -> Callable[[int, bytes], str]:
    """``sign(size, root)``: the checkpoint note of ``origin`` signed by every key of
    ``signers`` (Ed25519 and ML-DSA-44, of two generations during a rotation). The one way a
    checkpoint is signed: the sealer's, of tenant logs and the aggregate alike
    (``Sealer.checkpoint_signer``), and ``recordseal recover``'s (a successor's first
    checkpoint, the aggregate taken up again)."""
    keys = list(signers)

    def sign(size: int, root: bytes) -> str:
        return sign_note(Checkpoint(origin, size, root).text(), keys)

    return sign

"""Secret seeds kept wrapped under a key in a PKCS#11 module (docs/operations.md, "Keys in a
hardware module"): for a key whose algorithm the module lacks (ML-DSA-44), the seed is
encrypted there with AES-256-GCM under an AES key generated in the module (sensitive and
unextractable, as every key recordseal makes there), and only the ciphertext is written.
Reading the seed needs the module and its PIN; the file alone gives nothing.

The file (mode 0600) is JSON: ``format`` (:data:`FORMAT`), ``key`` (the wrapping key's
``pkcs11:`` URI, never a PIN), ``nonce`` and ``ciphertext`` (hex; the ciphertext carries the
GCM tag), and ``public_key`` (hex: the ML-DSA-44 public key, so that what needs only the
public half, such as the key directory or a supervisor before it forks its workers, never
opens the module). The associated data binds the ciphertext to the file's name, so a wrapped seed
moved to another name does not unwrap.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey, MLDSA44PublicKey

from recordseal.crypto.errors import CryptoError
from recordseal.crypto.hsm import AES256, ModuleUri, open_key
from recordseal.crypto.keyfiles import create_file

FORMAT = "recordseal/wrapped-seed/v1"
SUFFIX = ".wrapped"
#: What the wrapping key of a module key ``object`` is labelled.
WRAP_LABEL = "-seed-wrap"


class WrappedSeedError(CryptoError, ValueError):
    """A wrapped seed file that cannot be read or unwrapped; the text names the file."""


def wrapping_key(location: ModuleUri) -> ModuleUri:
    """The AES key that wraps the seeds beside the module key ``location`` (made on first
    use, in the same token)."""
    wrap = location.with_object(location.object + WRAP_LABEL)
    if not wrap.open_token().has(wrap.object):
        wrap.generate(AES256)
    return wrap


def _associated(path: Path) -> bytes:
    return f"{FORMAT}\0{path.name}".encode()


@contextlib.contextmanager
def _making(directory: Path) -> Iterator[None]:
    """Held while a wrapping key and a wrapped seed are made: the processes of one service
    (its workers) start together, and a token must not get two keys of one label."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(directory, os.O_RDONLY)  # the directory itself: no lock file among the keys
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def create_wrapped_seed(path: Path, location: ModuleUri, size: int = 32) -> bytes:
    """The seed of ``path``: made at random and written there wrapped under the wrapping key
    beside the module key ``location`` (:func:`wrapping_key`), unless a process made it
    first."""
    with _making(path.parent):
        if path.exists():
            return read_wrapped_seed(path)
        return _create(path, wrapping_key(location), size)


def _create(path: Path, wrap: ModuleUri, size: int) -> bytes:
    seed = secrets.token_bytes(size)
    nonce = secrets.token_bytes(12)
    ciphertext = open_key(wrap, AES256).encrypt(nonce, seed, _associated(path))
    public = MLDSA44PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw()
    document = {
        "format": FORMAT,
        "key": str(wrap),
        "nonce": nonce.hex(),
        "ciphertext": ciphertext.hex(),
        "public_key": public.hex(),
    }
    if not create_file(path, (json.dumps(document, indent=2) + "\n").encode()):
        return read_wrapped_seed(path)  # another process made it first
    return seed


def wrapped_by(path: Path) -> ModuleUri:
    """The module key a wrapped seed file names."""
    return ModuleUri.parse(_document(path)["key"])


def wrapped_public(path: Path) -> bytes:
    """The ML-DSA-44 public key a wrapped seed file records (read without the module)."""
    try:
        return bytes.fromhex(_document(path)["public_key"])
    except (KeyError, ValueError) as error:
        raise WrappedSeedError(f"{path}: no public key recorded ({error})") from None


#: The keys unwrapped in this process, by (pid, file, public key): the log's keys are re-read
#: every few seconds, and each checkpoint is signed with them.
_unwrapped: dict[tuple[int, str, bytes], MLDSA44PrivateKey] = {}


class WrappedMLDSA44Key:
    """An ML-DSA-44 private key whose seed is wrapped in a module: its public half from the
    file; the seed unwrapped when it first signs in a process (a module's sessions do not
    cross a fork), and checked against that public half."""

    def __init__(self, path: Path, public: bytes) -> None:
        self.path = path
        self._public = public

    def public_key(self) -> MLDSA44PublicKey:
        return MLDSA44PublicKey.from_public_bytes(self._public)

    def sign(self, data: bytes) -> bytes:
        return self._private().sign(data)

    def _private(self) -> MLDSA44PrivateKey:
        found = (os.getpid(), str(self.path.resolve()), self._public)
        if found not in _unwrapped:
            key = MLDSA44PrivateKey.from_seed_bytes(read_wrapped_seed(self.path))
            if key.public_key().public_bytes_raw() != self._public:
                raise WrappedSeedError(f"{self.path}: the seed is not the recorded key's")
            _unwrapped[found] = key
        return _unwrapped[found]

    def __repr__(self) -> str:
        return f"WrappedMLDSA44Key({self.path})"


def read_wrapped_seed(path: Path) -> bytes:
    """The seed of a wrapped seed file, unwrapped in the module its file names."""
    document = _document(path)
    try:
        wrap = ModuleUri.parse(document["key"])
        nonce, ciphertext = bytes.fromhex(document["nonce"]), bytes.fromhex(document["ciphertext"])
    except (KeyError, ValueError) as error:
        raise WrappedSeedError(f"{path}: not a wrapped seed of {FORMAT} ({error})") from None
    try:
        return open_key(wrap, AES256).decrypt(nonce, ciphertext, _associated(path))
    except (CryptoError, InvalidTag) as error:
        why = "its tag does not verify" if isinstance(error, InvalidTag) else str(error)
        raise WrappedSeedError(f"{path}: the module did not unwrap it ({why})") from None


def _document(path: Path) -> dict[str, str]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise WrappedSeedError(f"{path}: cannot be read ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise WrappedSeedError(f"{path}: not a wrapped seed of {FORMAT}")
    return document

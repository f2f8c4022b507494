"""The log (checkpoint) keys in the keys directory, and their rotation (docs/operations.md,
"Keys"; docs/tlog.md, "Rotating the log key").

``log-signing.ed25519`` is the first log key; ``recordseal keys rotate log`` adds
``log-signing-<n>.ed25519``. Every key not marked retired (``<file>.retired`` beside it) signs
each checkpoint: during a rotation a checkpoint is a signed note with both keys' signatures,
so a witness that knows either accepts it and the log never stops being witnessed.
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

from recordseal.crypto.keyfiles import create_secret, read_or_create_secret, sync_directory
from recordseal.tlog import Ed25519Signer

FIRST = "log-signing.ed25519"
_LATER = re.compile(r"log-signing-([1-9][0-9]{0,5})\.ed25519")
RETIRED = ".retired"
#: Beside a key file: the RFC 3339 time from which the key is known compromised.
COMPROMISED = ".compromised"
RELOAD_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class LogKey:
    generation: int
    path: Path
    seed: bytes
    retired: bool
    compromised_at: str | None = None

    def signer(self, origin: str) -> Ed25519Signer:
        """The key under a log's name (C2SP: the key name is the origin)."""
        return Ed25519Signer.from_seed(origin, self.seed)


def log_keys(keys_dir: Path) -> list[LogKey]:
    """Every log key by generation, oldest first; the first is made when there is none."""
    if not (keys_dir / FIRST).is_file():
        read_or_create_secret(keys_dir / FIRST)
    found = [(1, keys_dir / FIRST)]
    for path in keys_dir.iterdir():
        match = _LATER.fullmatch(path.name)
        if match and int(match.group(1)) > 1:
            found.append((int(match.group(1)), path))
    return [
        LogKey(
            n,
            path,
            path.read_bytes(),
            path.with_name(path.name + RETIRED).exists(),
            _compromised_at(path),
        )
        for n, path in sorted(found)
    ]


def _compromised_at(path: Path) -> str | None:
    marker = path.with_name(path.name + COMPROMISED)
    return marker.read_text().strip() if marker.is_file() else None


def mark_compromised(key: LogKey, at: str) -> None:
    """Record that ``key`` is compromised from ``at`` (the key directory then says so)."""
    marker = key.path.with_name(key.path.name + COMPROMISED)
    marker.write_text(at + "\n")
    marker.chmod(0o600)
    sync_directory(key.path.parent)


def rotate(keys_dir: Path) -> LogKey:
    """A new log key, signing beside the current ones from the sealer's next re-read."""
    generation = log_keys(keys_dir)[-1].generation + 1
    path = keys_dir / f"log-signing-{generation}.ed25519"
    return LogKey(generation, path, create_secret(path), False)


def complete(keys_dir: Path) -> list[LogKey]:
    """Retire every key but the newest (they keep verifying); the keys retired now."""
    keys = log_keys(keys_dir)
    retiring = [k for k in keys[:-1] if not k.retired]
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
    def of_seed(cls, seed: bytes) -> LogKeyring:
        """One fixed key (tests and tools that hold the seed)."""
        return cls([LogKey(1, Path(FIRST), seed, False)])

    def follow(self) -> None:
        if self._dir is None or self._clock() - self._checked < RELOAD_SECONDS:
            return
        self._checked = self._clock()
        self._keys = log_keys(self._dir)

    @property
    def keys(self) -> list[LogKey]:
        return list(self._keys)

    def signing(self, origin: str) -> list[Ed25519Signer]:
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

    def every(self, origin: str) -> list[Ed25519Signer]:
        """Every key of ``origin``, retired ones too: what verifies its checkpoints."""
        self.follow()
        return [k.signer(origin) for k in self._keys]


def as_signers(found: Ed25519Signer | Sequence[Ed25519Signer]) -> list[Ed25519Signer]:
    """One signer or several, as a list (callers that hold one key give one)."""
    return [found] if isinstance(found, Ed25519Signer) else list(found)

"""The key-encryption keys in the keys directory (docs/operations.md, "Keys").

``kek.key`` is KEK 1; ``recordseal keys rotate kek`` adds ``kek-<n>.key``, re-wraps every
subject key under it and then destroys the older KEK files. ``subject-index.key`` holds the
subject index key (HKDF of KEK 1), written before KEK 1 is ever destroyed: the subject index
is how a subject id finds its row, so it never changes. ``kek-rotation`` names the generation
a rotation under way re-wraps to, so a rotation that was interrupted resumes instead of
starting another. Every process follows the directory (``DirectoryWrapper``), so it unwraps
with every KEK there and wraps with the newest within ``RELOAD_SECONDS``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from recordseal.crypto.keyfiles import create_secret, read_or_create_secret, sync_directory
from recordseal.crypto.vault import KeyWrapper, subject_index_key

FIRST = "kek.key"
INDEX = "subject-index.key"
ROTATION = "kek-rotation"
_LATER = re.compile(r"kek-([1-9][0-9]{0,2})\.key")
RELOAD_SECONDS = 2.0


def kek_files(keys_dir: Path) -> dict[int, Path]:
    """The KEK files by generation."""
    found = {1: keys_dir / FIRST} if (keys_dir / FIRST).is_file() else {}
    if keys_dir.is_dir():
        for path in keys_dir.iterdir():
            match = _LATER.fullmatch(path.name)
            if match and 1 < int(match.group(1)) <= 255:
                found[int(match.group(1))] = path
    return found


def load_wrapper(keys_dir: Path) -> KeyWrapper:
    """The wrapper of every KEK in ``keys_dir`` (KEK 1 made when there is none)."""
    files = kek_files(keys_dir)
    if not files:
        read_or_create_secret(keys_dir / FIRST)
        files = kek_files(keys_dir)
    keks = {generation: path.read_bytes() for generation, path in files.items()}
    index = keys_dir / INDEX
    return KeyWrapper(keks, index.read_bytes() if index.is_file() else None)


def rotation_target(keys_dir: Path) -> int | None:
    """The generation an interrupted rotation re-wraps to, or None."""
    marker = keys_dir / ROTATION
    return int(marker.read_text()) if marker.is_file() else None


def begin_rotation(keys_dir: Path) -> int:
    """A new KEK (and the index key's own file, the first time); the rotation marked under
    way. Returns its generation."""
    files = kek_files(keys_dir)
    index = keys_dir / INDEX
    if not index.is_file():
        index_key = subject_index_key(files[1].read_bytes())
        _write(index, index_key)
    generation = max(files) + 1
    if generation > 255:
        raise ValueError("255 KEK generations are used up")
    create_secret(keys_dir / f"kek-{generation}.key")
    _write(keys_dir / ROTATION, str(generation).encode())
    return generation


def finish_rotation(keys_dir: Path, generation: int) -> list[str]:
    """Destroy every KEK file older than ``generation`` (every subject key is re-wrapped) and
    end the rotation; the names of the files destroyed."""
    destroyed = []
    for older, path in sorted(kek_files(keys_dir).items()):
        if older < generation:
            size = path.stat().st_size
            with path.open("r+b") as handle:  # overwrite before unlinking, as far as a file
                handle.write(bytes(size))  # system lets us
            path.unlink()
            destroyed.append(path.name)
    (keys_dir / ROTATION).unlink(missing_ok=True)
    sync_directory(keys_dir)
    return destroyed


def _write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.chmod(0o600)
    temporary.rename(path)
    sync_directory(path.parent)


class DirectoryWrapper(KeyWrapper):
    """A KeyWrapper that follows the keys directory, re-read at most every RELOAD_SECONDS."""

    def __init__(self, keys_dir: Path, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._dir, self._clock = keys_dir, clock
        self._adopt(load_wrapper(keys_dir))
        self._seen = self._listing()
        self._checked = clock()

    def _listing(self) -> list[str]:
        return sorted(p.name for p in kek_files(self._dir).values())

    def _follow(self) -> None:
        if self._clock() - self._checked < RELOAD_SECONDS:
            return
        self._checked = self._clock()
        listing = self._listing()
        if listing != self._seen:
            self._adopt(load_wrapper(self._dir))
            self._seen = listing

    def wrap(self, tenant: str, subject_ref: str, key: bytes) -> bytes:
        self._follow()
        return super().wrap(tenant, subject_ref, key)

    def unwrap(self, tenant: str, subject_ref: str, wrapped: bytes) -> bytes:
        self._follow()
        return super().unwrap(tenant, subject_ref, wrapped)

"""Secret files in the data directory: created once, readable by the owner only."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path


def read_or_create_secret(path: Path, size: int = 32) -> bytes:
    """Return the bytes in ``path``, creating it with random bytes (mode 0600) on first use.

    The file appears at ``path`` only once it is complete: the bytes go to a temporary file in
    the same directory, are flushed to disk, and the file is then hard-linked into place.
    ``link`` refuses an existing name, so processes starting together (the workers of one
    ``serve``) agree on the first key linked, and a process killed mid-creation leaves at most
    a stray temporary file, never an empty or short key.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data, _ = _create(path, secrets.token_bytes(size))
    if len(data) != size:
        raise RuntimeError(f"{path} holds {len(data)} bytes, expected {size}")
    return data


def create_secret(path: Path, size: int = 32) -> bytes:
    """Random bytes in a new file at ``path`` (mode 0600), complete once it is there; the
    bytes of the file already there when another process made it first."""
    return _create(path, secrets.token_bytes(size))[0]


def create_file(path: Path, data: bytes) -> bool:
    """``data`` in a new file at ``path`` (mode 0600), complete once it is there; False, and
    nothing written, when ``path`` exists already."""
    return _create(path, data)[1]


def _create(path: Path, data: bytes) -> tuple[bytes, bool]:
    """The bytes at ``path`` and whether they are ``data``, written now."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:  # mkstemp creates the file with mode 0600
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return path.read_bytes(), False  # another process linked its file first
        sync_directory(path.parent)
        return data, True
    finally:
        os.unlink(temporary)


def sync_directory(directory: Path) -> None:
    """fsync a directory, so a file created, renamed or removed in it stays so after a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""The data directory: readable by its owner only, and what the service last ran with.

``recordseal`` sets its umask to 077, so every file it or its workers create (SQLite databases
and their journals, keys, the audit and transparency files) is 0600 and every directory 0700;
:func:`secure` also tightens a directory made by an older version. The exports of
``keys export`` are public and written 0644 on purpose.

``service.json`` records the witnesses, time-stamping authorities and quorum ``serve`` runs
with (its demo witness included), so ``keys export --data-dir`` writes the trust store of the
running service, not of the shell it is typed in (docs/operations.md, "Quick start"), and the
host and port it listens on, so ``panel link --data-dir`` prints a link to that port.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import msgspec

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
SERVICE_FILE = "service.json"
SERVICE_FORMAT = "recordseal/service/v1"


class ServiceRecord(msgspec.Struct, forbid_unknown_fields=True):
    """What ``serve`` last started with: the sources of the trust store, and where it
    listens (absent from the files of versions before it was recorded)."""

    format: str
    witnesses: list[dict[str, Any]]
    timestamp_authorities: list[dict[str, Any]]
    quorum: int
    started_at: str
    host: str | None = None
    port: int | None = None


class DataDirError(RuntimeError):
    """A data directory that cannot be created or used: ``path``, and ``reason`` (the
    system's answer, e.g. ``Permission denied``). The root of this module's errors: the data
    directory sits in the lowest layer, below every other root (docs/layers.md)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: cannot be used as a directory ({reason})")
        self.path = path
        self.reason = reason


def owner_only() -> None:
    """From now on this process (and its children) creates files 0600, directories 0700."""
    os.umask(0o077)


def secure(data_dir: Path) -> Path:
    """Create ``data_dir`` (0700), tighten what is already in it, and return its absolute
    path. Files of others' access (group or world bits) are made 0600, directories 0700."""
    owner_only()
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=DIRECTORY_MODE)
        _tighten(data_dir, DIRECTORY_MODE)
        for root, directories, files in os.walk(data_dir):
            for name in directories:
                _tighten(Path(root, name), DIRECTORY_MODE)
            for name in files:
                _tighten(Path(root, name), FILE_MODE)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DataDirError(data_dir, reason) from None
    return data_dir.resolve()


def _tighten(path: Path, mode: int) -> None:
    try:
        current = path.lstat()
    except FileNotFoundError:  # a journal removed meanwhile
        return
    if stat.S_ISLNK(current.st_mode):
        return
    if stat.S_IMODE(current.st_mode) & 0o077:
        path.chmod(stat.S_IMODE(current.st_mode) & mode)


def write_service_record(data_dir: Path, record: ServiceRecord) -> None:
    """Replace ``service.json`` atomically."""
    path = data_dir / SERVICE_FILE
    temporary = path.with_name(f".{SERVICE_FILE}.{os.getpid()}.tmp")
    temporary.write_bytes(msgspec.json.format(msgspec.json.encode(record)) + b"\n")
    os.replace(temporary, path)


def read_service_record(data_dir: Path) -> ServiceRecord | None:
    """What ``serve`` last started with in ``data_dir``; None if it never started there."""
    try:
        return msgspec.json.decode((data_dir / SERVICE_FILE).read_bytes(), type=ServiceRecord)
    except FileNotFoundError:
        return None

"""``recordseal restore``: put a SQLite data directory back to what ``recordseal backup``
copied (docs/operations.md, "Backup, restore and failover").

The backup is checked first, whole: its ``backup.json`` (``storage.backup.FORMAT``, SQLite)
and every database it lists, by size and SHA-256. Nothing of the data directory is touched
before that. Then its databases are moved aside, with their ``-wal`` and ``-shm`` files (a
stale write-ahead log beside a restored database would be replayed into it and corrupt it),
into ``before-restore-<time>/`` of the data directory, and the copies put in their place,
each written to a temporary name, fsynced and renamed. The result is the database as the
backup had it: the keys and the continuity journal are left as they are (the journal is what
tells the next start what the restore forgot). ``service.json`` and the fleet transparency
files are copied back only where the data directory lost them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recordseal import clock
from recordseal.crypto.keyfiles import sync_directory
from recordseal.storage.backup import FORMAT, MANIFEST, STORE_FILE, file_sha256
from recordseal.storage.errors import StorageError

#: The files beside a SQLite database that belong to its state.
SIDE_FILES = ("-wal", "-shm", "-journal")
#: The lock the sealing process of a running service holds (``sqlite.logs``).
SEALER_LOCK = "sealer.lock"


class RestoreRefused(StorageError, RuntimeError):
    """Nothing was changed: the backup fails a check, or a service serves the data directory
    (the message says which and what to do)."""


@dataclass(frozen=True)
class Restored:
    """What a restore did: the backup's manifest, the databases put back, and where the
    databases they replaced were moved (None when the data directory held none)."""

    manifest: dict[str, Any]
    databases: list[str]
    moved_aside: Path | None
    #: what else was copied back, the data directory having lost it
    also: list[str]


def checked_manifest(backup_dir: Path) -> dict[str, Any]:
    """The backup's manifest, once it and every database it lists check out."""
    try:
        manifest: dict[str, Any] = json.loads((backup_dir / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise RestoreRefused(
            f"{backup_dir} is not a backup: its {MANIFEST} cannot be read ({error});"
            " nothing was changed"
        ) from None
    if manifest.get("format") != FORMAT or manifest.get("backend") != "sqlite":
        raise RestoreRefused(
            f"{backup_dir / MANIFEST} is not a SQLite backup of the format {FORMAT};"
            " nothing was changed"
        )
    names = [d.get("file") for d in manifest.get("databases", [])]
    if STORE_FILE not in names:
        raise RestoreRefused(f"{backup_dir} holds no {STORE_FILE}; nothing was changed")
    for database in manifest["databases"]:
        copy = backup_dir / database["file"]
        if Path(database["file"]).name != database["file"] or not copy.is_file():
            raise RestoreRefused(f"{copy} is missing from the backup; nothing was changed")
        if copy.stat().st_size != database["bytes"] or file_sha256(copy) != database["sha256"]:
            raise RestoreRefused(
                f"{copy} is not the file the backup wrote (its size or SHA-256 differs from"
                f" {MANIFEST}): the backup is damaged; nothing was changed"
            )
    return manifest


@contextlib.contextmanager
def no_sealer(data_dir: Path) -> Iterator[None]:
    """Hold the sealer's lock of ``data_dir`` (RestoreRefused when a running service holds
    it), so that no service starts sealing while the databases are replaced."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with (data_dir / SEALER_LOCK).open("a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RestoreRefused(
                f"a service serves {data_dir} (it holds {SEALER_LOCK}): stop every service"
                " process of this data directory first; nothing was changed"
            ) from None
        yield


def restore(
    backup_dir: Path, data_dir: Path, manifest: dict[str, Any], transparency_dir: Path
) -> Restored:
    """Replace the databases of ``data_dir`` with the backup's (checked by
    :func:`checked_manifest`), and put back ``service.json`` and the transparency files
    (into ``transparency_dir``) where they are lost; the caller holds :func:`no_sealer`."""
    names = [d["file"] for d in manifest["databases"]]
    aside = _move_aside(data_dir, names)
    for name in names:
        temporary = data_dir / f".{name}.restoring"
        shutil.copyfile(backup_dir / name, temporary)
        temporary.chmod(0o600)
        with temporary.open("rb") as file:
            os.fsync(file.fileno())
        temporary.replace(data_dir / name)
    also = []
    if "service.json" in manifest.get("files", []) and not (data_dir / "service.json").exists():
        shutil.copy2(backup_dir / "service.json", data_dir / "service.json")
        also.append("service.json")
    copied = manifest.get("transparency")
    if copied and not transparency_dir.exists():
        shutil.copytree(backup_dir / copied["directory"], transparency_dir)
        also.append(f"{transparency_dir} ({copied['files']} files)")
    sync_directory(data_dir)
    return Restored(manifest, names, aside, also)


def _move_aside(data_dir: Path, names: list[str]) -> Path | None:
    present = [
        data_dir / f"{name}{side}"
        for name in names
        for side in ("", *SIDE_FILES)
        if (data_dir / f"{name}{side}").exists()
    ]
    if not present:
        return None
    aside = data_dir / f"before-restore-{clock.utc_now().replace(':', '')}"
    aside.mkdir(mode=0o700)
    for path in present:
        path.rename(aside / path.name)
    sync_directory(data_dir)
    return aside

"""``recordseal backup``: a consistent online copy of a SQLite data directory
(docs/operations.md, "Backup, restore and failover").

Every SQLite database of the data directory (``*.sqlite3`` files that start with SQLite's
header) is copied with SQLite's online backup API while ``serve`` and its workers go on
writing. The copy runs in steps of :data:`STEP_PAGES` pages inside **one read transaction**
of the source: in WAL mode a reader blocks no writer, and the snapshot it holds is what keeps
the copy consistent and finite. Without it, SQLite starts a stepped backup over whenever
another connection commits between two steps, and under steady ingest such a copy may never
end (tried on an 8 MB database with a process inserting in a loop: in one run it had not
finished after 60 s, in another it started over 9 times; inside one read transaction it took
170 steps, 30 ms, and never started over). While the snapshot is held the WAL cannot be
checkpointed past it, so it grows for the length of the copy, and an erasure's
``wal_checkpoint(TRUNCATE)`` waits for the copy to end (at most the writer's 30 s busy
timeout).

The target also gets ``service.json`` and the fleet transparency files, and ``backup.json``
(:data:`FORMAT`), written last, read from the copies: a target without it is not a backup.
Never copied: ``keys/`` (backed up separately, never beside the database: the KEK with an old
database makes the payloads of subjects erased since readable again) and the continuity
journal (``journal/``: a restore puts back the database and never the journal, which is what
tells the service that the database went back in time). ``ratelimit.sqlite3`` is left out
too: per-address counters of the current minute, kept without durability.

Failures: :class:`BackupRefused` before anything is written (the CLI exits 2);
:class:`BackupFailed` once writing began (exit 1), after removing what was written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recordseal import clock
from recordseal.crypto.keyfiles import sync_directory
from recordseal.storage.errors import StorageError

FORMAT = "recordseal/backup/v1"
MANIFEST = "backup.json"
#: The record store's file: the one database a data directory must hold to be backed up.
STORE_FILE = "recordseal.sqlite3"
#: Files left out, with the reason the manifest gives.
SKIPPED = {
    "ratelimit.sqlite3": "rate-limit counters of the current window, kept without durability",
}
#: What the data directory holds that a backup never copies, with the reason.
NOT_COPIED = {
    "keys": "backed up separately and encrypted, never with the database (docs/operations.md)",
    "journal": "the continuity journal is never restored: it remembers what a restore forgets",
}
#: Pages copied per step of the backup API (4 MiB with SQLite's default 4 KiB pages).
STEP_PAGES = 1024
SQLITE_HEADER = b"SQLite format 3\x00"
TRANSPARENCY_DIR = "transparency"
DIRECTORY_MODE = 0o700


class BackupRefused(StorageError, RuntimeError):
    """Nothing was written: the data directory or the target cannot be used (names it)."""


class BackupFailed(StorageError, RuntimeError):
    """The backup began and failed; what it had written was removed."""


@dataclass(frozen=True)
class Source:
    """What to back up: the data directory, the transparency files' directory (docs/fleets.md)
    and paths never to copy (the continuity journal wherever it is configured)."""

    data_dir: Path
    transparency_dir: Path
    excluded: tuple[Path, ...] = ()


def sqlite_databases(data_dir: Path, excluded: Iterable[Path] = ()) -> list[Path]:
    """The SQLite databases of ``data_dir`` to copy: its ``*.sqlite3`` files that start with
    SQLite's header, but :data:`SKIPPED` and ``excluded``, the record store first."""
    leave_out = {path.resolve() for path in excluded}
    found = []
    for path in sorted(data_dir.glob("*.sqlite3")):
        if path.name in SKIPPED or path.resolve() in leave_out or not path.is_file():
            continue
        with path.open("rb") as file:
            if file.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                continue
        found.append(path)
    return sorted(found, key=lambda path: (path.name != STORE_FILE, path.name))


def check_target(data_dir: Path, target: Path) -> None:
    """Refuse a target inside the data directory, or one that is not an empty directory."""
    resolved = target.resolve()
    if resolved == data_dir.resolve() or resolved.is_relative_to(data_dir.resolve()):
        raise BackupRefused(
            f"backup target {target} is inside the data directory {data_dir}: a backup must"
            " live elsewhere (another disk, another host); nothing was written"
        )
    if target.exists() and not target.is_dir():
        raise BackupRefused(f"backup target {target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise BackupRefused(
            f"backup target {target} is not empty: name a new or empty directory;"
            " nothing was written"
        )


def backup(source: Source, target: Path, recordseal_version: str) -> dict[str, Any]:
    """Copy ``source`` into ``target`` (created if missing) and return the manifest written
    as ``target/backup.json``. Raises :class:`BackupRefused` or :class:`BackupFailed`."""
    data_dir = source.data_dir
    if not (data_dir / STORE_FILE).is_file():
        raise BackupRefused(
            f"no record store to back up: {data_dir / STORE_FILE} does not exist"
            " (check --data-dir / RECORDSEAL_DATA_DIR)"
        )
    check_target(data_dir, target)
    databases = sqlite_databases(data_dir, source.excluded)
    created = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True, mode=DIRECTORY_MODE)
        manifest = _write(source, databases, target, recordseal_version)
    except BaseException as error:
        _remove_output(target, created)
        if isinstance(error, sqlite3.Error | OSError):
            raise BackupFailed(f"backup into {target} failed: {error}") from error
        raise
    return manifest


def _write(
    source: Source, databases: list[Path], target: Path, recordseal_version: str
) -> dict[str, Any]:
    created_at = clock.utc_now()
    copies = []
    for database in databases:
        copy = target / database.name
        pages = copy_database(database, copy)
        copies.append((database, copy, pages))
    described = []
    schema_version: int | None = None
    streams: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    for database, copy, pages in copies:
        with _opened(copy) as db:
            problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise BackupFailed(
                    f"the copy of {database} fails PRAGMA integrity_check: {problems[:5]};"
                    " nothing was kept"
                )
            if database.name == STORE_FILE:
                schema_version, streams, logs = _contents(db)
        described.append(
            {
                "file": copy.name,
                "sha256": file_sha256(copy),
                "bytes": copy.stat().st_size,
                "pages": pages,
            }
        )
    files = []
    service = source.data_dir / "service.json"
    if service.is_file():
        shutil.copy2(service, target / service.name)
        files.append(service.name)
    transparency = None
    if source.transparency_dir.is_dir():
        shutil.copytree(source.transparency_dir, target / TRANSPARENCY_DIR)
        transparency = {
            "directory": TRANSPARENCY_DIR,
            "source": str(source.transparency_dir.resolve()),
            "files": sum(1 for path in (target / TRANSPARENCY_DIR).rglob("*") if path.is_file()),
        }
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "created_at": created_at,
        "recordseal_version": recordseal_version,
        "source": str(source.data_dir.resolve()),
        "backend": "sqlite",
        "schema_version": schema_version,
        "databases": described,
        "files": files,
        "transparency": transparency,
        "streams": streams,
        "logs": logs,
        "not_copied": dict(NOT_COPIED),
        "skipped": {
            name: reason for name, reason in SKIPPED.items() if (source.data_dir / name).exists()
        },
    }
    _write_manifest(target / MANIFEST, manifest)
    return manifest


def copy_database(
    source: Path,
    copy: Path,
    step_pages: int = STEP_PAGES,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Copy the database at ``source`` into the new file ``copy`` with SQLite's backup API,
    in steps, from one snapshot (see the module's note); returns the pages copied.
    ``progress(remaining, total)`` is called after each step."""
    uri = f"{source.resolve().as_uri()}?mode=ro"
    src = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
    try:
        src.execute("PRAGMA busy_timeout = 30000")
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts
        pages = 0

        def stepped(status: int, remaining: int, total: int) -> None:
            nonlocal pages
            pages = total
            if progress is not None:
                progress(remaining, total)

        dst = sqlite3.connect(copy, isolation_level=None)
        try:
            src.backup(dst, pages=step_pages, progress=stepped, sleep=0.05)
        finally:
            dst.close()
        src.execute("COMMIT")
        _fsync(copy)
        return pages
    finally:
        src.close()


@contextlib.contextmanager
def _opened(copy: Path) -> Iterator[sqlite3.Connection]:
    """The copy, read-only; its WAL and shared-memory files are gone once closed."""
    db = sqlite3.connect(copy, isolation_level=None)
    try:
        yield db
    finally:
        db.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)


def _contents(
    db: sqlite3.Connection,
) -> tuple[int | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """The schema version, streams (tenant, name, next_seq) and logs as the copy holds them."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    version = None
    if "schema_version" in tables:
        version = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    streams = []
    if "streams" in tables:
        streams = [
            {"tenant": tenant, "name": name, "next_seq": next_seq}
            for tenant, name, next_seq in db.execute(
                "SELECT tenant, name, next_seq FROM streams ORDER BY tenant, name"
            )
        ]
    logs = []
    if "logs" in tables:
        logs = [
            {"tenant": tenant, "fleet": fleet, "origin": origin, "size": size}
            for tenant, fleet, origin, size in db.execute(
                # a log of no tenant: NULL in a copy before SQLite migration 15, '' from it
                "SELECT nullif(tenant, ''), fleet, origin, size FROM logs"
                " ORDER BY ifnull(tenant, ''), fleet"
            )
        ]
    return version, streams, logs


def _fsync(path: Path) -> None:
    with path.open("rb") as file:
        os.fsync(file.fileno())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w") as file:
        file.write(json.dumps(manifest, indent=2) + "\n")
        file.flush()
        os.fsync(file.fileno())
    temporary.replace(path)
    sync_directory(path.parent)


def _remove_output(target: Path, created: bool) -> None:
    """Remove what a failed backup wrote: the target itself when it made it, else its
    contents (it was empty)."""
    if not target.exists():
        return
    if created:
        shutil.rmtree(target, ignore_errors=True)
        return
    for path in target.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

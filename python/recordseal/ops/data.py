"""``recordseal migrate`` and ``recordseal backup``: the database's schema, and a consistent
copy of a SQLite data directory while the service runs (``storage/backup.py``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from recordseal import __version__, datadir
from recordseal.ops.options import path_option, store_options
from recordseal.ops.stores import print_json, sqlite_settings, with_store
from recordseal.settings import from_env
from recordseal.storage.backends import schema_status
from recordseal.storage.schema_version import SchemaStatus, SchemaTooNew

#: Why ``recordseal backup`` copies SQLite only (docs/operations.md, "Backup, restore and
#: failover").
POSTGRES_BACKUP_REFUSAL = (
    "backup copies a SQLite data directory; this store is PostgreSQL. Back it up with"
    " pg_basebackup or pgBackRest and continuous WAL archiving, which restore to any moment up"
    " to the last archived commit (point-in-time recovery). A pg_dump is not a backup of a"
    " running store: it restores only to the moment it began, and its hours-long snapshot"
    " holds back the VACUUM that reclaims erased payloads. See docs/operations.md, 'Backup,"
    " restore and failover'; nothing was written"
)


STATUS_HELP = (
    "only report the schema version (exit 0 up to date, 1 migrations to apply, 2 newer than"
    " this recordseal)"
)


def register(commands: Any) -> None:
    migrate = commands.add_parser("migrate", help="apply the database schema migrations")
    migrate.add_argument("--status", action="store_true", help=STATUS_HELP)
    store_options(migrate, "the schema version")
    migrate.set_defaults(run=_migrate)
    backup = commands.add_parser(
        "backup",
        help="copy a SQLite data directory while the service runs",
        description="Copy a SQLite data directory's databases consistently while the service"
        " runs (PostgreSQL: refused, use pg_basebackup or pgBackRest).",
    )
    where = "a new or empty directory outside the data directory, for the copies and backup.json"
    path_option(backup, "--to", metavar="DIR", text=where, required=True)
    store_options(backup, "the manifest (backup.json) and the target")
    backup.set_defaults(run=_backup)


def _migrate(args: argparse.Namespace) -> int:
    """Apply the schema migrations and import the panel files of earlier versions (``serve``
    also does both at start)."""
    from recordseal.panel.legacy_import import import_panel_files
    from recordseal.panel.sso.provider_store import SecretBox

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    before = asyncio.run(schema_status(settings))
    if args.status and (args.json or before.state != "ahead"):
        _report_schema(before, args.json, applied=0)
        return {"up_to_date": 0, "behind": 1, "absent": 1, "ahead": 2}[before.state]
    if before.state == "ahead":
        raise SchemaTooNew(before.current, before.latest)
    datadir.secure(settings.data_dir)
    with_store(  # opening migrates
        settings,
        lambda store: import_panel_files(
            store.panel,
            settings.data_dir,
            SecretBox.of_keys(settings.data_dir / "keys"),
            settings.panel_provider_store_path,
        ),
    )
    after = asyncio.run(schema_status(settings))
    _report_schema(after, args.json, applied=after.current - before.current)
    return 0


def _report_schema(status: SchemaStatus, as_json: bool, applied: int) -> None:
    if as_json:
        print_json(
            {
                "backend": status.backend,
                "schema_version": status.current,
                "latest": status.latest,
                "pending": status.pending,
                "applied": applied,
                "state": status.state,
            }
        )
        return
    if applied:
        print(f"recordseal: applied {applied} migration{'s' if applied > 1 else ''}")
    print(f"recordseal: {status.describe()}")


def _backup(args: argparse.Namespace) -> int:
    """A consistent online copy of a SQLite data directory (``storage/backup.py``)."""
    from recordseal.storage.backup import BackupFailed, BackupRefused, Source, backup

    settings = sqlite_settings(args, POSTGRES_BACKUP_REFUSAL)
    if settings is None:
        return 2
    data_dir = settings.data_dir
    # Never the keys (backed up apart) nor the continuity journal (never restored).
    excluded = [data_dir / "keys", settings.journal_dir]
    source = Source(data_dir, settings.transparency_root, tuple(excluded))
    try:
        manifest = backup(source, args.to, __version__)
    except BackupRefused as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 2
    except BackupFailed as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 1
    if args.json:
        print_json({"target": str(args.to), **manifest})
        return 0
    print(_backup_summary(args.to, manifest))
    return 0


def _backup_summary(target: Path, manifest: dict[str, Any]) -> str:
    databases = ", ".join(
        f"{d['file']} ({d['bytes'] / 2**20:.1f} MiB, sha256 {d['sha256'][:12]}…)"
        for d in manifest["databases"]
    )
    extra = list(manifest["files"])
    if manifest["transparency"]:
        extra.append(f"transparency/ ({manifest['transparency']['files']} files)")
    also = f"; {', '.join(extra)}" if extra else ""
    return (
        f"recordseal: backed up {databases}: schema {manifest['schema_version']},"
        f" {len(manifest['streams'])} streams, {len(manifest['logs'])} logs{also} into"
        f" {target} (integrity ok; keys/ and journal/ not copied: back up keys separately)"
    )

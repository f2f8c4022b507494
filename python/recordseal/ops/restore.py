"""``recordseal restore --data-dir D --from BACKUP``: put a SQLite data directory back to a
``recordseal backup`` (``storage/restore.py``), with every service of it stopped, and say what
the next start will fence and that ``recordseal recover`` follows (docs/continuity.md).

PostgreSQL is restored with its own tools (pg_basebackup or pgBackRest): refused here.
Exit codes: 0 restored; 2 refused (the backup fails a check, a service runs, PostgreSQL),
nothing changed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from recordseal.ops.options import path_option, store_options
from recordseal.ops.stores import print_json, sqlite_settings
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal
from recordseal.storage.journal import JournalState
from recordseal.storage.restore import Restored, RestoreRefused, checked_manifest, no_sealer

POSTGRES_RESTORE_REFUSAL = (
    "restore puts back a SQLite data directory; this store is PostgreSQL. Restore it with the"
    " tools that backed it up (pg_basebackup or pgBackRest, docs/operations.md, 'Backup,"
    " restore and failover'), then run `recordseal recover`; nothing was changed"
)


def register(commands: Any) -> None:
    restore = commands.add_parser(
        "restore",
        help="put a SQLite data directory back to a backup",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    written = "the directory `recordseal backup --to` wrote (with its backup.json)"
    path_option(restore, "--from", metavar="BACKUP_DIR", text=written, dest="backup", required=True)
    store_options(restore, "what was restored and what the next start fences")
    restore.set_defaults(run=_restore)


def _restore(args: argparse.Namespace) -> int:
    from recordseal.storage.restore import restore

    settings = sqlite_settings(args, POSTGRES_RESTORE_REFUSAL)
    if settings is None:
        return 2
    try:
        manifest = checked_manifest(args.backup)
        with no_sealer(settings.data_dir):
            journal = asyncio.run(_journal(settings))
            restored = restore(args.backup, settings.data_dir, manifest, settings.transparency_root)
    except RestoreRefused as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 2
    fenced = behind(manifest, journal)
    if args.json:
        print_json(
            {
                "from": str(args.backup),
                "created_at": manifest["created_at"],
                "databases": restored.databases,
                "moved_aside": None if restored.moved_aside is None else str(restored.moved_aside),
                "also": restored.also,
                "fenced": fenced,
            }
        )
        return 0
    _say(args, restored, fenced)
    return 0


async def _journal(settings: Settings) -> JournalState:
    """What the service signed (the continuity journal, which no restore puts back); refused
    while another process writes it (a service runs). None yet: nothing was signed here."""
    if settings.journal_url is None and not settings.journal_dir.is_dir():
        return JournalState()
    journal = open_journal(settings)
    try:
        if await journal.other_writers():
            raise RestoreRefused(
                f"a service is writing the journal {journal.location}: stop every service"
                " process of this data directory first; nothing was changed"
            )
        return await journal.read()
    finally:
        await journal.aclose()


def behind(manifest: dict[str, Any], journal: JournalState) -> dict[str, list[str]]:
    """The streams and logs the service signed past what the backup holds: the next start
    fences them until ``recordseal recover``."""
    streams = {(s["tenant"], s["name"]): s["next_seq"] for s in manifest["streams"]}
    logs = {log["origin"]: log["size"] for log in manifest["logs"]}
    return {
        "streams": [
            f"{tenant}/{name} (the backup ends at seq {streams[(tenant, name)] - 1}, the"
            f" service signed seq {head.seq})"
            for (tenant, name), head in sorted(journal.heads.items())
            if (tenant, name) in streams and head.seq >= streams[(tenant, name)]
        ],
        "logs": [
            f"{origin} (the backup holds size {logs[origin]}, the service signed size"
            f" {signed.size})"
            for origin, signed in sorted(journal.checkpoints.items())
            if origin in logs and signed.size > logs[origin] and origin not in journal.retired
        ],
    }


def _say(args: argparse.Namespace, restored: Restored, fenced: dict[str, list[str]]) -> None:
    manifest = restored.manifest
    print(
        f"recordseal: restored {', '.join(restored.databases)} as the backup of"
        f" {manifest['created_at']} had them"
    )
    if restored.moved_aside is not None:
        print(f"recordseal: the databases they replaced are in {restored.moved_aside}")
    if restored.also:
        also = ", ".join(restored.also)
        print(f"recordseal: also put back, the data directory lacking it: {also}")
    if not (fenced["streams"] or fenced["logs"]):
        print("recordseal: the journal shows nothing signed past the backup: nothing to fence")
        return
    print("recordseal: the next start fences what the service signed past the backup:")
    for name in fenced["streams"]:
        print(f"  stream {name}")
    for name in fenced["logs"]:
        print(f"  log {name}")
    where = "" if args.data_dir is None else f" --data-dir {args.data_dir}"
    print(
        f"recordseal: with the service stopped, run `recordseal recover{where}` to declare"
        " what was lost and start successor logs, then `recordseal keys export` for auditors"
    )

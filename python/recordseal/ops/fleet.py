"""Commands: ``recordseal transparency write|replay`` and ``recordseal fleet check|audit``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordseal.ops.options import data_dir_option, database_url_option, family
from recordseal.settings import Settings, from_env

if TYPE_CHECKING:
    from recordseal.verify.transparency import LogFileName, ReplayedLog


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


async def _write(settings: Settings, root: Path, day: date) -> list[Path]:
    from recordseal.fleet.transparency import write_day
    from recordseal.storage.backends import open_store

    store = open_store(settings)  # PostgreSQL when a database URL is set, else SQLite
    await store.open()
    try:
        return await write_day(store.logs, root, day)
    finally:
        await store.close()


def _transparency_write(args: argparse.Namespace) -> int:
    from recordseal.clock import utc_today

    settings = from_env(
        data_dir=args.data_dir, database_url=args.database_url, transparency_dir=args.root
    )
    day = args.date or utc_today() - timedelta(days=1)
    written = asyncio.run(_write(settings, settings.transparency_root, day))
    if args.json:
        print(json.dumps({"date": day.isoformat(), "files": [str(p) for p in written]}, indent=2))
        return 0
    for path in written:
        print(path)
    return 0


def _transparency_replay(args: argparse.Namespace) -> int:
    from recordseal.tlog import TlogError, cosigner_verifier, log_verifier
    from recordseal.verify.transparency import LogFileName, TransparencyLogError, replay_log_file

    expected = LogFileName.parse(args.expect or args.file)
    if args.expect and expected is None:
        print(
            f"recordseal: --expect {args.expect!r} is not DATE/FLEET.log or DATE/TENANT/FLEET.log",
            file=sys.stderr,
        )
        return 2
    try:
        log_keys = [log_verifier(vkey) for vkey in args.log_vkey]
        witness_keys = [cosigner_verifier(vkey) for vkey in args.witness_vkey]
    except TlogError as error:
        print(f"recordseal: bad vkey: {error}", file=sys.stderr)
        return 2
    try:
        replayed = replay_log_file(
            args.file.read_bytes(),
            log_verifiers=log_keys,
            witness_verifiers=witness_keys,
            expected=None if args.any_name else expected,
        )
    except (OSError, TransparencyLogError) as error:
        code = getattr(error, "code", "unreadable")
        if args.json:
            print(json.dumps({"replayed": False, "code": code, "error": str(error)}, indent=2))
        print(f"recordseal: {args.file}: does not replay ({code}): {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_replayed_json(replayed, bool(log_keys), expected, args), indent=2))
        return 0
    scope = f"tenant {replayed.tenant}" if replayed.tenant else "no tenant"
    print(f"{replayed.origin} ({scope}, fleet {replayed.fleet}) on {replayed.date}")
    print(f"genesis {replayed.genesis.hex()}")
    for anchor in replayed.anchors:
        cosigned = f" cosigned by {', '.join(anchor.cosigned_by)}" if anchor.cosigned_by else ""
        print(f"anchor {anchor.size} {anchor.root.hex()} {anchor.created_at}{cosigned}")
    signed = "signatures verified" if log_keys else "log signatures not checked (no --log-vkey)"
    named = (
        f"it is {expected.path}"
        if expected and not args.any_name
        else "its name was not checked (no --expect, and the path is not DATE/[TENANT/]FLEET.log)"
    )
    print(f"OK: {len(replayed.anchors)} anchor(s) replayed to the genesis root; {signed}; {named}")
    return 0


def _replayed_json(
    replayed: ReplayedLog, signed: bool, expected: LogFileName | None, args: argparse.Namespace
) -> dict[str, Any]:
    return {
        "replayed": True,
        "origin": replayed.origin,
        "tenant": replayed.tenant,
        "fleet": replayed.fleet,
        "date": replayed.date,
        "genesis": replayed.genesis.hex(),
        "anchors": [
            {
                "size": anchor.size,
                "root": anchor.root.hex(),
                "created_at": anchor.created_at,
                "cosigned_by": list(anchor.cosigned_by),
            }
            for anchor in replayed.anchors
        ],
        "signatures_verified": signed,
        "name_checked": bool(expected and not args.any_name),
    }


def _fleet_check(args: argparse.Namespace) -> int:
    from recordseal.fleet.manifest import ManifestError, load_manifest

    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as error:
        if args.json:
            print(json.dumps({"valid": False, "error": str(error)}, indent=2))
        print(f"recordseal: {error}", file=sys.stderr)
        return 1
    if args.json:
        fleets = [
            {
                "id": fleet.id,
                "tenant": fleet.tenant_id,
                "preset": fleet.preset,
                "seed_path": fleet.seed_path,
            }
            for fleet in manifest.fleets
        ]
        print(json.dumps({"valid": True, "fleets": fleets}, indent=2))
        return 0
    for fleet in manifest.fleets:
        print(
            f"{fleet.id}: tenant {fleet.tenant_id or '-'}, preset {fleet.preset or '-'},"
            f" seed_path {fleet.seed_path or '-'}"
        )
    return 0


async def _audit_lines(
    settings: Settings, tenant: str | None, after: int, limit: int | None
) -> list[tuple[int, str]]:
    from recordseal.storage.backends import open_store

    store = open_store(settings)
    await store.open()
    try:
        lines: list[tuple[int, str]] = []
        while limit is None or len(lines) < limit:
            page = 1000 if limit is None else min(1000, limit - len(lines))
            entries = await store.panel.audit_entries(tenant=tenant, after=after, limit=page)
            lines += [(position, entry.line) for position, entry in entries]
            if len(entries) < page:
                break
            after = entries[-1][0]
        return lines
    finally:
        await store.close()


def _fleet_audit(args: argparse.Namespace) -> int:
    """The fleet audit stream as JSON Lines, oldest first (what ``audit.jsonl`` held)."""
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    if not settings.database_url and not settings.database_path.exists():
        print(f"recordseal: no database at {settings.database_path}", file=sys.stderr)
        return 2
    lines = asyncio.run(_audit_lines(settings, args.tenant, args.after, args.limit))
    if args.json:
        events = [{"position": position, "event": json.loads(line)} for position, line in lines]
        print(json.dumps(events, indent=2))
        return 0
    for position, line in lines:
        print(f"{position}\t{line}" if args.positions else line)
    return 0


def register(commands: Any) -> None:
    _register_transparency(commands)
    _register_fleet(commands)


def _register_transparency(commands: Any) -> None:
    transparency = family(
        commands,
        "transparency",
        "daily transparency log files: write, replay",
        "transparency_command",
    )
    write = transparency.add_parser(
        "write", help="write one day's file of every (tenant, fleet) log, replacing old ones"
    )
    data_dir_option(write)
    database_url_option(write)
    write.add_argument(
        "--root",
        type=Path,
        default=None,
        help="directory to write the daily files under (<data-dir>/transparency)",
    )
    write.add_argument("--date", type=_day, default=None, help="UTC day (yesterday)")
    write.add_argument("--json", action="store_true", help="print the files written as JSON")
    write.set_defaults(run=_transparency_write)
    replay = transparency.add_parser(
        "replay", help="replay a day's file back to its genesis root, offline"
    )
    replay.add_argument("file", type=Path, help="the day's file, DATE/[TENANT/]FLEET.log")
    replay.add_argument(
        "--log-vkey", action="append", default=[], help="the log's vkey (checks its signatures)"
    )
    replay.add_argument(
        "--witness-vkey", action="append", default=[], help="a trusted witness's vkey (repeatable)"
    )
    replay.add_argument(
        "--expect",
        default=None,
        help="the name it was published under, DATE/[TENANT/]FLEET.log (default: taken from"
        " the file's path when it ends in that layout)",
    )
    replay.add_argument(
        "--any-name", action="store_true", help="do not check the file's (tenant, fleet, date)"
    )
    replay.add_argument("--json", action="store_true", help="print what was replayed as JSON")
    replay.set_defaults(run=_transparency_replay)


def _register_fleet(commands: Any) -> None:
    fleet = family(
        commands, "fleet", "proxy fleets: check a manifest, read the audit stream", "fleet_command"
    )
    check = fleet.add_parser("check", help="validate a fleet manifest and list its fleets")
    check.add_argument("manifest", type=Path, help="the fleet manifest (TOML)")
    check.add_argument("--json", action="store_true", help="print the fleets as JSON")
    check.set_defaults(run=_fleet_check)
    audit = fleet.add_parser(
        "audit", help="print the fleet audit stream (one JSON object a line, oldest first)"
    )
    data_dir_option(audit)
    database_url_option(audit)
    audit.add_argument("--tenant", default=None, help="only the events of this tenant")
    audit.add_argument(
        "--after", type=int, default=0, help="only events after this position (see --positions)"
    )
    audit.add_argument("--limit", type=int, default=None, help="at most this many events")
    audit.add_argument(
        "--positions", action="store_true", help="prefix each line with its position and a tab"
    )
    audit.add_argument(
        "--json", action="store_true", help="print one JSON array of {position, event} instead"
    )
    audit.set_defaults(run=_fleet_audit)

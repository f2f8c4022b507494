"""The ``recordseal`` command line: ``serve``, ``migrate``, ``token create|list|revoke``,
``tenant create|list|show|freeze|unfreeze``, ``org create|list``, ``keys export``, ``backup``,
``recover``, ``verify``, ``verify-receipt``, ``bundle refresh``, ``ingest``, ``disclose``,
``panel link``, ``witness serve|key``, ``transparency write|replay``, ``fleet check|audit``.

Every command that prints a result takes ``--json``. Scripts rely on the text shape too:
``recordseal token create`` prints the token alone on the last line of standard output.
Exit codes: 0 success, 2 a refusal or bad setting (one line on standard error), 64 a usage
error; ``tenant`` and ``org`` exit 1 for a tenant that does not exist; ``verify`` and
``verify-receipt`` have their own (docs/bundle.md, "The command line";
docs/records.md, "Erasure receipts"); ``backup`` exits 1 when the copy failed once begun (its
partial output removed); ``recover`` exits 1 when a stream or log stays fenced; ``ingest``
exits 1 when lines were refused and 3 when the service failed a whole batch, ``disclose`` 3
when it refused (docs/client.md).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from recordseal import __version__, datadir, logs
from recordseal.client.cli import add_bundle_parser
from recordseal.client.disclose_cli import add_disclose_parser
from recordseal.client.ingest_cli import add_ingest_parser
from recordseal.client.verify_cli import add_url_option
from recordseal.crypto.hsm import KeyLocationError
from recordseal.datadir import DataDirError
from recordseal.fleet.cli import add_fleet_parsers
from recordseal.ledger.errors import RecordServiceError
from recordseal.ops.bench.command import add_bench_parser
from recordseal.ops.config_cli import add_config_parser
from recordseal.ops.doctor import add_doctor_parser
from recordseal.services.errors import ServiceError
from recordseal.services.header_keys import KeyUnavailable
from recordseal.services.key_admin import KeyRefused
from recordseal.services.tokens import TokenService
from recordseal.settings import (
    CONFIG_VARIABLE,
    AuthoritySetting,
    Settings,
    SettingsError,
    WitnessSetting,
    from_env,
    unknown_variables,
)
from recordseal.storage.backends import BackendError, open_journal, open_store, schema_status
from recordseal.storage.schema_version import SchemaStatus, SchemaTooNew
from recordseal.verify.cli import UsageParser, add_verify_parser, add_verify_receipt_parser
from recordseal.witness.cli import add_witness_parser

#: Modes of the files ``keys export`` writes: public material, readable by anyone.
EXPORT_MODE = 0o644


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))


def _serve(args: argparse.Namespace) -> int:
    from recordseal.serve import serve
    from recordseal.web.orphan_guard import SUPERVISOR_VARIABLE
    from recordseal.web.preflight import preflight

    settings = from_env(
        data_dir=args.data_dir, port=args.port, host=args.host, database_url=args.database_url
    )
    refusal = preflight(settings)
    if refusal is not None:
        print(f"recordseal: {refusal.message}", file=sys.stderr)
        return refusal.exit_code
    os.environ[SUPERVISOR_VARIABLE] = str(os.getpid())  # workers end with this process
    return serve(settings, args.workers, args.demo_witness)


async def _create_token(settings: Settings, tenant: str, label: str) -> str:
    store = open_store(settings)
    await store.open()
    try:
        return await TokenService(store.tokens).create(tenant, label)
    finally:
        await store.close()


class MissingDataDir(RecordServiceError):
    """The command would work in a data directory that does not exist (a typo, most often);
    ``path`` is that directory."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"data directory {path} does not exist (no service has run there);"
            " check --data-dir / RECORDSEAL_DATA_DIR, or pass --create-data-dir to create it"
        )
        self.path = path


def _data_dir_for(settings: Settings, create: bool) -> None:
    """Refuse a SQLite data directory that does not exist, unless told to create it: a typo
    would otherwise give an empty database whose tokens and links work nowhere."""
    if settings.database_url or settings.data_dir.is_dir():
        return
    if not create:
        raise MissingDataDir(settings.data_dir)
    settings.data_dir.mkdir(parents=True)


def _token_create(args: argparse.Namespace) -> int:
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, args.create_data_dir)
    datadir.secure(settings.data_dir)
    try:
        token = asyncio.run(_create_token(settings, args.tenant, args.label))
    except ServiceError as error:
        print(f"recordseal: {error} ({error.code})", file=sys.stderr)
        return 2
    if args.json:
        _print_json({"tenant": args.tenant, "label": args.label, "token": token})
        return 0
    print(f"API token for tenant {args.tenant!r} (shown once; keep it secret):", file=sys.stderr)
    print(token)
    return 0


def _token_list(args: argparse.Namespace) -> int:
    from recordseal.services.token_cli import token_list

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, create=False)
    return token_list(args, settings)


def _tenant_command(args: argparse.Namespace) -> int:
    from recordseal.services import tenant_cli

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, getattr(args, "create_data_dir", False))
    datadir.secure(settings.data_dir)
    # A change's audit line (recordseal.panel.audit) goes to standard error, in the
    # service's log format.
    logs.configure(settings.log_format, settings.log_level)  # type: ignore[arg-type]
    result: int = getattr(tenant_cli, f"{args.command}_{args.action}")(args, settings)
    return result


def _token_revoke(args: argparse.Namespace) -> int:
    from recordseal.services.token_cli import token_revoke

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, create=False)
    return token_revoke(args, settings)


async def _export_keys(settings: Settings) -> dict[str, object]:
    from recordseal.services.keys import key_directory

    store = open_store(settings)
    await store.open()
    try:
        from recordseal.ledger.log_keys import LogKeyring

        log_keys = LogKeyring.of_directory(settings.data_dir / "keys")
        return await key_directory(store, log_keys.every, log_keys.compromise_of)
    finally:
        await store.close()


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

    async def run() -> None:
        store = open_store(settings)
        await store.open()  # opening migrates
        try:
            await import_panel_files(
                store.panel,
                settings.data_dir,
                SecretBox.of_keys(settings.data_dir / "keys"),
                settings.panel_provider_store_path,
            )
        finally:
            await store.close()

    asyncio.run(run())
    after = asyncio.run(schema_status(settings))
    _report_schema(after, args.json, applied=after.current - before.current)
    return 0


def _report_schema(status: SchemaStatus, as_json: bool, applied: int) -> None:
    if as_json:
        _print_json(
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


def _trust_of(
    record: datadir.ServiceRecord,
) -> tuple[tuple[WitnessSetting, ...], tuple[AuthoritySetting, ...], int]:
    """The witnesses, authorities and quorum a service recorded at its start."""
    return (
        msgspec.convert(record.witnesses, tuple[WitnessSetting, ...]),
        msgspec.convert(record.timestamp_authorities, tuple[AuthoritySetting, ...]),
        record.quorum,
    )


def _keys_export(args: argparse.Namespace) -> int:
    from recordseal.services.keys import trust_store

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    keys = asyncio.run(_export_keys(settings))
    record = datadir.read_service_record(settings.data_dir)
    if record is not None:
        witnesses, authorities, quorum = _trust_of(record)
        source = f"the service's configuration ({settings.data_dir / datadir.SERVICE_FILE})"
    else:
        witnesses, authorities = settings.witnesses, settings.timestamp_authorities
        quorum = settings.witness_quorum
        source = "this shell's settings (the service has not started in this data directory)"
    trust = trust_store(witnesses, authorities, quorum)
    for path, document in ((args.keys_out, keys), (args.trust_out, trust)):
        path.write_text(json.dumps(document, indent=2) + "\n")
        path.chmod(EXPORT_MODE)
    log_keys: list[Any] = keys["logs"]  # type: ignore[assignment]
    header_keys: list[Any] = keys["keys"]  # type: ignore[assignment]
    logs = len({entry["origin"] for entry in log_keys})  # a log is listed once per key
    witness_names: list[str] = [w.name for w in witnesses]
    if args.json:
        _print_json(
            {
                "keys": str(args.keys_out),
                "trust": str(args.trust_out),
                "logs": logs,
                "log_keys": len(log_keys),
                "header_keys": len(header_keys),
                "witnesses": witness_names,
                "quorum": quorum,
                "source": source,
            }
        )
        return 0
    counts = f"{_count(logs, 'log')}, {_count(len(log_keys), 'log key')}"
    print(f"key directory: {args.keys_out} ({counts}; {_count(len(header_keys), 'header key')})")
    names = ", ".join(witness_names) or "none: bundles will verify INCOMPLETE"
    print(f"trust store: {args.trust_out} (witnesses: {names}; quorum {quorum})")
    print(f"witnesses from {source}")
    return 0


def _count(number: int, noun: str) -> str:
    """``1 log``, ``2 logs``: a count with its noun."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _keys_rotate(args: argparse.Namespace) -> int:
    from recordseal.services.key_admin import rotate_header

    settings = _key_settings(args)
    if args.purpose == "log":
        return _rotate_log(args, settings)
    if args.purpose == "kek":
        return _rotate_kek(args, settings)
    if args.complete:
        raise KeyRefused("--complete", "applies to the log key only")
    if args.purpose == "cookie":
        from recordseal.panel import cookie_keys

        if args.hsm is not None:
            rule = "the panel cookie key is a file (docs/operations.md, Keys)"
            raise KeyRefused("--hsm", rule, message=f"--hsm: {rule}")
        key_id = cookie_keys.rotate(_keys_dir(settings))
        if args.json:
            _print_json({"new": {"key_id": key_id}})
        else:
            print(
                f"recordseal: panel cookie key {key_id} signs within 2 s in every process;"
                " cookies signed before keep verifying until they expire"
            )
        return 0
    location = _hsm(args)
    old, new = asyncio.run(
        _with_records(settings, lambda r: rotate_header(r, _keys_dir(settings), location))
    )
    if args.json:
        _print_json({"old": _key_json(old), "new": _key_json(new)})
        return 0
    print(f"recordseal: header key {new.key_id} signs from {new.not_before}")
    print(
        f"recordseal: {old.key_id} stays valid until its last headers are in (about 10 s):"
        " bundles it signed keep verifying; export the key directory again for auditors"
    )
    return 0


def _rotate_kek(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.services.kek_rotation import rotate_kek

    if args.batch < 1:
        raise KeyRefused("--batch", "must be 1 or more")
    location = _hsm(args)
    done = asyncio.run(
        _with_records(
            settings,
            lambda r: rotate_kek(r, _keys_dir(settings), batch=args.batch, location=location),
        )
    )
    if args.json:
        _print_json(dataclasses.asdict(done))
        return 0
    how = "resumed and finished" if done.resumed else "done"
    print(
        f"recordseal: KEK {done.generation} wraps every subject key ({done.rewrapped} re-wrapped;"
        f" rotation {how}); destroyed: {', '.join(done.destroyed) or 'nothing'}"
    )
    print(
        "recordseal: back up keys/ now (the older KEK is gone; an older backup of keys/ holds it)"
    )
    return 0


def _rotate_log(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.ledger import log_keys

    keys_dir = _keys_dir(settings)
    if args.complete:
        if args.hsm is not None:
            raise KeyRefused(
                "--hsm", "does not apply", message="--complete makes no key: --hsm does not apply"
            )
        retired = log_keys.complete(keys_dir)
        if not retired:
            raise KeyRefused(
                "--complete",
                "needs a second log key signing",
                message="only one log key signs: nothing to complete",
            )
        names = [k.path.name for k in retired]
        if args.json:
            _print_json({"retired": names})
        else:
            print(f"recordseal: {', '.join(names)} sign no more checkpoints (they still verify)")
        return 0
    new = log_keys.rotate(keys_dir, _hsm(args))
    generation = [k for k in log_keys.log_keys(keys_dir) if k.generation == new.generation]
    families = [k.signer(settings.origin).verifier().vkey for k in generation]
    if args.json:
        _print_json(
            {
                "new": new.path.name,
                "new_files": [k.path.name for k in generation],
                "family_vkey": families[0],
                "family_vkeys": families,
            }
        )
        return 0
    made = " and ".join(k.path.name for k in generation)
    print(f"recordseal: {made} sign every checkpoint beside the older log keys")
    print(
        f"recordseal: give witnesses the log family {families[0]} (Ed25519; the ML-DSA-44 one is"
        f" {families[-1]}; the demo witness follows by itself),"
    )
    print("recordseal: then run `recordseal keys rotate log --complete`; export the keys again")
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    from recordseal.services.key_admin import revoke, revoke_log_key

    settings = _key_settings(args)
    location = _hsm(args)
    log_key = revoke_log_key(_keys_dir(settings), args.key_id, args.compromised_at, location)
    if log_key is not None:
        compromised, successor = log_key
        report = {
            "revoked": {"key_id": args.key_id, "purpose": "log", "file": compromised.path.name},
            "new": None if successor is None else {"file": successor.path.name},
        }
        if args.json:
            _print_json(report)
            return 0
        print(f"recordseal: log key {args.key_id} compromised from {args.compromised_at}")
        if successor is not None:
            print(
                f"recordseal: {successor.path.name} alone signs checkpoints from now: give"
                " witnesses its family vkey (`recordseal keys rotate log` printed how)"
            )
        print("recordseal: export the key directory again and give it to every verifier")
        return 0
    revoked, new = asyncio.run(
        _with_records(
            settings,
            lambda r: revoke(r, _keys_dir(settings), args.key_id, args.compromised_at, location),
        )
    )
    if args.json:
        _print_json({"revoked": _key_json(revoked), "new": None if new is None else _key_json(new)})
        return 0
    print(
        f"recordseal: key {revoked.key_id} revoked at {revoked.revoked_at}, compromised from"
        f" {revoked.compromised_at}"
    )
    if new is not None:
        print(f"recordseal: header key {new.key_id} signs from {new.not_before}")
    print("recordseal: export the key directory again and give it to every verifier")
    return 0


def _hsm(args: argparse.Namespace) -> Any:
    """The module URI of ``--hsm``, parsed (KeyRefused naming what is wrong), or None."""
    from recordseal.crypto.hsm import KeyLocationError, ModuleUri

    if args.hsm is None:
        return None
    try:
        return ModuleUri.parse(args.hsm)
    except KeyLocationError as error:
        raise KeyRefused("--hsm", str(error), message=f"--hsm: {error}") from None


def _keys_init(args: argparse.Namespace) -> int:
    from recordseal.crypto.hsm import KeyLocationError
    from recordseal.services.key_custody import init_key

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, args.create_data_dir)
    location = _hsm(args)
    try:
        made = asyncio.run(
            _with_records(
                settings, lambda r: init_key(args.purpose, location, _keys_dir(settings), r)
            )
        )
    except KeyLocationError as error:
        raise KeyRefused(f"{args.purpose} key", str(error), message=str(error)) from None
    if args.json:
        _print_json({"purpose": args.purpose, "made": made})
        return 0
    print(f"recordseal: {made}; its private half never leaves the module")
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    from recordseal.services.key_admin import listing

    settings = _key_settings(args)
    keys = asyncio.run(_with_records(settings, lambda r: listing(r, _keys_dir(settings))))
    if args.json:
        _print_json({"keys": [dataclasses.asdict(k) for k in keys]})
        return 0
    for key in keys:
        state = "active" if key.active else "retired"
        if key.compromised_at:
            state = f"compromised from {key.compromised_at}"
        validity = f"{key.not_before} .. {key.not_after or ''}" if key.purpose == "header" else ""
        algorithm = key.algorithm or ""
        print(
            f"{key.purpose:<7} {algorithm:<9} {key.key_id}  {state:<10} {validity}  {key.location}"
        )
    return 0


def _hsm_option(command: argparse.ArgumentParser, text: str, *, required: bool = False) -> None:
    command.add_argument(
        "--hsm",
        metavar="URI",
        required=required,
        default=None,
        help=f"{text}: pkcs11:token=T;object=LABEL?module-path=LIB&pin-source=file:PATH"
        " (docs/operations.md, Keys in a hardware module)",
    )


def _key_settings(args: argparse.Namespace) -> Settings:
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, create=False)
    return settings


def _keys_dir(settings: Settings) -> Path:
    return settings.data_dir / "keys"


async def _with_records(settings: Settings, work: Any) -> Any:
    store = open_store(settings)
    await store.open()
    try:
        return await work(store.records)
    finally:
        await store.close()


def _key_json(key: Any) -> dict[str, Any]:
    return {
        "key_id": key.key_id,
        "public_key": key.public_key.hex(),
        "not_before": key.not_before,
        "not_after": key.not_after,
        "revoked_at": key.revoked_at,
        "compromised_at": key.compromised_at,
        "location": key.location,
    }


def _panel_link(args: argparse.Namespace) -> int:
    from recordseal.panel.passkey_store import PasskeyStore
    from recordseal.web.panel.passkey_config import create_registration_link, link_base_url

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    # Where the service listens: the options, else what its last start recorded
    # (service.json), else the settings of this shell.
    served = datadir.read_service_record(settings.data_dir)
    host = args.host or (served.host if served else None)
    port = args.port or (served.port if served else None)
    settings = from_env(
        data_dir=args.data_dir, database_url=args.database_url, host=host, port=port
    )
    _data_dir_for(settings, args.create_data_dir)
    datadir.secure(settings.data_dir)
    base_url = args.base_url or link_base_url(settings)

    async def create() -> str:
        store = open_store(settings)
        await store.open()
        try:
            return await create_registration_link(PasskeyStore(store.panel), args.role, base_url)
        finally:
            await store.close()

    url = asyncio.run(create())
    if args.json:
        _print_json({"url": url, "role": args.role, "expires_in_seconds": 15 * 60})
        return 0
    print("one-time passkey registration link (15 minutes, single use):", file=sys.stderr)
    print(url)
    return 0


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


def _backup(args: argparse.Namespace) -> int:
    """A consistent online copy of a SQLite data directory (``storage/backup.py``)."""
    from recordseal.storage.backup import BackupFailed, BackupRefused, Source, backup

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    if settings.database_url:
        open_store(settings)  # a URL of another kind is refused as every command refuses it
        print(f"recordseal: {POSTGRES_BACKUP_REFUSAL}", file=sys.stderr)
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
        _print_json({"target": str(args.to), **manifest})
        return 0
    print(_backup_summary(args.to, manifest))
    return 0


#: The log key file ``recover`` signs with; it never makes new keys (the header key is the
#: store's active one, ``services.header_keys``).
def _recover(args: argparse.Namespace) -> int:
    """Declare lost sequence numbers and start successor logs (``ledger/recovery.py``)."""
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    _data_dir_for(settings, create=False)
    open_store(settings)  # refuses a database URL of another kind,
    open_journal(settings)  # and a journal database on the store's own server
    from recordseal.ledger.log_keys import has_log_key

    if not has_log_key(settings.data_dir / "keys"):
        print(
            f"recordseal: recover signs with the service's keys; {settings.data_dir / 'keys'}"
            " lacks the log key (log-signing.ed25519, or log-signing.pkcs11 for a key in a"
            " module): restore the keys (backed up apart) first; nothing was written",
            file=sys.stderr,
        )
        return 2
    from recordseal.ledger.recovery import ServiceRunning

    try:
        report = asyncio.run(_run_recover(settings))
    except KeyUnavailable as missing:
        print(f"recordseal: {missing}", file=sys.stderr)
        return 2
    except ServiceRunning as running:
        print(
            f"recordseal: {running}: stop every service process of this store before"
            " `recordseal recover`; nothing was written",
            file=sys.stderr,
        )
        return 2
    if args.json:
        _print_json(
            {
                "gaps": [
                    {
                        "tenant": g.tenant,
                        "stream": g.stream,
                        "from_seq": g.from_seq,
                        "to_seq": g.seq - 1,
                        "seq": g.seq,
                    }
                    for g in report.gaps
                ],
                "successions": [
                    {
                        "predecessor": s.predecessor,
                        "size": s.size,
                        "root": s.root.hex(),
                        "successor": s.origin,
                    }
                    for s in report.successions
                ],
                "refused": [{"name": name, "reason": why} for name, why in report.refused],
                "aggregate": (
                    None
                    if report.aggregate is None
                    else {"origin": report.aggregate.origin, "size": report.aggregate.size}
                ),
            }
        )
    else:
        for g in report.gaps:
            last = g.seq - 1
            lost = f"seq {last}" if g.from_seq == last else f"seqs {g.from_seq}-{last}"
            print(
                f"recordseal: stream {g.tenant}/{g.stream}: {lost} declared lost"
                f" (gap header at seq {g.seq}); the next record is seq {g.seq + 1}"
            )
        for s in report.successions:
            print(
                f"recordseal: log {s.predecessor} retired after size {s.size};"
                f" its successor is {s.origin}"
            )
        if report.aggregate is not None:
            print(
                f"recordseal: the aggregate log {report.aggregate.origin} goes on from its"
                f" signed size {report.aggregate.size}"
            )
        for name, why in report.refused:
            print(f"recordseal: {name} stays fenced: {why}", file=sys.stderr)
        if not (report.gaps or report.successions or report.refused or report.aggregate):
            print("recordseal: nothing is fenced; nothing to recover")
    return 1 if report.refused else 0


async def _run_recover(settings: Settings) -> Any:
    from recordseal.ledger.continuity import Continuity
    from recordseal.ledger.recovery import recover
    from recordseal.services.header_keys import HeaderKeys

    store = open_store(settings)
    continuity = Continuity(open_journal(settings))  # refuses a journal on the store's server
    await store.open()
    try:
        from recordseal.ledger.log_keys import LogKeyring

        log_keys = LogKeyring.of_directory(settings.data_dir / "keys")
        header_keys = await HeaderKeys.load(store.records, settings.data_dir / "keys")
        return await recover(
            store, continuity, header_keys.active.signer, log_keys.signing, settings.origin
        )
    finally:
        await continuity.close()
        await store.close()


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


def _create_data_dir_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--create-data-dir",
        action="store_true",
        help="create the data directory when it does not exist (refused otherwise)",
    )


def _database_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--database-url",
        default=None,
        help="postgresql:// URL of the record store (RECORDSEAL_DATABASE_URL; SQLite if unset)",
    )


def _config_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML file of settings, overridden by RECORDSEAL_* variables (RECORDSEAL_CONFIG;"
        " docs/configuration.md)",
    )


def _data_dir_option(command: argparse.ArgumentParser) -> None:
    _config_option(command)
    command.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the service's state directory: keys, SQLite database (RECORDSEAL_DATA_DIR; ./data)",
    )


def _json_option(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def _store_command(command: argparse.ArgumentParser, what: str) -> None:
    """The options of a command on the store: data directory, database, ``--json``."""
    _data_dir_option(command)
    _json_option(command, what)
    _database_url_option(command)
    command.set_defaults(run=_tenant_command)


def _add_tenant_parsers(commands: Any) -> None:
    tenant = commands.add_parser(
        "tenant", help="tenants, in the database every service process reads"
    ).add_subparsers(dest="action", required=True, metavar="COMMAND")
    create = tenant.add_parser("create", help="create a tenant (the panel shows it at once)")
    create.add_argument("tenant_id", metavar="ID", help="the tenant's id, as API tokens name it")
    create.add_argument("--display-name", required=True, help="the name people see")
    create.add_argument("--contact-email", default=None, help="who to contact about it")
    _store_command(create, "the tenant")
    _create_data_dir_option(create)
    _store_command(tenant.add_parser("list", help="list every tenant and its status"), "tenants")
    show = tenant.add_parser("show", help="a tenant, its organizations and their fleets")
    show.add_argument("tenant_id", metavar="ID", help="the tenant's id")
    _store_command(show, "the tenant")
    for action, what in (
        ("freeze", "make a tenant read-only: no new records, streams, tokens or organizations"),
        ("unfreeze", "make a frozen tenant writable again"),
    ):
        change = tenant.add_parser(action, help=what)
        change.add_argument("tenant_id", metavar="ID", help="the tenant's id")
        _store_command(change, "the tenant")

    org = commands.add_parser("org", help="organizations of tenants").add_subparsers(
        dest="action", required=True, metavar="COMMAND"
    )
    org_create = org.add_parser("create", help="create an organization in a tenant")
    org_create.add_argument("tenant_id", metavar="TENANT", help="the tenant it belongs to")
    org_create.add_argument(
        "organization_id", metavar="ID", help="the organization's id, unique in its tenant"
    )
    org_create.add_argument("--display-name", required=True, help="the name people see")
    _store_command(org_create, "the organization")
    org_list = org.add_parser("list", help="list organizations (of every tenant)")
    org_list.add_argument("--tenant", default=None, help="only this tenant's")
    _store_command(org_list, "organizations")


def parser() -> argparse.ArgumentParser:
    top = UsageParser(
        prog="recordseal", description="recordseal: the record service, its tokens and witnesses"
    )
    top.add_argument(
        "--version", action="version", version=f"recordseal {__version__}", help="print the version"
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="start the service")
    _data_dir_option(serve)
    serve.add_argument(
        "--host", default=None, help="address to listen on (RECORDSEAL_HOST; 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=None, help="port (RECORDSEAL_PORT; 8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    serve.add_argument(
        "--demo-witness",
        type=Path,
        default=None,
        metavar="DIR",
        help="also run a demo witness on this machine, its key and state in DIR, for every log"
        " of this service (make run); production names independent witnesses instead",
    )
    _database_url_option(serve)
    serve.set_defaults(run=_serve)

    migrate = commands.add_parser("migrate", help="apply the database schema migrations")
    _data_dir_option(migrate)
    migrate.add_argument(
        "--status",
        action="store_true",
        help="only report the schema version (exit 0 up to date, 1 migrations to apply,"
        " 2 newer than this recordseal)",
    )
    _json_option(migrate, "the schema version")
    _database_url_option(migrate)
    migrate.set_defaults(run=_migrate)

    token = commands.add_parser("token", help="API tokens").add_subparsers(
        dest="token_command", required=True, metavar="COMMAND"
    )
    create = token.add_parser("create", help="create a tenant-scoped API token")
    _data_dir_option(create)
    create.add_argument("--tenant", required=True, help="the tenant the token acts for")
    create.add_argument("--label", default="", help="a note on what the token is for")
    _json_option(create, "tenant, label and token")
    _database_url_option(create)
    _create_data_dir_option(create)
    create.set_defaults(run=_token_create)
    listing = token.add_parser(
        "list", help="list API tokens: id, tenant, label, created, last used (never the token)"
    )
    _data_dir_option(listing)
    listing.add_argument("--tenant", default=None, help="only this tenant's tokens")
    _json_option(listing, "the tokens")
    _database_url_option(listing)
    listing.set_defaults(run=_token_list)
    revoke = token.add_parser(
        "revoke", help="revoke a token by its id; every service process refuses it within 1 s"
    )
    revoke.add_argument("token_id", metavar="ID", help="the id `token list` shows")
    _data_dir_option(revoke)
    revoke.add_argument("--tenant", default=None, help="the tenant the token belongs to")
    _json_option(revoke, "the revoked token")
    _database_url_option(revoke)
    revoke.set_defaults(run=_token_revoke)

    _add_tenant_parsers(commands)

    keys = commands.add_parser("keys", help="key material").add_subparsers(
        dest="keys_command", required=True, metavar="COMMAND"
    )
    export = keys.add_parser(
        "export", help="write the key directory and the witness trust store for offline use"
    )
    _data_dir_option(export)
    export.add_argument(
        "--keys-out",
        type=Path,
        default=Path("recordseal-keys.json"),
        help="where to write the key directory (recordseal-keys.json)",
    )
    export.add_argument(
        "--trust-out",
        type=Path,
        default=Path("recordseal-trust.json"),
        help="where to write the trust store of the service's witnesses (recordseal-trust.json)",
    )
    _json_option(export, "what was written")
    _database_url_option(export)
    export.set_defaults(run=_keys_export)
    rotate = keys.add_parser(
        "rotate",
        help="a new header-signing, log, key-encryption or panel cookie key, used within"
        " seconds by every process; the old one keeps verifying until it is retired",
    )
    rotate.add_argument(
        "purpose",
        choices=["header", "log", "kek", "cookie"],
        help="header: the header-signing key; log: the checkpoint key (signing beside the old"
        " one until --complete); cookie: the panel's session cookie key (older cookies keep"
        " verifying until they expire)",
    )
    rotate.add_argument(
        "--batch",
        type=int,
        default=500,
        metavar="N",
        help="kek only: subject keys re-wrapped per transaction (500)",
    )
    rotate.add_argument(
        "--complete",
        action="store_true",
        help="log only: stop signing with the older log keys, once every witness knows the"
        " newest (they keep verifying)",
    )
    _hsm_option(rotate, "generate the new key in this hardware module (header, log, kek)")
    _data_dir_option(rotate)
    _json_option(rotate, "the old and the new key")
    _database_url_option(rotate)
    rotate.set_defaults(run=_keys_rotate)
    revoke_key = keys.add_parser(
        "revoke",
        help="mark a header-signing key compromised from a time (rotating first when it is the"
        " active one): verifiers then trust its headers only where a witness shows them"
        " before that time",
    )
    revoke_key.add_argument("key_id", metavar="KEY_ID", help="the key id `keys list` shows")
    revoke_key.add_argument(
        "--compromised-at",
        required=True,
        metavar="TIME",
        help="RFC 3339 date-time from which the key may have been in other hands",
    )
    _hsm_option(revoke_key, "generate the key that takes over in this hardware module")
    _data_dir_option(revoke_key)
    _json_option(revoke_key, "the revoked key and the new active one")
    _database_url_option(revoke_key)
    revoke_key.set_defaults(run=_keys_revoke)
    init = keys.add_parser(
        "init",
        help="generate the first header, log or key-encryption key inside a hardware module"
        " (PKCS#11) and record where it is; the key never leaves the module",
    )
    init.add_argument(
        "purpose",
        choices=["header", "log", "kek"],
        help="header: the header-signing key; log: the checkpoint key; kek: the"
        " key-encryption key (with the subject index and panel secret keys beside it)",
    )
    _hsm_option(init, "the key to make, as an RFC 7512 URI", required=True)
    _data_dir_option(init)
    _create_data_dir_option(init)
    _json_option(init, "what was made")
    _database_url_option(init)
    init.set_defaults(run=_keys_init)
    key_list = keys.add_parser(
        "list", help="every key: id, purpose, where it lives, validity, revocation"
    )
    _data_dir_option(key_list)
    _json_option(key_list, "the keys")
    _database_url_option(key_list)
    key_list.set_defaults(run=_keys_list)

    panel = commands.add_parser("panel", help="operator panel").add_subparsers(
        dest="panel_command", required=True, metavar="COMMAND"
    )
    link = panel.add_parser(
        "link", help="print a one-time passkey registration link (the first operator's way in)"
    )
    _data_dir_option(link)
    link.add_argument(
        "--role",
        choices=["operator", "viewer"],
        default="operator",
        help="the role the passkey gets (operator)",
    )
    link.add_argument(
        "--base-url",
        default=None,
        help="the panel's address as the browser reaches it (default: the first"
        " RECORDSEAL_PANEL_ORIGINS, else built from --host and --port, else from the host and"
        " port the service last started with (DATA_DIR/service.json), else from the settings)",
    )
    link.add_argument("--host", default=None, help="the service's host (RECORDSEAL_HOST)")
    link.add_argument("--port", type=int, default=None, help="the service's port (RECORDSEAL_PORT)")
    _json_option(link, "the link")
    _database_url_option(link)
    _create_data_dir_option(link)
    link.set_defaults(run=_panel_link)

    backup = commands.add_parser(
        "backup",
        help="copy a SQLite data directory's databases consistently while the service runs"
        " (PostgreSQL: refused, use pg_basebackup or pgBackRest)",
    )
    _data_dir_option(backup)
    backup.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="DIR",
        help="a new or empty directory outside the data directory, for the copies and backup.json",
    )
    _json_option(backup, "the manifest (backup.json) and the target")
    _database_url_option(backup)
    backup.set_defaults(run=_backup)

    recover = commands.add_parser(
        "recover",
        help="with the service stopped, after a restore fenced streams or logs: declare the"
        " lost sequence numbers and start successor logs (docs/continuity.md)",
    )
    _data_dir_option(recover)
    _json_option(recover, "the gaps declared, the logs succeeded and what stays fenced")
    _database_url_option(recover)
    recover.set_defaults(run=_recover)

    add_witness_parser(commands)
    add_url_option(add_verify_parser(commands))
    add_verify_receipt_parser(commands)
    add_bundle_parser(commands)
    add_ingest_parser(commands)
    add_disclose_parser(commands)
    add_fleet_parsers(commands)
    add_config_parser(commands, _config_option)
    add_doctor_parser(commands, _config_option)
    add_bench_parser(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    from recordseal.demo_witness import DemoWitnessError
    from recordseal.serve import ConfigError

    datadir.owner_only()
    args = parser().parse_args(argv)
    if getattr(args, "config", None) is not None:  # read by every process of the command
        os.environ[CONFIG_VARIABLE] = str(args.config.absolute())
    for warning in unknown_variables():
        print(f"recordseal: warning: {warning}", file=sys.stderr)
    try:
        result: int = args.run(args)
    except (
        SettingsError,  # one line naming the variable and the rule
        BackendError,
        SchemaTooNew,
        ConfigError,
        DemoWitnessError,
        DataDirError,
        MissingDataDir,
        KeyRefused,
        KeyUnavailable,
        KeyLocationError,
    ) as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())

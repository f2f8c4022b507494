"""The ``recordseal`` command line: ``serve``, ``migrate``, ``token create``, ``keys export``,
``verify``, ``bundle refresh``, ``panel link``, ``witness serve|key``, ``transparency
write|replay``, ``fleet check``.

Scripts rely on its shape: ``recordseal token create`` prints the token alone on the last
line of standard output.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from recordseal.client.cli import add_bundle_parser
from recordseal.fleet.cli import add_fleet_parsers
from recordseal.services.errors import ServiceError
from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.backends import BackendError, open_store
from recordseal.tlog.witness_cli import add_witness_parser
from recordseal.verify.cli import add_verify_parser

#: Seconds a worker has to finish its requests after a stop signal before it is killed.
WORKERS_KILL_TIMEOUT = 10


def _serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces
    from granian.server import Server

    settings = Settings.from_env(
        data_dir=args.data_dir, port=args.port, host=args.host, database_url=args.database_url
    )
    open_store(settings)  # refuses a database URL of another kind before any worker starts
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # Worker processes read their settings from the environment.
    os.environ["RECORDSEAL_DATA_DIR"] = str(settings.data_dir.resolve())
    if settings.database_url:
        os.environ["RECORDSEAL_DATABASE_URL"] = settings.database_url
        where = "PostgreSQL"
    else:
        where = "SQLite"
    print(f"recordseal: keys in {settings.data_dir.resolve()}, records in {where}", flush=True)
    print(
        f"recordseal: listening on http://{settings.host}:{settings.port}"
        f" ({args.workers} worker{'s' if args.workers > 1 else ''})",
        flush=True,
    )
    print(
        "recordseal: create an API token with:\n"
        f"  recordseal token create --data-dir {settings.data_dir} --tenant <tenant>",
        flush=True,
    )
    Server(
        "recordseal.web.asgi:app",
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=args.workers,
        log_access=False,
        # A worker still starting when the stop signal comes can miss it (granian 2.8; about
        # 1 in 8 stops right after start hung for good): after this many seconds it is
        # killed. In-flight writes are never acknowledged before their commit, so nothing
        # acknowledged is lost.
        workers_kill_timeout=WORKERS_KILL_TIMEOUT,
    ).serve()
    return 0


async def _create_token(settings: Settings, tenant: str, label: str) -> str:
    store = open_store(settings)
    await store.open()
    try:
        return await TokenService(store.tokens).create(tenant, label)
    finally:
        await store.close()


def _token_create(args: argparse.Namespace) -> int:
    settings = Settings.from_env(data_dir=args.data_dir, database_url=args.database_url)
    try:
        token = asyncio.run(_create_token(settings, args.tenant, args.label))
    except ServiceError as error:
        print(f"recordseal: {error} ({error.code})", file=sys.stderr)
        return 2
    print(f"API token for tenant {args.tenant!r} (shown once; keep it secret):", file=sys.stderr)
    print(token)
    return 0


async def _export_keys(settings: Settings) -> tuple[dict[str, object], dict[str, object]]:
    from recordseal.crypto.keyfiles import read_or_create_secret
    from recordseal.ledger.sealer import Sealer
    from recordseal.services.keys import key_directory, trust_store

    store = open_store(settings)
    await store.open()
    try:
        sealer = Sealer(
            store.logs,
            read_or_create_secret(settings.data_dir / "keys" / "log-signing.ed25519"),
            settings.origin,
        )
        keys = await key_directory(store, sealer)
    finally:
        await store.close()
    trust = trust_store(settings.witnesses, settings.timestamp_authorities, settings.witness_quorum)
    return keys, trust


def _migrate(args: argparse.Namespace) -> int:
    """Apply the schema migrations (``serve`` also applies them at start)."""
    settings = Settings.from_env(data_dir=args.data_dir, database_url=args.database_url)

    async def run() -> None:
        store = open_store(settings)
        await store.open()  # opening migrates
        await store.close()

    asyncio.run(run())
    print(f"recordseal: schema up to date ({'PostgreSQL' if settings.database_url else 'SQLite'})")
    return 0


def _keys_export(args: argparse.Namespace) -> int:
    settings = Settings.from_env(data_dir=args.data_dir, database_url=args.database_url)
    keys, trust = asyncio.run(_export_keys(settings))
    args.keys_out.write_text(json.dumps(keys, indent=2) + "\n")
    args.trust_out.write_text(json.dumps(trust, indent=2) + "\n")
    print(f"key directory: {args.keys_out}\ntrust store: {args.trust_out}")
    return 0


def _panel_link(args: argparse.Namespace) -> int:
    from recordseal.web.panel.passkeys import create_registration_link, passkey_context

    data_dir = Settings.from_env(data_dir=args.data_dir).data_dir
    store = passkey_context(data_dir)
    print("one-time passkey registration link (15 minutes, single use):", file=sys.stderr)
    print(create_registration_link(store, role=args.role, base_url=args.base_url))
    return 0


def _database_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--database-url",
        default=None,
        help="postgresql:// URL of the record store (RECORDSEAL_DATABASE_URL; SQLite if unset)",
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="recordseal", description="recordseal: the record service, its tokens and witnesses"
    )
    commands = top.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="start the service")
    serve.add_argument("--data-dir", type=Path, default=None, help="state directory (./data)")
    serve.add_argument("--host", default=None, help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    _database_url_option(serve)
    serve.set_defaults(run=_serve)

    migrate = commands.add_parser("migrate", help="apply the database schema migrations")
    migrate.add_argument("--data-dir", type=Path, default=None)
    _database_url_option(migrate)
    migrate.set_defaults(run=_migrate)

    token = commands.add_parser("token", help="API tokens").add_subparsers(
        dest="token_command", required=True
    )
    create = token.add_parser("create", help="create a tenant-scoped API token")
    create.add_argument("--data-dir", type=Path, default=None)
    create.add_argument("--tenant", required=True)
    create.add_argument("--label", default="", help="a note on what the token is for")
    _database_url_option(create)
    create.set_defaults(run=_token_create)

    keys = commands.add_parser("keys", help="key material").add_subparsers(
        dest="keys_command", required=True
    )
    export = keys.add_parser(
        "export", help="write the key directory and the witness trust store for offline use"
    )
    export.add_argument("--data-dir", type=Path, default=None)
    export.add_argument("--keys-out", type=Path, default=Path("recordseal-keys.json"))
    export.add_argument("--trust-out", type=Path, default=Path("recordseal-trust.json"))
    _database_url_option(export)
    export.set_defaults(run=_keys_export)

    panel = commands.add_parser("panel", help="operator panel").add_subparsers(
        dest="panel_command", required=True
    )
    link = panel.add_parser(
        "link", help="print a one-time passkey registration link (the first operator's way in)"
    )
    link.add_argument("--data-dir", type=Path, default=None)
    link.add_argument("--role", choices=["operator", "viewer"], default="operator")
    link.add_argument("--base-url", default="http://localhost:8000")
    link.set_defaults(run=_panel_link)

    add_witness_parser(commands)
    add_verify_parser(commands)
    add_bundle_parser(commands)
    add_fleet_parsers(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except BackendError as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())

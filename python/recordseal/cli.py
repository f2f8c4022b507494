"""The ``recordseal`` command line: ``serve``, ``token create``, ``witness serve|key``.

Scripts rely on its shape: ``recordseal token create`` prints the token alone on the last
line of standard output.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from recordseal.services.errors import ServiceError
from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.sqlite import SQLiteStore
from recordseal.tlog.witness_cli import add_witness_parser


def _serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces
    from granian.server import Server

    settings = Settings.from_env(data_dir=args.data_dir, port=args.port, host=args.host)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # Worker processes read their settings from the environment.
    os.environ["RECORDSEAL_DATA_DIR"] = str(settings.data_dir.resolve())
    print(f"recordseal: data in {settings.data_dir.resolve()}", flush=True)
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
    ).serve()
    return 0


async def _create_token(data_dir: Path, tenant: str, label: str) -> str:
    store = SQLiteStore(Settings(data_dir=data_dir).database_path)
    await store.open()
    try:
        return await TokenService(store).create(tenant, label)
    finally:
        await store.close()


def _token_create(args: argparse.Namespace) -> int:
    data_dir = Settings.from_env(data_dir=args.data_dir).data_dir
    try:
        token = asyncio.run(_create_token(data_dir, args.tenant, args.label))
    except ServiceError as error:
        print(f"recordseal: {error} ({error.code})", file=sys.stderr)
        return 2
    print(f"API token for tenant {args.tenant!r} (shown once; keep it secret):", file=sys.stderr)
    print(token)
    return 0


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
    serve.set_defaults(run=_serve)

    token = commands.add_parser("token", help="API tokens").add_subparsers(
        dest="token_command", required=True
    )
    create = token.add_parser("create", help="create a tenant-scoped API token")
    create.add_argument("--data-dir", type=Path, default=None)
    create.add_argument("--tenant", required=True)
    create.add_argument("--label", default="", help="a note on what the token is for")
    create.set_defaults(run=_token_create)

    add_witness_parser(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())

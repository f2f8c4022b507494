"""``recordseal witness serve`` and ``recordseal witness key``.

The witness keeps its key (``witness-key.ed25519``, 32 random bytes, mode 0600, made on first
use) and its state (``state/``) in the data directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import msgspec

from recordseal.crypto.keyfiles import read_or_create_secret

from .cosignature import CosignatureSigner
from .errors import TlogError
from .witness import log_verifiers
from .witness_app import CONFIG_ENV, WitnessConfig

KEY_FILE = "witness-key.ed25519"
STATE_DIR = "state"


def add_witness_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``witness serve`` and ``witness key`` to a command line."""
    witness = subparsers.add_parser("witness", help="run a transparency-log witness")
    commands = witness.add_subparsers(dest="witness_command", required=True)

    serve = commands.add_parser("serve", help="serve c2sp.org/tlog-witness add-checkpoint")
    _common(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port (8080)")
    serve.add_argument(
        "--log",
        action="append",
        required=True,
        metavar="ORIGIN=VKEY",
        help="a witnessed log: its origin and the vkey of its key (repeatable)",
    )
    serve.set_defaults(run=_serve)

    key = commands.add_parser("key", help="print the witness's vkey (made on first use)")
    _common(key)
    key.set_defaults(run=_key)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, required=True, help="key and state directory")
    parser.add_argument("--name", required=True, help="the witness's key name, e.g. example.com/w1")


def load_signer(data_dir: Path, name: str) -> CosignatureSigner:
    return CosignatureSigner.from_seed(name, read_or_create_secret(data_dir / KEY_FILE))


def parse_logs(items: list[str]) -> dict[str, list[str]]:
    """``ORIGIN=VKEY`` arguments as origin → vkeys, each vkey checked."""
    logs: dict[str, list[str]] = {}
    for item in items:
        origin, equals, vkey = item.partition("=")
        if not equals or not origin:
            raise TlogError("config_invalid", f"--log {item!r} is not ORIGIN=VKEY")
        logs.setdefault(origin, []).append(vkey)
    log_verifiers(logs)
    return logs


def _key(args: argparse.Namespace) -> int:
    try:
        print(load_signer(args.data_dir, args.name).vkey)
    except TlogError as error:
        print(f"recordseal witness: {error} ({error.code})", file=sys.stderr)
        return 2
    return 0


def _serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces
    from granian.server import Server

    data_dir: Path = args.data_dir.resolve()
    try:
        logs = parse_logs(args.log)
        signer = load_signer(data_dir, args.name)
    except TlogError as error:
        print(f"recordseal witness: {error} ({error.code})", file=sys.stderr)
        return 2
    config = WitnessConfig(
        state_dir=str(data_dir / STATE_DIR),
        name=args.name,
        key_path=str(data_dir / KEY_FILE),
        logs=logs,
    )
    # Server workers build the app from the environment (granian's factory mode).
    os.environ[CONFIG_ENV] = msgspec.json.encode(config).decode()
    print(f"recordseal witness: vkey {signer.vkey}", flush=True)
    for origin in logs:
        print(f"recordseal witness: witnessing {origin}", flush=True)
    print(f"recordseal witness: listening on http://{args.host}:{args.port}", flush=True)
    Server(
        "recordseal.tlog.witness_app:app_from_env",
        address=args.host,
        port=args.port,
        interface=Interfaces.ASGI,
        workers=1,
        factory=True,
        log_access=False,
    ).serve()
    return 0

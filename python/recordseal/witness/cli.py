"""``recordseal witness serve`` and ``recordseal witness key``.

The witness keeps its keys (``witness-key.ed25519`` and, with ``--algorithm ml-dsa-44`` or
``both``, ``witness-key.ml-dsa-44``: 32 random bytes each, mode 0600, made on first use) and
its state (``state/``) in the data directory.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from recordseal import logs as logging_setup
from recordseal.tlog.errors import TlogError

from .families import FamilyFile, family_verifiers
from .keys import ALGORITHM_CHOICES, load_signers
from .witness import log_verifiers

STATE_DIR = "state"
log = logging.getLogger("recordseal.witness")


def add_witness_parser(subparsers: Any) -> None:
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
        default=[],
        metavar="ORIGIN=VKEY",
        help="a witnessed log: its origin and the vkey of its key, Ed25519 or ML-DSA-44"
        " (repeatable)",
    )
    serve.add_argument(
        "--logs-under",
        action="append",
        default=[],
        metavar="VKEY",
        help="a log family: every log whose origin starts with the key's name and '/', signed"
        " by that key under its own origin, e.g. every log of one recordseal service"
        " (repeatable)",
    )
    serve.add_argument(
        "--logs-under-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="a file of log family vkeys, one a line, read again whenever it changes (a"
        " service that rotates its log key rewrites it: no restart)",
    )
    serve.add_argument(
        "--demo",
        action="store_true",
        help="label this witness a demo witness on this machine (recordseal serve"
        " --demo-witness): it vouches only that the logs it saw were consistent",
    )
    serve.add_argument(
        "--log-format",
        choices=logging_setup.FORMATS,
        default=None,
        help="text or json log lines (RECORDSEAL_LOG_FORMAT; text)",
    )
    serve.set_defaults(run=_serve)

    key = commands.add_parser("key", help="print the witness's vkey (made on first use)")
    _common(key)
    key.add_argument("--json", action="store_true", help="print name and vkey as JSON")
    key.set_defaults(run=_key)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, required=True, help="key and state directory")
    parser.add_argument("--name", required=True, help="the witness's key name, e.g. example.com/w1")
    parser.add_argument(
        "--algorithm",
        choices=ALGORITHM_CHOICES,
        default="ed25519",
        help="cosign with Ed25519 (cosignature/v1), ML-DSA-44 (subtree/v1) or both, one line"
        " each (ed25519)",
    )


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
        vkeys = [key.vkey for key in load_signers(args.data_dir, args.name, args.algorithm)]
    except TlogError as error:
        print(f"recordseal witness: {error} ({error.code})", file=sys.stderr)
        return 2
    if args.json:  # "vkey": the first key's, as before; "vkeys": every key's
        print(json.dumps({"name": args.name, "vkey": vkeys[0], "vkeys": vkeys}))
    else:
        print("\n".join(vkeys))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces
    from granian.server import Server

    # Imported here, not by every command: the application (Litestar) is loaded once, before
    # granian forks the worker, which then starts with it.
    from .app import CONFIG_ENV, WitnessConfig

    log_format = args.log_format or os.environ.get("RECORDSEAL_LOG_FORMAT") or "text"
    log_config = logging_setup.dict_config(log_format, server=log.name)  # type: ignore[arg-type]
    logging_setup.configure(log_format, server=log.name)  # type: ignore[arg-type]
    data_dir: Path = args.data_dir.resolve()
    if not args.log and not args.logs_under and args.logs_under_file is None:
        print(
            "recordseal witness: name the logs to witness: --log, --logs-under or"
            " --logs-under-file",
            file=sys.stderr,
        )
        return 2
    try:
        logs = parse_logs(args.log)
        families = family_verifiers(args.logs_under)
        if args.logs_under_file is not None:
            families += FamilyFile(args.logs_under_file.resolve())()
        signers = load_signers(data_dir, args.name, args.algorithm)
    except TlogError as error:
        print(f"recordseal witness: {error} ({error.code})", file=sys.stderr)
        return 2
    config = WitnessConfig(
        state_dir=str(data_dir / STATE_DIR),
        name=args.name,
        key_dir=str(data_dir),
        logs=logs,
        families=list(args.logs_under),
        families_file=str(args.logs_under_file.resolve()) if args.logs_under_file else None,
        demo=args.demo,
        algorithm=args.algorithm,
    )
    # Server workers build the app from the environment (granian's factory mode).
    os.environ[CONFIG_ENV] = msgspec.json.encode(config).decode()
    _log_start(args, data_dir, [signer.vkey for signer in signers], logs, families)
    Server(
        "recordseal.witness.app:app_from_env",
        address=args.host,
        port=args.port,
        interface=Interfaces.ASGI,
        workers=1,
        factory=True,
        log_access=False,
        log_dictconfig=log_config,
    ).serve()
    return 0


def _log_start(
    args: argparse.Namespace,
    data_dir: Path,
    vkeys: list[str],
    logs: Iterable[str],
    families: Iterable[Any],
) -> None:
    """What the witness serves, in its log."""
    if args.demo:
        log.warning(
            "witness.demo",
            extra={
                "note": "a demo witness on this machine, not an independent witness:"
                " production names independent witnesses (RECORDSEAL_WITNESSES)"
            },
        )
    for vkey in vkeys:
        log.info("witness.started", extra={"vkey": vkey, "data_dir": str(data_dir)})
    for origin in logs:
        log.info("witness.log", extra={"origin": origin})
    for family in families:
        log.info("witness.logs_under", extra={"prefix": family.name + "/"})
    log.info("witness.listening", extra={"url": f"http://{args.host}:{args.port}"})
    log.info("witness.monitoring", extra={"url": f"http://{args.host}:{args.port}/monitor/"})

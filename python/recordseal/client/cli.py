"""``recordseal bundle refresh BUNDLE [-o FILE | --in-place]``: bring a bundle's proof up to
date.

Anyone holding a bundle may refresh it (no token, no subject key): the service (--url, else
RECORDSEAL_URL) answers the same disclosure with the newest witnessed proof of its record,
which is checked here before it is written (same header, signature, fields and coverage; the
same log entry; the old and new checkpoints consistent). The refreshed bundle goes to FILE
(-o), over BUNDLE itself (--in-place, replaced whole, never half written), or to standard
output. Exit codes: 0 refreshed, 1 the answer failed those checks, 2 no service given, 3 the
bundle could not be read or written, or the service refused or could not be reached, 64 a
usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from recordseal.client.connection import (
    add_service_url_option,
    said_missing,
    url_of,
)
from recordseal.client.models import Refreshed, Refused, Unavailable

EXIT_MISMATCH = 1
EXIT_SETTING = 2
EXIT_INPUT = 3
EXIT_USAGE = 64


def add_bundle_parser(subparsers: Any) -> None:
    """Add ``bundle refresh`` to an ``add_subparsers()`` object."""
    bundle = subparsers.add_parser("bundle", help="disclosure bundles: refresh").add_subparsers(
        dest="bundle_command", required=True
    )
    refresh = bundle.add_parser(
        "refresh",
        help="bring a bundle's proof up to date (no token needed)",
        description=(__doc__ or "").replace("``", ""),  # --help is plain text
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    refresh.add_argument("bundle", type=Path, help="the bundle file ('-' for standard input)")
    add_service_url_option(refresh)
    refresh.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds the service may wait for a witnessed proof (at most its bound, 60)",
    )
    where = refresh.add_mutually_exclusive_group()
    where.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the refreshed bundle here (default: standard output)",
    )
    where.add_argument(
        "--in-place", action="store_true", help="write the refreshed bundle over BUNDLE"
    )
    refresh.add_argument(
        "--json",
        action="store_true",
        help="print what changed as JSON (with the refreshed bundle inside unless --out)",
    )
    refresh.set_defaults(run=_refresh)


async def _call(url: str, bundle: bytes, wait: float | None) -> Refreshed:
    from recordseal.client.session import Client  # httpx and the verifier: on use only

    async with Client(url, None) as client:
        return await client.refresh(bundle, wait=wait)


def _refresh(args: argparse.Namespace) -> int:
    from recordseal.verify.errors import BundleError

    if args.in_place:
        if str(args.bundle) == "-":
            print("recordseal bundle refresh: --in-place needs a file, not '-'", file=sys.stderr)
            return EXIT_USAGE
        args.out = args.bundle
    url = said_missing("recordseal bundle refresh", url_of, args)
    if url is None:
        return EXIT_SETTING
    try:
        bundle = sys.stdin.buffer.read() if str(args.bundle) == "-" else args.bundle.read_bytes()
        refreshed = asyncio.run(_call(url, bundle, args.wait))
        if args.out is not None:
            _replace(args.out, refreshed.bundle)
    except (OSError, Refused, Unavailable) as error:
        print(f"recordseal bundle refresh: {error}", file=sys.stderr)
        return EXIT_INPUT
    except BundleError as error:
        print(f"recordseal bundle refresh: refused the answer: {error}", file=sys.stderr)
        return EXIT_MISMATCH
    if args.json:
        changed: dict[str, Any] = {
            "old_size": refreshed.old_size,
            "new_size": refreshed.new_size,
            "out": None if args.out is None else str(args.out),
        }
        if args.out is None:
            changed["bundle"] = msgspec.json.decode(refreshed.bundle)
        print(json.dumps(changed, indent=2))
        return 0
    if args.out is None:
        sys.stdout.buffer.write(refreshed.bundle)
    if refreshed.new_size is None:
        summary = "the record is not sealed yet; the bundle is unchanged"
    elif refreshed.old_size is None:
        summary = f"sealed in the checkpoint of size {refreshed.new_size}"
    else:
        summary = f"checkpoint of size {refreshed.old_size} -> {refreshed.new_size}, consistent"
    written = "" if args.out is None else f"; written to {args.out}"
    print(f"recordseal bundle refresh: {summary}{written}", file=sys.stderr)
    return 0


def _replace(path: Path, content: bytes) -> None:
    """``content`` as the whole of ``path``, never half written (a new file renamed over it)."""
    temporary = path.with_name(f".{path.name}.refreshing")
    temporary.write_bytes(content)
    temporary.replace(path)

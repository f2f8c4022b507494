"""``recordseal bundle refresh BUNDLE --url URL``: bring a bundle's proof up to date.

Anyone holding a bundle may refresh it (no token, no subject key): the service answers the
same disclosure with the newest witnessed proof of its record, which is checked here before
it is written (same header, signature, fields and coverage; the same log entry; the old and
new checkpoints consistent). Exit codes: 0 refreshed, 1 the answer failed those checks, 3 the
bundle could not be read or the service refused or could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from recordseal.client.models import Refreshed, Refused, Unavailable

EXIT_MISMATCH = 1
EXIT_INPUT = 3


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
    refresh.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8000")
    refresh.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds the service may wait for a witnessed proof (at most its bound, 60)",
    )
    refresh.add_argument(
        "--out", type=Path, default=None, help="write the refreshed bundle here (default: stdout)"
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

    try:
        bundle = sys.stdin.buffer.read() if str(args.bundle) == "-" else args.bundle.read_bytes()
        refreshed = asyncio.run(_call(args.url, bundle, args.wait))
    except (OSError, Refused, Unavailable) as error:
        print(f"recordseal bundle refresh: {error}", file=sys.stderr)
        return EXIT_INPUT
    except BundleError as error:
        print(f"recordseal bundle refresh: refused the answer: {error}", file=sys.stderr)
        return EXIT_MISMATCH
    if args.out is not None:
        args.out.write_bytes(refreshed.bundle)
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
    print(f"recordseal bundle refresh: {summary}", file=sys.stderr)
    return 0

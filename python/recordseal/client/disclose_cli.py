"""``recordseal disclose RECORD_ID --field PATH… [--wait S] [-o FILE]``: a disclosure bundle.

Fields are named by their committed paths (``o:/amount``, ``oao:/items/0/sku``: docs/spec.md,
section 2). With --wait, the service waits up to that many seconds (at most its bound, 60) for
the record to be sealed and its checkpoint witnessed, so a bundle asked for right after ingest
can verify in full; without it, a bundle of a record not yet sealed verifies INCOMPLETE until
it is refreshed (``recordseal bundle refresh``). The bundle goes to FILE (standard output by
default) as the service answered it; standard error says whether it is sealed.

Exit codes: 0 the bundle was written; 2 no service or token given; 3 the service refused
(the problem's code, field and detail on standard error) or could not be reached, or FILE
could not be written; 64 a usage error; 130 interrupted (Ctrl-C: the request is abandoned
and nothing is written; a second Ctrl-C exits at once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from recordseal.client.connection import Service, add_service_options, said_missing, service_of
from recordseal.client.models import Refused, Unavailable
from recordseal.interrupts import EXIT_INTERRUPTED, Interrupt, interruptible
from recordseal.verify.cli import add_documented

EXIT_SETTING = 2
EXIT_FAILED = 3


def add_disclose_parser(subparsers: Any) -> None:
    """Add ``disclose`` to an ``add_subparsers()`` object."""
    text = "write a disclosure bundle of chosen fields of a record"
    command = add_documented(subparsers, "disclose", text, __doc__)
    command.add_argument("record_id", metavar="RECORD_ID", help="the record's id")
    command.add_argument(
        "--field",
        dest="fields",
        action="extend",
        nargs="+",
        required=True,
        metavar="PATH",
        help="a committed path to disclose, such as o:/amount (repeat or list several)",
    )
    command.add_argument(
        "--wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds the service may wait for the record's witnessed proof (at most 60)",
    )
    command.add_argument(
        "-o", "--out", type=Path, default=None, metavar="FILE", help="where to write the bundle"
    )
    command.add_argument(
        "--json",
        action="store_true",
        help="print what was written as JSON (with the bundle inside unless --out)",
    )
    add_service_options(command)
    command.set_defaults(run=_disclose)


async def _call(service: Service, args: argparse.Namespace, interrupt: Interrupt) -> bytes:
    from recordseal.client.session import Client  # httpx and the verifier: on use only

    loop, call = asyncio.get_running_loop(), asyncio.current_task()
    assert call is not None

    def first_interrupt() -> None:
        loop.call_soon_threadsafe(call.cancel)

    interrupt.on_first = first_interrupt
    async with Client(service.url, service.token) as client:
        return await client.disclose(args.record_id, args.fields, wait=args.wait)


def _disclose(args: argparse.Namespace) -> int:
    service = said_missing("recordseal disclose", service_of, args)
    if service is None:
        return EXIT_SETTING
    try:
        with interruptible("recordseal disclose", "nothing was written") as interrupt:
            bundle = asyncio.run(_call(service, args, interrupt))
    except asyncio.CancelledError:
        print("recordseal disclose: interrupted (Ctrl-C); nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Refused as error:
        print(f"recordseal disclose: {_refusal(error)}", file=sys.stderr)
        return EXIT_FAILED
    except Unavailable as error:
        print(f"recordseal disclose: {error}", file=sys.stderr)
        return EXIT_FAILED
    try:
        if args.out is not None:
            args.out.write_bytes(bundle)
    except OSError as error:
        print(f"recordseal disclose: {error}", file=sys.stderr)
        return EXIT_FAILED
    sealed = msgspec.json.decode(bundle).get("seal") is not None
    if args.json:
        written: dict[str, Any] = {
            "record_id": args.record_id,
            "fields": args.fields,
            "sealed": sealed,
            "out": None if args.out is None else str(args.out),
        }
        if args.out is None:
            written["bundle"] = msgspec.json.decode(bundle)
        print(json.dumps(written, indent=2))
        return 0
    if args.out is None:
        sys.stdout.buffer.write(bundle)
        sys.stdout.flush()
    where = "standard output" if args.out is None else str(args.out)
    state = (
        "sealed"
        if sealed
        else "not sealed yet: it verifies INCOMPLETE until refreshed (recordseal bundle"
        " refresh), or ask again with --wait"
    )
    count = len(args.fields)
    print(
        f"recordseal disclose: {count} field{'s' if count != 1 else ''} of {args.record_id}"
        f" to {where}; {state}",
        file=sys.stderr,
    )
    return 0


def _refusal(error: Refused) -> str:
    problem = error.problem
    at = f" at {problem.field}" if problem.field else ""
    return f"{problem.status} {problem.code}{at}: {problem.detail or problem.title}"

"""``recordseal records list STREAM``: a stream's records by sequence number, with their seal,
through the record API with the tenant's token (docs/client.md, "Streams, records and
subjects"). One record a line, tab-separated under a header; gap headers, which declare
sequence numbers lost, show as ``gap``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

import msgspec

from recordseal.client.connection import add_service_options
from recordseal.ops.options import family, json_option
from recordseal.ops.service_calls import EXIT_SETTING, CallFailed, call, calling

if TYPE_CHECKING:
    from recordseal.client.models import StreamRecord
    from recordseal.client.session import Client

COLUMNS = ("seq", "record_id", "kind", "occurred_at", "sealed")
#: The most records one command lists, as the API's largest page.
MOST = 1000


def register(commands: Any) -> None:
    records = family(commands, "records", "a stream's records: list", "records_command")
    listing = records.add_parser("list", help="a stream's records by seq, with their seal")
    listing.add_argument("stream", metavar="STREAM", help="the stream's name")
    listing.add_argument(
        "--from-seq", type=int, default=1, metavar="N", help="the first sequence number (1)"
    )
    listing.add_argument(
        "--limit", type=int, default=100, metavar="N", help=f"at most N records (100; 1-{MOST})"
    )
    json_option(listing, "the records (signed headers and seals)")
    add_service_options(listing)
    listing.set_defaults(run=calling("records list", _list))


def _list(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= MOST:
        raise CallFailed(f"--limit {args.limit}: give 1 to {MOST}", EXIT_SETTING)
    if args.from_seq < 1:
        raise CallFailed(f"--from-seq {args.from_seq}: sequence numbers start at 1", EXIT_SETTING)

    async def first(client: Client) -> list[StreamRecord]:
        found: list[StreamRecord] = []
        async for record in client.records(args.stream, args.from_seq, page_size=args.limit):
            found.append(record)
            if len(found) == args.limit:
                break
        return found

    records = call(args, first)
    if args.json:
        print(json.dumps(msgspec.to_builtins(records), indent=2))
        return 0
    print("\t".join(COLUMNS))
    for r in records:
        sealed = "no" if r.seal is None else f"{r.seal.log} #{r.seal.index}"
        occurred = str(r.header.get("occurred_at", "-"))
        print("\t".join((str(r.seq), r.record_id, r.kind, occurred, sealed)))
    return 0

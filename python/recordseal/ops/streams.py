"""``recordseal stream create|list|show``: a tenant's streams, through the record API with the
tenant's token (docs/client.md, "Streams, records and subjects").

``create NAME`` declares the kinds of committed paths (``--declare o:/amount=amount``, or a
JSON object of them in ``--declarations FILE``) and, with ``--strict``, refuses records with
undeclared paths; ``--exist-ok`` answers a stream that exists as declared (a script may run
twice). ``list`` prints one stream a line; ``show NAME`` one stream.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

import msgspec

from recordseal.client.connection import add_service_options
from recordseal.ops.options import family, json_option, path_option
from recordseal.ops.service_calls import EXIT_SETTING, CallFailed, call, calling

if TYPE_CHECKING:
    from recordseal.client.models import Stream

COLUMNS = ("name", "records", "next seq", "strict", "declarations", "created")


def register(commands: Any) -> None:
    stream = family(commands, "stream", "a tenant's streams: create, list, show", "stream_command")
    create = stream.add_parser("create", help="create a stream, declaring its paths' kinds")
    create.add_argument("name", metavar="NAME", help="the stream's name")
    create.add_argument(
        "--declare",
        action="append",
        default=[],
        metavar="PATH=KIND",
        help="the kind of a committed path pattern, such as o:/amount=amount (repeatable;"
        " docs/spec.md, section 6.1)",
    )
    both = "a JSON object of path patterns to kinds (with --declare: both, --declare last)"
    path_option(create, "--declarations", metavar="FILE", text=both)
    for flag, meaning in (
        ("--strict", "refuse records with a path not declared"),
        ("--exist-ok", "succeed when the stream exists with the same declarations (a second run)"),
    ):
        create.add_argument(flag, action="store_true", help=meaning)
    _client_options(create, "the stream")
    create.set_defaults(run=calling("stream create", _create))
    listing = stream.add_parser("list", help="list the tenant's streams")
    _client_options(listing, "the streams")
    listing.set_defaults(run=calling("stream list", _list))
    show = stream.add_parser("show", help="a stream: declarations, records, next seq")
    show.add_argument("name", metavar="NAME", help="the stream's name")
    _client_options(show, "the stream")
    show.set_defaults(run=calling("stream show", _show))


def _client_options(command: argparse.ArgumentParser, what: str) -> None:
    json_option(command, what)
    add_service_options(command)


def declarations_of(args: argparse.Namespace) -> dict[str, str]:
    """The declarations of ``--declarations FILE`` and ``--declare PATH=KIND``."""
    declared: dict[str, str] = {}
    if args.declarations is not None:
        try:
            read = msgspec.json.decode(args.declarations.read_bytes(), type=dict[str, str])
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as error:
            raise CallFailed(
                f"--declarations {args.declarations}: not a JSON object of path patterns to"
                f" kinds ({error})",
                EXIT_SETTING,
            ) from None
        declared.update(read)
    for item in args.declare:
        path, equals, kind = item.rpartition("=")
        if not equals or not path or not kind:
            raise CallFailed(
                f"--declare {item!r}: give PATH=KIND, such as o:/amount=amount", EXIT_SETTING
            )
        declared[path] = kind
    return declared


def stream_json(stream: Stream) -> dict[str, Any]:
    document: dict[str, Any] = msgspec.to_builtins(stream)
    return document


def _create(args: argparse.Namespace) -> int:
    declared = declarations_of(args)
    stream = call(
        args,
        lambda client: client.create_stream(
            args.name, declared or None, args.strict, exist_ok=args.exist_ok
        ),
    )
    if args.json:
        print(json.dumps(stream_json(stream), indent=2))
        return 0
    kinds = ", ".join(f"{p}={k}" for p, k in sorted(stream.declarations.items())) or "none"
    strict = "; strict" if stream.strict else ""
    print(f"stream {stream.name!r}: declarations {kinds}{strict}; next seq {stream.next_seq}")
    return 0


def _list(args: argparse.Namespace) -> int:
    async def every(client: Any) -> list[Stream]:
        return [stream async for stream in client.streams()]

    streams = call(args, every)
    if args.json:
        print(json.dumps([stream_json(s) for s in streams], indent=2))
        return 0
    print("\t".join(COLUMNS))
    for s in streams:
        count = "-" if s.record_count is None else str(s.record_count)
        kinds = ",".join(f"{p}={k}" for p, k in sorted(s.declarations.items())) or "-"
        cells = (s.name, count, str(s.next_seq), "yes" if s.strict else "no", kinds, s.created_at)
        print("\t".join(cells))
    return 0


def _show(args: argparse.Namespace) -> int:
    stream = call(args, lambda client: client.stream(args.name))
    if args.json:
        print(json.dumps(stream_json(stream), indent=2))
        return 0
    count = "not said" if stream.record_count is None else str(stream.record_count)
    print(f"stream       {stream.name}")
    print(f"records      {count}")
    print(f"next seq     {stream.next_seq}")
    print(f"strict       {'yes' if stream.strict else 'no'}")
    print(f"fleet        {stream.fleet}")
    print(f"created      {stream.created_at}")
    for path, kind in sorted(stream.declarations.items()):
        print(f"declared     {path} = {kind}")
    if not stream.declarations:
        print("declared     nothing (every path commits as free)")
    return 0

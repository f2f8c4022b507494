"""``recordseal ingest FILE|- --stream S``: JSON Lines into a stream, in batches, safe to rerun.

Each line is a record as ``POST /v1/records`` takes it, without ``stream``. Lines go in batches
of 100 under idempotency keys derived from the input's name and the line's number, so running
the same command again (after an interruption, after correcting refused lines in place, or
with lines appended) stores no line twice; the service remembers keys for 24 hours by default.
Do not insert or remove lines of an input already sent: the lines after them would be new
lines to the service.

The input's name is its absolute path, or --source NAME (required for standard input): give a
new name to a new input that a previous one's path held within those 24 hours.

Standard output gets one JSON line per refused line (line, status, code, field, detail), and
with --json a last one with the summary ({"summary": {...}}); standard error gets a progress
bar when it is a terminal, and the summary in words.

Exit codes: 0 every line stored (by this run or an earlier one); 1 some lines refused, the
others stored; 2 no service or token given; 3 the input could not be read, or the service
refused or could not be reached for a whole batch (what was sent is stored: run the same
command again); 64 a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from recordseal.client.connection import MissingSetting, Service, add_service_options, service_of
from recordseal.client.lines import Batch, LineRefusal, batches, source_key
from recordseal.client.models import Problem, Receipt, Refused, Unavailable

if TYPE_CHECKING:
    from recordseal.client.session import Client

EXIT_REFUSED = 1
EXIT_SETTING = 2
EXIT_FAILED = 3
EXIT_USAGE = 64


def add_ingest_parser(subparsers: Any) -> None:
    """Add ``ingest`` to an ``add_subparsers()`` object."""
    command = subparsers.add_parser(
        "ingest",
        help="ingest JSON Lines into a stream, in batches, safe to rerun",
        description=(__doc__ or "").replace("``", ""),  # --help is plain text
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    command.add_argument(
        "input", metavar="FILE", help="JSON Lines, one record per line ('-' for standard input)"
    )
    command.add_argument("--stream", required=True, help="the stream the records go to")
    command.add_argument(
        "--source",
        default=None,
        metavar="NAME",
        help="the input's name, which the idempotency keys are derived from (default: the"
        " file's absolute path; required for standard input)",
    )
    command.add_argument(
        "--receipts",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write one JSON line per stored line: line, record_id, seq, replayed",
    )
    command.add_argument("--concurrency", type=int, default=4, help="batches in flight at once (4)")
    command.add_argument(
        "--json",
        action="store_true",
        help="also write the summary as the last JSON line of standard output",
    )
    add_service_options(command)
    command.set_defaults(run=_ingest)


@dataclass
class Tally:
    """What became of the lines read so far."""

    lines: int = 0
    stored: int = 0
    already_stored: int = 0
    blank: int = 0
    unsent: int = 0
    refused: Counter[str] = field(default_factory=Counter)

    def summary(self, source: str, stream: str) -> dict[str, Any]:
        return {
            "source": source,
            "stream": stream,
            "lines": self.lines,
            "stored": self.stored,
            "already_stored": self.already_stored,
            "refused": sum(self.refused.values()),
            "refused_by_code": dict(sorted(self.refused.items())),
            "blank": self.blank,
            "unsent": self.unsent,
        }


def _ingest(args: argparse.Namespace) -> int:
    if args.input == "-" and args.source is None:
        print(
            "recordseal ingest: standard input has no name to derive idempotency keys from;"
            " give --source NAME (the same on a rerun)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.concurrency < 1:
        print("recordseal ingest: --concurrency must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        service = service_of(args)
    except MissingSetting as error:
        print(f"recordseal ingest: {error}", file=sys.stderr)
        return EXIT_SETTING
    try:
        with _opened(args.input) as (lines, total), _receipts(args.receipts) as receipts:
            asyncio.run(_check_stream(service, args.stream))
            source = args.source or str(Path(args.input).resolve())
            tally = Tally()
            with _progress(total) as advance:
                failure = asyncio.run(
                    _send_all(args, service, lines, source, tally, receipts, advance)
                )
    except (OSError, Refused, Unavailable) as error:
        print(f"recordseal ingest: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"summary": tally.summary(source, args.stream)}), flush=True)
    print(_in_words(tally, failure), file=sys.stderr)
    if failure is not None:
        return EXIT_FAILED
    return EXIT_REFUSED if tally.refused else 0


async def _check_stream(service: Service, stream: str) -> None:
    """Refuse at once, before any line is read, a stream that does not exist or a token the
    service does not take (:class:`Refused`), or a service that cannot be reached."""
    from recordseal.client.session import Client  # httpx and the verifier: on use only

    async with Client(service.url, service.token) as client:
        await client.stream(stream)


#: A batch read and the task that sends it (None when it has nothing to send).
_Sent = tuple[Batch, "asyncio.Task[list[Receipt | Problem]] | None"]


async def _send_all(
    args: argparse.Namespace,
    service: Service,
    lines: Iterable[bytes],
    source: str,
    tally: Tally,
    receipts: IO[str] | None,
    advance: Callable[[int], None],
) -> str | None:
    """Send the batches, at most ``concurrency`` at once, and report each as it is answered,
    in line order; stop reading at the first batch that fails as a whole, or at an input that
    cannot be read (the batches in flight are still reported). The failure, or None."""
    from recordseal.client.session import Client

    async with Client(service.url, service.token, concurrency=args.concurrency) as client:
        sent: asyncio.Queue[_Sent | None] = asyncio.Queue(maxsize=args.concurrency)
        stop = asyncio.Event()
        prefix = source_key(source, args.stream)
        reader = asyncio.create_task(_read(client, lines, args.stream, prefix, sent, stop))
        failure: str | None = None
        while (entry := await sent.get()) is not None:
            batch, task = entry
            try:
                results = [] if task is None else await task
            except (Refused, Unavailable) as error:
                failure = failure or f"lines from {batch.first_line}: {error}"
                stop.set()
                tally.unsent += sum(item is not None for item in batch.items)
                results = []
            _report(batch, results, tally, receipts)
            advance(batch.size)
        try:
            await reader
        except OSError as error:
            failure = failure or f"reading the input: {error}"
        return failure


async def _read(
    client: Client,
    lines: Iterable[bytes],
    stream: str,
    prefix: str,
    sent: asyncio.Queue[_Sent | None],
    stop: asyncio.Event,
) -> None:
    """Read the input batch by batch (in a thread: a slow pipe holds up no answer) and send
    each batch as it is read; None at the end."""
    iterator = batches(lines, stream, prefix)
    try:
        while not stop.is_set():
            batch = await asyncio.to_thread(next, iterator, None)
            if batch is None:
                break
            task = None
            if batch.items:
                task = asyncio.create_task(client.ingest_batch(batch.items, batch.key))
            await sent.put((batch, task))
    finally:
        await sent.put(None)


def _report(
    batch: Batch,
    results: list[Receipt | Problem],
    tally: Tally,
    receipts: IO[str] | None,
) -> None:
    """Count a batch's lines and write its refusals (in line order) and receipts."""
    tally.lines += batch.lines
    tally.blank += batch.blank
    refusals = list(batch.refused)
    for index, result in enumerate(results):
        if batch.items[index] is None:
            continue  # a place held for a blank line or a line refused here
        line = batch.first_line + index
        if isinstance(result, Problem):
            detail = result.detail or result.title
            refusals.append(LineRefusal(line, result.status, result.code, result.field, detail))
            continue
        if result.replayed:
            tally.already_stored += 1
        else:
            tally.stored += 1
        if receipts is not None:
            receipt = {"line": line, "record_id": result.record_id, "seq": result.seq}
            receipts.write(json.dumps(receipt | {"replayed": result.replayed}) + "\n")
    if receipts is not None:
        receipts.flush()
    for refusal in sorted(refusals, key=lambda r: r.line):
        tally.refused[refusal.code] += 1
        print(json.dumps(asdict(refusal)), flush=True)


def _in_words(tally: Tally, failure: str | None) -> str:
    refused = sum(tally.refused.values())
    parts = [f"{tally.stored} stored", f"{tally.already_stored} already stored"]
    if refused:
        codes = ", ".join(f"{code} {count}" for code, count in sorted(tally.refused.items()))
        parts.append(f"{refused} refused ({codes})")
    if tally.blank:
        parts.append(f"{tally.blank} blank")
    if tally.unsent:
        parts.append(f"{tally.unsent} not sent")
    text = f"recordseal ingest: {tally.lines} lines: " + ", ".join(parts)
    if refused:
        text += (
            "\nthe refused lines are on standard output; correct them in place and run the"
            " same command again: the stored lines are recognised"
        )
    if tally.refused["idempotency_key_reused"]:
        text += (
            "\nidempotency_key_reused: another input under the same name sent other lines"
            " within the service's retention; give this one a --source of its own"
        )
    if failure is not None:
        text += f"\nstopped: {failure}\nrun the same command again: the stored lines are recognised"
    return text


@contextmanager
def _opened(name: str) -> Iterator[tuple[Iterable[bytes], int | None]]:
    """The input's lines and its size in bytes when known (a regular file)."""
    if name == "-":
        yield sys.stdin.buffer, None
        return
    path = Path(name)
    with path.open("rb") as file:
        yield file, path.stat().st_size if path.is_file() else None


@contextmanager
def _receipts(path: Path | None) -> Iterator[IO[str] | None]:
    if path is None:
        yield None
        return
    with path.open("w") as file:
        yield file


@contextmanager
def _progress(total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar of the bytes read, on standard error when it is a terminal."""
    if not sys.stderr.isatty():
        yield lambda size: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    columns = ("ingesting", BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("ingest", total=total)
        yield lambda size: progress.advance(task, size)

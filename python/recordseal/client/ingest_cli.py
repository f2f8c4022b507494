"""``recordseal ingest FILE|- --stream S``: JSON Lines into a stream, in batches, safe to rerun.

Each line is a record as ``POST /v1/records`` takes it, without ``stream``. Lines go in batches
(--batch-size, 100) under idempotency keys derived from the input's name and the batch's first
line, so running the same command again (after an interruption, after correcting refused lines
in place, or with lines appended) stores no line twice; the service remembers keys for 24 hours
by default. Do not insert or remove lines of an input already sent, nor change --batch-size
between runs of one input: the lines after them would be new lines to the service.

Ctrl-C stops reading: the batches in flight are answered (within 5 s), the summary says what
was stored, and the command exits 130; run the same command again to go on. A second Ctrl-C
stops at once.

The input's name is its absolute path, or --source NAME (required for standard input): give a
new name to a new input that a previous one's path held within those 24 hours.

Standard output gets one JSON line per refused line (line, status, code, field, detail), and
with --json a last one with the summary ({"summary": {...}}, with the elapsed seconds and the
records answered per second); standard error gets a progress bar (records, records/s, bytes)
when it is a terminal, and the summary in words.

Exit codes: 0 every line stored (by this run or an earlier one); 1 some lines refused, the
others stored; 2 no service or token given; 3 the input could not be read, or the service
refused or could not be reached for a whole batch (what was sent is stored: run the same
command again); 64 a usage error; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from recordseal.client.connection import Service, add_service_options, said_missing, service_of
from recordseal.client.ingest_sending import Advance, BatchReader, Sender, Tally
from recordseal.client.lines import LINES_PER_BATCH, Batch, LineRefusal, batches, source_key
from recordseal.client.models import Problem, Receipt, Refused, Unavailable
from recordseal.interrupts import EXIT_INTERRUPTED, Interrupt, interruptible
from recordseal.verify.cli import add_documented

EXIT_REFUSED = 1
EXIT_SETTING = 2
EXIT_FAILED = 3
EXIT_USAGE = 64
#: The most lines one batch takes (the service's batch limit).
MAX_BATCH_SIZE = 1000
RESUME = "run the same command again: the stored lines are recognised"


def add_ingest_parser(subparsers: Any) -> None:
    """Add ``ingest`` to an ``add_subparsers()`` object."""
    text = "ingest JSON Lines into a stream, in batches, safe to rerun"
    command = add_documented(subparsers, "ingest", text, __doc__)
    command.add_argument(
        "input", metavar="FILE", help="JSON Lines, one record per line ('-' for standard input)"
    )
    command.add_argument("--stream", required=True, help="the stream the records go to")
    source = (
        "the input's name, which the idempotency keys are derived from (default: the file's"
        " absolute path; required for standard input)"
    )
    command.add_argument("--source", metavar="NAME", help=source)
    receipts = "also write one JSON line per stored line: line, record_id, seq, replayed"
    command.add_argument("--receipts", type=Path, metavar="FILE", help=receipts)
    command.add_argument("--concurrency", type=int, default=4, help="batches in flight at once (4)")
    size = f"lines per batch, 1 to {MAX_BATCH_SIZE} ({LINES_PER_BATCH}; the same on a rerun)"
    command.add_argument("--batch-size", type=int, default=LINES_PER_BATCH, metavar="N", help=size)
    summary = "also write the summary as the last JSON line of standard output"
    command.add_argument("--json", action="store_true", help=summary)
    add_service_options(command)
    command.set_defaults(run=_ingest)


def summary(tally: Tally, source: str, stream: str, elapsed: float) -> dict[str, Any]:
    answered = tally.stored + tally.already_stored + sum(tally.refused.values())
    return {
        "source": source,
        "stream": stream,
        "lines": tally.lines,
        "stored": tally.stored,
        "already_stored": tally.already_stored,
        "refused": sum(tally.refused.values()),
        "refused_by_code": dict(sorted(tally.refused.items())),
        "blank": tally.blank,
        "unsent": tally.unsent,
        "unanswered": tally.unanswered,
        "elapsed_seconds": round(elapsed, 3),
        "records_per_second": round(answered / elapsed, 1) if elapsed > 0 else None,
    }


def _usage_refusal(args: argparse.Namespace) -> str | None:
    if args.input == "-" and args.source is None:
        return (
            "standard input has no name to derive idempotency keys from;"
            " give --source NAME (the same on a rerun)"
        )
    if args.concurrency < 1:
        return "--concurrency must be at least 1"
    if not 1 <= args.batch_size <= MAX_BATCH_SIZE:
        return f"--batch-size must be 1 to {MAX_BATCH_SIZE}"
    return None


def _ingest(args: argparse.Namespace) -> int:
    refusal = _usage_refusal(args)
    if refusal is not None:
        print(f"recordseal ingest: {refusal}", file=sys.stderr)
        return EXIT_USAGE
    service = said_missing("recordseal ingest", service_of, args)
    if service is None:
        return EXIT_SETTING
    started = time.monotonic()
    source = args.source or str(Path(args.input).resolve())
    tally = Tally()
    try:
        with (
            _opened(args.input) as (lines, total),
            _receipts(args.receipts) as receipts,
            _progress(total) as advance,
            interruptible("recordseal ingest", RESUME) as interrupt,
        ):
            run = _Run(args, service, source, tally, receipts, advance, interrupt)
            failure = asyncio.run(run.all(lines))
    except (OSError, Refused, Unavailable) as error:
        print(f"recordseal ingest: {error}{_hint(error, args.stream)}", file=sys.stderr)
        return EXIT_FAILED
    if failure == NOT_STARTED:
        print(f"recordseal ingest: {NOT_STARTED}: nothing was sent", file=sys.stderr)
        return EXIT_INTERRUPTED
    elapsed = time.monotonic() - started
    if args.json:
        print(json.dumps({"summary": summary(tally, source, args.stream, elapsed)}), flush=True)
    print(_in_words(tally, failure, elapsed, interrupt.requested), file=sys.stderr)
    if interrupt.requested:
        return EXIT_INTERRUPTED
    if failure is not None:
        return EXIT_FAILED
    return EXIT_REFUSED if tally.refused else 0


def _hint(error: Exception, stream: str) -> str:
    """How to make the stream the service does not know."""
    if isinstance(error, Refused) and error.problem.code == "stream_not_found":
        return (
            f"\ncreate it first: recordseal stream create {stream} [--declare PATH=KIND ...]"
            " (docs/client.md)"
        )
    return ""


#: The failure of a run that a Ctrl-C stopped before it sent anything.
NOT_STARTED = "interrupted before the first batch"


class _Run:
    """One ``ingest`` in one event loop: the stream checked, then every batch sent."""

    def __init__(
        self,
        args: argparse.Namespace,
        service: Service,
        source: str,
        tally: Tally,
        receipts: IO[str] | None,
        advance: Advance,
        interrupt: Interrupt,
    ) -> None:
        self.args, self.service, self.source, self.tally = args, service, source, tally
        self.receipts, self.advance, self.interrupt = receipts, advance, interrupt

    async def all(self, lines: IO[bytes]) -> str | None:
        from recordseal.client.session import Client  # httpx and the verifier: on use only

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def first_interrupt() -> None:
            loop.call_soon_threadsafe(stop.set)

        self.interrupt.on_first = first_interrupt
        concurrency = self.args.concurrency
        async with Client(self.service.url, self.service.token, concurrency=concurrency) as client:
            # A missing stream or a token the service does not take is refused at once,
            # before any line is read.
            await client.stream(self.args.stream)
            if self.interrupt.requested:
                return NOT_STARTED
            prefix = source_key(self.source, self.args.stream)
            size = self.args.batch_size
            reader = BatchReader(
                lines.fileno(),
                lambda read: batches(read, self.args.stream, prefix, size),
                depth=concurrency,
            )
            sender = Sender(client, reader, self.tally, self.report, self.advance, concurrency)
            return await sender.run(stop)

    def report(self, batch: Batch, results: list[Receipt | Problem]) -> None:
        _report(batch, results, self.tally, self.receipts)


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


def _in_words(tally: Tally, failure: str | None, elapsed: float, interrupted: bool) -> str:
    refused = sum(tally.refused.values())
    parts = [f"{tally.stored} stored", f"{tally.already_stored} already stored"]
    if refused:
        codes = ", ".join(f"{code} {count}" for code, count in sorted(tally.refused.items()))
        parts.append(f"{refused} refused ({codes})")
    if tally.blank:
        parts.append(f"{tally.blank} blank")
    if tally.unsent:
        parts.append(f"{tally.unsent} not sent")
    if tally.unanswered:
        parts.append(f"{tally.unanswered} not answered (they may be stored)")
    answered = tally.stored + tally.already_stored + refused
    rate = f" ({answered / elapsed:,.0f} records/s)" if elapsed > 0 else ""
    text = f"recordseal ingest: {tally.lines} lines: " + ", ".join(parts)
    text += f" in {elapsed:.1f} s{rate}"
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
    if interrupted:
        text += f"\ninterrupted (Ctrl-C) after line {tally.lines}\n{RESUME}"
    elif failure is not None:
        text += f"\nstopped: {failure}\n{RESUME}"
    return text


@contextmanager
def _opened(name: str) -> Iterator[tuple[IO[bytes], int | None]]:
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
def _progress(total: int | None) -> Iterator[Advance]:
    """A progress bar of the records answered, their rate and the bytes read, on standard
    error when it is a terminal."""
    if not sys.stderr.isatty():
        yield lambda size, records: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        "ingesting",
        BarColumn(),
        TextColumn("{task.fields[records]:,} records, {task.fields[rate]:,.0f} records/s"),
        DownloadColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    started = time.monotonic()
    answered = 0
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("ingest", total=total, records=0, rate=0.0)

        def advance(size: int, records: int) -> None:
            nonlocal answered
            answered += records
            rate = answered / max(time.monotonic() - started, 1e-3)
            progress.update(task, advance=size, records=answered, rate=rate)

        yield advance

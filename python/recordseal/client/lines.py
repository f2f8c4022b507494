"""JSON Lines into batches for ``recordseal ingest``, each line at a place a rerun finds again.

Line ``n`` of an input goes into the batch of lines ``100k + 1 … 100k + 100`` as its item
``n - 100k - 1``, and that batch is sent under the idempotency key ``<source key>:<100k + 1>``,
so the service keys the line ``<source key>:<100k + 1>#<n - 100k - 1>`` (docs/records.md,
"Retries"). The key depends only on the input's name, the stream and the line's number: a rerun
of the same input, after an interruption, with refused lines corrected in place, or with lines
appended, stores no line twice. A line that cannot be sent holds its place with a ``null`` item
(refused by the service, storing nothing), so the lines after it keep their keys.

Each line is what ``POST /v1/records`` takes, ``stream`` left out (``--stream`` names it) or
equal to it. Lines go to the service as their exact bytes, so it judges every rule; only what
would make the whole batch unreadable is refused here, with the service's codes: text the
core's JSON reader refuses (``invalid_json``, ``duplicate_member``, ``number_out_of_range``…,
the ``field`` inside the payload as a committed path), and a line too long for a batch.
Blank lines are skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from recordseal.core import CommitError, canonicalize

#: Lines per batch: the grid of the keys. 100 lines of at most MAX_LINE_BYTES stay under the
#: service's 32 MiB batch body.
LINES_PER_BATCH = 100
#: The longest line sent: a payload is at most 262,144 bytes, and the envelope's members are
#: short, so a longer line cannot be a record.
MAX_LINE_BYTES = 320 * 1024


@dataclass(frozen=True, slots=True)
class LineRefusal:
    """Why a line was not stored: the service's problem, or the same rule applied here."""

    line: int
    status: int
    code: str
    field: str | None
    detail: str


@dataclass(slots=True)
class Batch:
    """Lines ``first_line …`` of the grid: item ``i`` is line ``first_line + i`` (None holds
    the place of a line refused here or blank)."""

    first_line: int
    key: str
    items: list[msgspec.Raw | None] = field(default_factory=list)
    refused: list[LineRefusal] = field(default_factory=list)
    #: Lines read for this batch, blank ones included, and how many of them were blank.
    lines: int = 0
    blank: int = 0
    #: Bytes of input read for this batch (what a progress bar counts).
    size: int = 0


class _Named(msgspec.Struct):
    stream: Any = msgspec.UNSET  # told apart from a "stream": null


_named = msgspec.json.Decoder(_Named)


def source_key(source: str, stream: str) -> str:
    """The prefix of every key of an input: its name and the stream, hashed (a key is 1 to
    255 of ``A-Z a-z 0-9 . _ : -``)."""
    digest = hashlib.sha256(f"recordseal ingest\n{stream}\n{source}".encode()).hexdigest()
    return f"ingest-{digest[:32]}"


def batches(
    lines: Iterable[bytes], stream: str, prefix: str, size: int = LINES_PER_BATCH
) -> Iterator[Batch]:
    """The batches of ``size`` lines of ``lines`` (each with or without its line end), in
    order; a batch with nothing to send is yielded too, for its refusals and size."""
    batch: Batch | None = None
    for number, raw in enumerate(lines, start=1):
        if batch is None or number >= batch.first_line + size:
            if batch is not None:
                yield _trimmed(batch)
            batch = Batch(number, f"{prefix}:{number}")
        batch.lines += 1
        batch.size += len(raw)
        item = _item(raw.rstrip(b"\r\n"), number, stream)
        if isinstance(item, LineRefusal):
            batch.refused.append(item)
            item = None
        elif item is None:
            batch.blank += 1
        # Every line has its place, so the lines after it keep their index.
        batch.items.extend([None] * (number - batch.first_line - len(batch.items)))
        batch.items.append(item)
    if batch is not None:
        yield _trimmed(batch)


def _trimmed(batch: Batch) -> Batch:
    """Without the places held at its end: no line after them needs its index kept."""
    while batch.items and batch.items[-1] is None:
        batch.items.pop()
    return batch


def _item(line: bytes, number: int, stream: str) -> msgspec.Raw | LineRefusal | None:
    """The batch item of a line (its bytes, with ``stream`` added when it has none), the
    refusal of a line that cannot be sent, or None for a blank line."""
    if not line.strip():
        return None
    if len(line) > MAX_LINE_BYTES:
        return LineRefusal(
            number,
            413,
            "request_too_large",
            None,
            f"the line is over {MAX_LINE_BYTES} bytes: a record's payload is at most 262,144",
        )
    try:
        # As the service reads it inside a batch, so depth is counted the same way.
        canonicalize(b'{"records":[' + line + b"]}")
    except CommitError as error:
        return _reader_refusal(error, number)
    try:
        named = _named.decode(line).stream
    except msgspec.ValidationError:
        return msgspec.Raw(line)  # not an object: the service names the fault
    if named is msgspec.UNSET:
        return msgspec.Raw(_with_stream(line, stream))
    if named != stream:
        return LineRefusal(
            number, 400, "stream_mismatch", "stream", "the line names another stream than --stream"
        )
    return msgspec.Raw(line)


def _with_stream(line: bytes, stream: str) -> bytes:
    """The object ``line`` with ``"stream"`` as its first member."""
    body = line.lstrip()[1:]  # after the "{"
    member = b'{"stream":' + msgspec.json.encode(stream)
    return member + (body if body.lstrip().startswith(b"}") else b"," + body)


def _reader_refusal(error: CommitError, number: int) -> LineRefusal:
    """A fault of the JSON reader, its path taken from the batch to the line: inside the
    payload 422 naming the committed path there (as a single post answers it), elsewhere 400
    naming the member, or no field for text that is not JSON at all."""
    vector, _, pointer = (error.field or "").partition(":")
    steps = pointer.split("/")[3:]  # after "", "records", "0"
    if steps[:1] == ["payload"] and len(steps) > 1:
        inside = vector[3:] + ":" + "".join("/" + step for step in steps[1:])
        return LineRefusal(number, 422, error.code, inside, str(error))
    member = steps[0].replace("~1", "/").replace("~0", "~") if steps else None
    return LineRefusal(number, 400, error.code, member, str(error))

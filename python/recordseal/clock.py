"""The clock and the identifiers made from it: RFC 3339 text for rows, UUIDv7 record ids,
time-ordered subject handles."""

from __future__ import annotations

import os
import time
from datetime import UTC, date, datetime

_second: list[object] = [None, ""]  # the last whole second formatted, and its text


def utc_now() -> str:
    """Now as RFC 3339 in UTC with microseconds, e.g. ``2026-11-21T08:20:26.123456Z``."""
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    if _second[0] != seconds:  # formatting a date is slow; do it once a second
        _second[0] = seconds
        _second[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{_second[1]}.{nanos // 1000:06d}Z"


def utc_minute() -> int:
    """The UTC minute now, in minutes since the Unix epoch."""
    return time.time_ns() // 60_000_000_000


def minute_start(minute: int) -> str:
    """The first instant of a UTC minute as :func:`utc_now` writes it (text compares in time
    order)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(minute * 60))


def utc_datetime() -> datetime:
    """Now, as an aware datetime in UTC (for date arithmetic; rows keep :func:`utc_now`)."""
    return datetime.now(UTC)


def utc_today() -> date:
    return utc_datetime().date()


def new_record_id() -> str:
    """A UUIDv7 (RFC 9562): time-ordered, so new rows land at the end of the index.

    48 bits of Unix milliseconds, version 7, 12 random bits, variant 0b10, 62 random bits,
    formatted as 8-4-4-4-12 lowercase hex.
    """
    millis = (time.time_ns() // 1_000_000) & 0xFFFF_FFFF_FFFF
    rand = int.from_bytes(os.urandom(10), "big")  # 80 bits: 12 for rand_a, 62 for rand_b
    rand_a = rand >> 68
    rand_b = rand & ((1 << 62) - 1)
    clock_seq = 0x8000 | (rand_b >> 48)  # variant 0b10 and the top 14 bits of rand_b
    return (
        f"{millis >> 16:08x}-{millis & 0xFFFF:04x}-{0x7000 | rand_a:04x}-{clock_seq:04x}"
        f"-{rand_b & 0xFFFF_FFFF_FFFF:012x}"
    )


def new_subject_ref() -> str:
    """A subject's handle: 128 bits as 32 lowercase hex digits, the first 48 the Unix
    milliseconds of its creation and the other 80 random.

    Opaque like a random handle (it says nothing of the subject, and after erasure it links
    to nothing), but new handles sort after older ones, so the indexes over handles grow at
    their end instead of at a random page per new subject (docs/records.md, "Vault").
    """
    millis = (time.time_ns() // 1_000_000) & 0xFFFF_FFFF_FFFF
    return f"{millis:012x}{os.urandom(10).hex()}"

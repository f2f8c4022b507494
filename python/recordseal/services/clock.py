"""Time and identifiers."""

from __future__ import annotations

import os
import time
import uuid

_second: list[object] = [None, ""]  # the last whole second formatted, and its text


def utc_now() -> str:
    """Now as RFC 3339 in UTC with microseconds, e.g. ``2026-11-21T08:20:26.123456Z``."""
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    if _second[0] != seconds:  # formatting a date is slow; do it once a second
        _second[0] = seconds
        _second[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{_second[1]}.{nanos // 1000:06d}Z"


def new_record_id() -> str:
    """A UUIDv7 (RFC 9562): time-ordered, so new rows land at the end of the index."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version 7
    value |= (rand >> 68) << 64 & (0xFFF << 64)  # rand_a, 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b, 62 bits
    return str(uuid.UUID(int=value))

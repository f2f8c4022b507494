"""Strict text forms of binary values and instants, as bundles use them.

Hex is lowercase (docs/bundle.md); base64 is canonical, padded RFC 4648 section 4, as in the
C2SP formats; instants are RFC 3339 date-times, compared as points in time.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

import msgspec

HEX_PATTERN = "^(?:[0-9a-f]{2})*$"
HEX32_PATTERN = "^[0-9a-f]{64}$"
BASE64_PATTERN = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))"
)


def b64decode(text: str) -> bytes | None:
    """The bytes of canonical padded base64 ``text``, or None."""
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


#: An RFC 3339 date-time kept as its text (what was signed is the text as received); its
#: JSON Schema says ``format: date-time`` (msgspec's schema, and the OpenAPI document through
#: ``web/openapi.py``). Decoding does not check it: :func:`parse_instant` does, where a rule
#: names the member.
Timestamp = Annotated[
    str, msgspec.Meta(extra_json_schema={"format": "date-time"}, examples=["2026-11-21T08:00:00Z"])
]


def parse_instant(text: str) -> datetime | None:
    """An RFC 3339 date-time as an aware UTC datetime (microseconds kept), or None.

    Leap seconds are refused, as for the kind ``timestamp`` (docs/spec.md 3.2).
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, off_h, off_m = match.groups()
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micros, UTC
        )
    except ValueError:
        return None
    if sign is not None:
        if int(off_h) > 23 or int(off_m) > 59:
            return None
        offset = (int(off_h) * 60 + int(off_m)) * (1 if sign == "+" else -1)
        try:
            moment -= timedelta(minutes=offset)
        except OverflowError:
            return None
    return moment


def format_instant(moment: datetime) -> str:
    """RFC 3339 in UTC with ``Z``; fractional seconds only when there are some."""
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + "Z"

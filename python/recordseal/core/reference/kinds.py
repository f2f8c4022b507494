"""Field kinds and ``enc(value)`` (docs/spec.md section 3).

Checks run in the order of the spec: the kind is known; a number is finite and within
±(2^53 - 1); the value has the JSON type the kind takes; the kind's own rule.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from importlib import resources

from ..errors import CommitError
from .number import coordinate_text, number_text

#: Every field kind, ``free`` included, in alphabetical order.
KINDS: tuple[str, ...] = (
    "boolean",
    "currency",
    "date",
    "decimal",
    "digest",
    "free",
    "integer",
    "lat6",
    "lat9",
    "lon6",
    "money",
    "text",
    "timestamp",
    "uuid",
)

#: How money is sent: the refusals of the kind ``money`` say it, so that ``12.50`` and
#: ``"12.50"`` are answered with what to send instead (``1250``).
MINOR_UNITS = "a whole number of minor units (cents)"

#: What each kind takes, for the ``value_type`` message (``free`` has a message of its own).
_TAKES = {
    "boolean": "true or false",
    "integer": "a whole number",
    "money": MINOR_UNITS,
    **dict.fromkeys(("currency", "date", "digest", "text", "timestamp", "uuid"), "a string"),
    **dict.fromkeys(("decimal", "lat6", "lat9", "lon6"), "a number"),
}

#: Largest magnitude of a committed number: 2^53 - 1, beyond which doubles skip integers.
MAX_SAFE_INTEGER = 2**53 - 1

# Explicit [0-9] and [0-9a-fA-F], and fullmatch rather than "$": "\d" also matches non-ASCII
# digits, and "$" matches before a trailing newline.
_HEX = "[0-9a-fA-F]"
_DATE = "([0-9]{4})-([0-9]{2})-([0-9]{2})"
_DATE_PATTERN = re.compile(_DATE)
# RFC 3339 section 5.6 date-time: full-date "T" partial-time time-offset.
_TIMESTAMP_PATTERN = re.compile(
    _DATE + r"[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_HYPHENATED = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
# The four spellings of docs/spec.md 3.3; exactly one group holds the hexadecimal digits.
_UUID_PATTERN = re.compile(
    rf"({_HYPHENATED})|\{{({_HYPHENATED})\}}|[uU][rR][nN]:[uU][uU][iI][dD]:({_HYPHENATED})"
    rf"|({_HEX}{{32}})"
)
_DIGEST_PATTERN = re.compile(f"sha256:({_HEX}{{64}})")
_CURRENCY_PATTERN = re.compile("[A-Za-z]{3}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _load_currencies() -> frozenset[str]:
    text = (resources.files("recordseal.core") / "data" / "iso4217.txt").read_text("utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


_CURRENCIES = _load_currencies()


def encode_value(kind: str, value: object) -> bytes:
    """``enc(value)`` for a field kind (spec section 3)."""
    return encode(kind, value, None)


def encode(kind: str, value: object, field: str | None) -> bytes:
    """``enc(value)``; every refusal carries ``field``."""
    if kind not in KINDS:
        raise CommitError("unknown_kind", "unknown field kind", field)
    number = _number(value, field)
    if isinstance(value, str) and kind in _STRING_TAKERS and _SURROGATE.search(value):
        # A Python str may hold lone surrogates, which no JSON text can carry (docs/spec.md 1.1).
        message = "the string holds a lone surrogate and has no UTF-8 form"
        raise CommitError("lone_surrogate", message, field)
    if kind == "free":
        return _free(value, number, field).encode("utf-8")
    if kind in _NUMBER_RULES:
        if number is None:
            raise _value_type(kind, field)
        return _NUMBER_RULES[kind](number, field).encode("utf-8")
    if kind in _STRING_RULES:
        if not isinstance(value, str):
            raise _value_type(kind, field)
        return _STRING_RULES[kind](value, field).encode("utf-8")
    # The one kind left is boolean.
    if not isinstance(value, bool):
        raise _value_type(kind, field)
    return b"bool:true" if value else b"bool:false"


def _number(value: object, field: str | None) -> float | None:
    """The value as a double if it is a JSON number (never a bool), after the range checks."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        # Every JSON number is read as the nearest double (docs/spec.md 1.4); an int past the
        # largest double has none, which float() reports as OverflowError.
        number = float(value)
    except OverflowError:
        message = "the integer is too large for an IEEE-754 double"
        raise CommitError("number_out_of_range", message, field) from None
    if not math.isfinite(number):
        raise CommitError("number_out_of_range", "numbers must be finite", field)
    if abs(value) > MAX_SAFE_INTEGER:
        message = (
            "numbers must be at most 2^53-1 in magnitude; send larger values as minor units"
            " or strings"
        )
        raise CommitError("integer_out_of_range", message, field)
    # Exact: every integer up to 2^53 - 1 is a double.
    return number


def _value_type(kind: str, field: str | None) -> CommitError:
    return CommitError("value_type", f"the kind {kind} takes {_TAKES[kind]}", field)


def _free(value: object, number: float | None, field: str | None) -> str:
    """Spec 3.1: one tag per JSON type, so that ``"1"`` and ``1`` never collide."""
    if number is not None:
        return "num:" + number_text(number)
    if isinstance(value, str):
        return "str:" + value
    if isinstance(value, bool):
        return "bool:true" if value else "bool:false"
    if value is None:
        return "null:"
    if isinstance(value, dict) and not value:
        return "obj:{}"
    if isinstance(value, list) and not value:
        return "arr:[]"
    message = "only scalars and empty objects or arrays are field values"
    raise CommitError("value_type", message, field)


def _money(number: float, field: str | None) -> str:
    if not number.is_integer():
        message = f"money is {MINOR_UNITS}: 12.50 is sent as 1250"
        raise CommitError("money_fraction", message, field)
    return "money:" + number_text(number)


def _whole(code: str, tag: str) -> Callable[[float, str | None], str]:
    def rule(number: float, field: str | None) -> str:
        if not number.is_integer():
            raise CommitError(code, "the number must be a whole number", field)
        return f"{tag}:{number_text(number)}"

    return rule


def _decimal(number: float, field: str | None) -> str:
    return "dec:" + number_text(number)


def _coordinate(tag: str, limit: int, decimals: int) -> Callable[[float, str | None], str]:
    def rule(number: float, field: str | None) -> str:
        if not -limit <= number <= limit:
            message = f"the coordinate must lie between -{limit} and {limit}"
            raise CommitError("coordinate_out_of_range", message, field)
        return f"{tag}:{coordinate_text(number, decimals)}"

    return rule


_NUMBER_RULES: dict[str, Callable[[float, str | None], str]] = {
    "decimal": _decimal,
    "integer": _whole("not_integer", "int"),
    "lat6": _coordinate("lat6", 90, 6),
    "lat9": _coordinate("lat9", 90, 9),
    "lon6": _coordinate("lon6", 180, 6),
    "money": _money,
}


def _currency(text: str, field: str | None) -> str:
    if _CURRENCY_PATTERN.fullmatch(text) is None or text.upper() not in _CURRENCIES:
        message = "the value must be an ISO 4217 code of three ASCII letters"
        raise CommitError("currency_invalid", message, field)
    return "cur:" + text.upper()


def is_leap_year(year: int) -> bool:
    """Proleptic Gregorian calendar (RFC 3339 appendix C)."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if is_leap_year(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _is_date(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= days_in_month(year, month)


def _date(text: str, field: str | None) -> str:
    match = _DATE_PATTERN.fullmatch(text)
    if match is None or not _is_date(*map(int, match.groups())):
        message = "the value must be an existing date YYYY-MM-DD"
        raise CommitError("date_invalid", message, field)
    return "date:" + text


def _timestamp(text: str, field: str | None) -> str:
    """Spec 3.2: RFC 3339 date-time, written in UTC with the fraction kept (trailing zeros off)."""
    refusal = CommitError(
        "timestamp_invalid",
        "the value must be an RFC 3339 date-time without leap second, in years 0001-9999 once"
        " in UTC",
        field,
    )
    match = _TIMESTAMP_PATTERN.fullmatch(text)
    if match is None:
        raise refusal
    year, month, day, hour, minute, second = map(int, match.group(1, 2, 3, 4, 5, 6))
    fraction, sign, offset_hour, offset_minute = match.group(7, 8, 9, 10)
    if not (_is_date(year, month, day) and hour <= 23 and minute <= 59 and second <= 59):
        raise refusal
    offset = 0
    if sign is not None:
        if int(offset_hour) > 23 or int(offset_minute) > 59:
            raise refusal
        offset = (int(offset_hour) * 60 + int(offset_minute)) * (1 if sign == "+" else -1)
    # UTC = local time minus the offset; an offset below a day moves the date by at most one.
    day_shift, minutes = divmod(hour * 60 + minute - offset, 24 * 60)
    year, month, day = _shift_day(year, month, day, day_shift)
    if not 1 <= year <= 9999:
        raise refusal
    fraction = (fraction or "").rstrip("0")
    return (
        f"time:{year:04d}-{month:02d}-{day:02d}T{minutes // 60:02d}:{minutes % 60:02d}"
        f":{second:02d}{'.' + fraction if fraction else ''}Z"
    )


def _shift_day(year: int, month: int, day: int, shift: int) -> tuple[int, int, int]:
    """The day before (``shift`` -1), the same day (0) or the day after (+1)."""
    if shift > 0:
        if day < days_in_month(year, month):
            return year, month, day + 1
        return (year, month + 1, 1) if month < 12 else (year + 1, 1, 1)
    if shift < 0:
        if day > 1:
            return year, month, day - 1
        if month > 1:
            return year, month - 1, days_in_month(year, month - 1)
        return year - 1, 12, 31
    return year, month, day


def _uuid(text: str, field: str | None) -> str:
    match = _UUID_PATTERN.fullmatch(text)
    if match is None:
        message = "the value must be a UUID in one of the four accepted spellings"
        raise CommitError("uuid_invalid", message, field)
    digits = next(group for group in match.groups() if group).replace("-", "").lower()
    return f"uuid:{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _text(text: str, field: str | None) -> str:
    return "txt:" + unicodedata.normalize("NFC", text)


def _digest(text: str, field: str | None) -> str:
    match = _DIGEST_PATTERN.fullmatch(text)
    if match is None:
        message = "the value must be sha256: and 64 hexadecimal digits"
        raise CommitError("digest_invalid", message, field)
    return "digest:sha256:" + match.group(1).lower()


_STRING_RULES: dict[str, Callable[[str, str | None], str]] = {
    "currency": _currency,
    "date": _date,
    "digest": _digest,
    "text": _text,
    "timestamp": _timestamp,
    "uuid": _uuid,
}

#: Kinds that take a string: a lone surrogate in one is ``lone_surrogate``, in others the
#: value simply has the wrong type.
_STRING_TAKERS = frozenset(_STRING_RULES) | {"free"}

"""RFC 8785 (JCS) canonical serialisation, section 3.2 (docs/spec.md 1.3)."""

from __future__ import annotations

import re

from .number import number_text
from .rfc8259 import JsonValue, decode_utf8, parse

# RFC 8785 3.2.2.2: the two-character escapes; every other control character is \u00xx.
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
_MUST_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def canonicalize(data: bytes) -> bytes:
    """JSON text in, RFC 8785 canonical bytes out."""
    return serialize(parse(decode_utf8(data)))


def serialize(value: JsonValue) -> bytes:
    """The canonical UTF-8 bytes of a parsed value."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts).encode("utf-8")


def member_order(name: str) -> bytes:
    """Sort key of RFC 8785 3.2.3: the name as UTF-16 code units, compared unsigned.

    Big-endian UTF-16 bytes compare exactly like their sequence of 16-bit code units.
    """
    return name.encode("utf-16-be")


def sorted_members(members: dict[str, JsonValue]) -> list[tuple[str, JsonValue]]:
    return sorted(members.items(), key=lambda member: member_order(member[0]))


def _write(value: JsonValue, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, float | int):
        parts.append(number_text(float(value)))
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, list):
        parts.append("[")
        for index, element in enumerate(value):
            if index:
                parts.append(",")
            _write(element, parts)
        parts.append("]")
    else:
        parts.append("{")
        for index, (name, member) in enumerate(sorted_members(value)):
            if index:
                parts.append(",")
            parts.append(_string(name))
            parts.append(":")
            _write(member, parts)
        parts.append("}")


def _string(text: str) -> str:
    """RFC 8785 3.2.2.2: escape only what must be; everything else is written as itself."""
    return '"' + _MUST_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"

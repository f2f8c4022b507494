"""RFC 8259 JSON text to Python values, refusing what docs/spec.md section 1.1 refuses.

Hand-written rather than the standard :mod:`json` module, which cannot report the faults of the
spec in document order: it accepts lone surrogate escapes and ``NaN``/``Infinity``, and has no
hook at the opening bracket of a too-deep container or at the close of an object with a repeated
name. The methods follow the grammar of RFC 8259 sections 2 to 7, one production each.

Objects become ``dict`` (members in document order), arrays ``list``, numbers ``float`` (the
nearest double: ``float()`` of the exact token is correctly rounded), and the literals ``True``,
``False`` and ``None``. The first fault met reading left to right is raised as
:class:`CommitError`, with the ``field`` of docs/spec.md 1.2.
"""

from __future__ import annotations

import math
import re
from typing import NoReturn, TypeAlias

from ..errors import CommitError
from .paths import Step, committed_path

#: A parsed JSON value.
JsonValue: TypeAlias = "bool | float | str | list[JsonValue] | dict[str, JsonValue] | None"

#: Deepest nesting accepted; the outermost container is level 1.
MAX_DEPTH = 125

# Section 2: only these four characters are insignificant whitespace.
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Section 6, the whole "number" production (no leading zeros, digits on both sides of ".").
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Section 7: the "unescaped" characters, taken as one run up to a quote, backslash or control.
_UNESCAPED = re.compile(r'[^"\\\x00-\x1f]*')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LOW_SURROGATE_ESCAPE = re.compile(r"\\u([dD][c-fC-F][0-9a-fA-F]{2})")
_SHORT_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_LITERALS: tuple[tuple[str, bool | None], ...] = (("true", True), ("false", False), ("null", None))


def decode_utf8(data: bytes) -> str:
    """RFC 3629 UTF-8 to text; Python's strict decoder refuses overlong forms and surrogates."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(data).__name__}")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise CommitError("invalid_utf8", "the input is not valid UTF-8") from None


def parse(text: str) -> JsonValue:
    """``JSON-text = ws value ws`` (section 2)."""
    return _Parser(text).json_text()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        # Steps from the root to the value being read: the `field` of a fault, built on demand.
        self.steps: list[Step] = []

    def json_text(self) -> JsonValue:
        self.skip_whitespace()
        value = self.value(level=0)
        self.skip_whitespace()
        if self.pos != len(self.text):
            self.invalid("trailing data after the JSON value")
        return value

    def value(self, level: int) -> JsonValue:
        """``value = false / null / true / object / array / number / string`` (section 3)."""
        char = self.text[self.pos : self.pos + 1]
        if char == "{":
            return self.object(level + 1)
        if char == "[":
            return self.array(level + 1)
        if char == '"':
            return self.string()
        if char == "-" or "0" <= char <= "9":
            return self.number()
        for literal, value in _LITERALS:
            if self.text.startswith(literal, self.pos):
                self.pos += len(literal)
                return value
        self.invalid("a value was expected")

    def object(self, level: int) -> dict[str, JsonValue]:
        """``object = begin-object [ member *( value-separator member ) ] end-object``."""
        self.enter(level)
        members: dict[str, JsonValue] = {}
        repeated: str | None = None
        if not self.consume("}"):
            while True:
                if self.text[self.pos : self.pos + 1] != '"':
                    self.invalid("a member name was expected")
                name = self.string()
                if name in members and repeated is None:
                    repeated = name
                self.skip_whitespace()
                self.expect(":")
                self.steps.append(name)
                members[name] = self.value(level)
                self.steps.pop()
                if not self.separator("}"):
                    break
        if repeated is not None:
            # Reported at the close, so after every fault inside the object.
            field = committed_path([*self.steps, repeated])
            message = "an object has two members of this name"
            raise CommitError("duplicate_member", message, field)
        return members

    def array(self, level: int) -> list[JsonValue]:
        """``array = begin-array [ value *( value-separator value ) ] end-array``."""
        self.enter(level)
        elements: list[JsonValue] = []
        if not self.consume("]"):
            while True:
                self.steps.append(len(elements))
                elements.append(self.value(level))
                self.steps.pop()
                if not self.separator("]"):
                    break
        return elements

    def enter(self, level: int) -> None:
        """Step over an opening bracket, unless it opens a level deeper than the limit."""
        if level > MAX_DEPTH:
            field = committed_path(self.steps)
            message = f"arrays and objects nest deeper than {MAX_DEPTH} levels"
            raise CommitError("depth_exceeded", message, field)
        self.pos += 1
        self.skip_whitespace()

    def separator(self, end: str) -> bool:
        """After a member or element: True on ``,`` (another follows), False on ``end``."""
        self.skip_whitespace()
        if self.consume(","):
            return True
        self.expect(end)
        return False

    def number(self) -> float:
        """``number = [ minus ] int [ frac ] [ exp ]`` (section 6), as the nearest double."""
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            self.invalid("malformed number")
        value = float(match.group())
        if math.isinf(value):
            field = committed_path(self.steps) if self.steps else None
            message = "a number is too large for an IEEE-754 double"
            raise CommitError("number_out_of_range", message, field)
        self.pos = match.end()
        return value

    def string(self) -> str:
        """``string = quotation-mark *char quotation-mark`` (section 7)."""
        text = self.text
        self.pos += 1
        chunks: list[str] = []
        while True:
            run = _UNESCAPED.match(text, self.pos)
            assert run is not None  # the pattern matches the empty string
            chunks.append(run.group())
            self.pos = run.end()
            char = text[self.pos : self.pos + 1]
            if char == '"':
                self.pos += 1
                return "".join(chunks)
            if char == "\\":
                chunks.append(self.escape())
            elif char == "":
                self.invalid("unterminated string")
            else:
                self.invalid("control character in a string must be escaped")

    def escape(self) -> str:
        """One ``escape`` sequence; a ``\\uXXXX`` surrogate must be half of a pair."""
        letter = self.text[self.pos + 1 : self.pos + 2]
        if letter in _SHORT_ESCAPES:
            self.pos += 2
            return _SHORT_ESCAPES[letter]
        if letter != "u":
            self.invalid("invalid escape sequence")
        unit = self.hex4(self.pos + 2)
        self.pos += 6
        if 0xD800 <= unit <= 0xDBFF:
            low = _LOW_SURROGATE_ESCAPE.match(self.text, self.pos)
            if low is not None:
                self.pos = low.end()
                return chr(0x10000 + ((unit - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00))
        if 0xD800 <= unit <= 0xDFFF:
            # Known as soon as the escape is read, so before any later fault in the string.
            message = "a string holds a \\u surrogate escape that is not part of a pair"
            raise CommitError("lone_surrogate", message)
        return chr(unit)

    def hex4(self, pos: int) -> int:
        digits = _HEX4.match(self.text, pos)
        if digits is None:
            self.pos = pos
            self.invalid("\\u must be followed by four hexadecimal digits")
        return int(digits.group(), 16)

    def skip_whitespace(self) -> None:
        match = _WHITESPACE.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def consume(self, char: str) -> bool:
        if self.text.startswith(char, self.pos):
            self.pos += 1
            self.skip_whitespace()
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.consume(char):
            self.invalid(f"{char!r} was expected")

    def invalid(self, rule: str) -> NoReturn:
        """Refuse the text; ``rule`` says what the grammar wanted, for readers of this code
        (the message is the native core's, which does not say where)."""
        raise CommitError("invalid_json", "the input is not RFC 8259 JSON")

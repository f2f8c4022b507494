"""Committing a record: declarations, salts, commitments and leaves (docs/spec.md 2, 4 and 6)."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import final

from ..errors import CommitError
from .kinds import KINDS, encode
from .paths import Path
from .rfc6962 import merkle_root
from .rfc8259 import JsonValue, decode_utf8, parse
from .rfc8785 import serialize, sorted_members

#: Spec section 8.
MAX_PAYLOAD_BYTES = 262_144
MAX_FIELDS = 4096
MAX_PATH_BYTES = 512
SALT_KEY_SIZE = 32

_SALT_TAG = b"recordseal/salt/v1"
_FIELD_TAG = b"recordseal/field/v1"

# Unicode category Cc is exactly these two ranges, and stays so (Unicode stability policy).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# A pointer token of a member name: every "~" starts "~0" or "~1", no control characters.
_MEMBER_TOKEN = re.compile("(?:[^~\x00-\x1f\x7f-\x9f\ud800-\udfff]|~[01])*")
_SURROGATE = re.compile("[\ud800-\udfff]")


@final
@dataclass(frozen=True, slots=True)
class Leaf:
    """One committed field: its path, kind, ``enc(value)``, salt and commitment."""

    path: str
    kind: str
    encoded: bytes
    salt: bytes
    commitment: bytes


@final
@dataclass(frozen=True, slots=True)
class CommittedRecord:
    """The result of :func:`commit_record`."""

    #: RFC 8785 bytes of the payload.
    canonical: bytes
    #: Leaves in the UTF-8 order of their committed paths.
    leaves: list[Leaf]
    #: RFC 6962 root over the commitments, in leaf order.
    root: bytes
    field_count: int


def validate_declarations(declarations: Mapping[str, str]) -> None:
    """Check path patterns and kinds of a stream's declarations (docs/spec.md 6.1).

    Patterns are checked in the UTF-8 order of their text; for each, the pattern first, then
    its kind.
    """
    for pattern in sorted(declarations, key=_utf8_order):
        if not _is_pattern(pattern):
            message = (
                "a pattern is a committed path whose array steps are all *, at most 512 bytes,"
                " with escaped member names free of control characters"
            )
            raise CommitError("declaration_invalid", message, pattern)
        if declarations[pattern] not in KINDS:
            raise CommitError("unknown_kind", "unknown field kind", pattern)


def _utf8_order(text: str) -> bytes:
    # "surrogatepass" only so that sorting never fails: such a pattern is then refused.
    return text.encode("utf-8", "surrogatepass")


def _is_pattern(pattern: str) -> bool:
    vector, colon, pointer = pattern.partition(":")
    steps = pointer.split("/")[1:]
    return (
        colon == ":"
        and pointer.startswith("/")
        and len(vector) == len(steps)
        and all(
            (direction == "a" and step == "*")
            or (direction == "o" and _MEMBER_TOKEN.fullmatch(step) is not None)
            for direction, step in zip(vector, steps, strict=True)
        )
        and len(_utf8_order(pattern)) <= MAX_PATH_BYTES
    )


def derive_salt(salt_key: bytes, record_id: str, path: str) -> bytes:
    """HMAC-SHA-256 salt of one field (spec section 4)."""
    _check_salt_inputs(salt_key, record_id)
    return _salt(salt_key, record_id, path)


def _salt(salt_key: bytes, record_id: str, path: str) -> bytes:
    message = _SALT_TAG + b"\x00" + record_id.encode("utf-8") + b"\x00" + path.encode("utf-8")
    return hmac.digest(salt_key, message, "sha256")


def _check_salt_inputs(salt_key: bytes, record_id: str) -> None:
    if len(salt_key) != SALT_KEY_SIZE:
        raise CommitError("salt_key_invalid", "the salt key must be exactly 32 bytes")
    # A lone surrogate has no UTF-8 form, so it cannot be part of the HMAC message.
    if _SURROGATE.search(record_id):
        raise CommitError("record_id_invalid", "the record id has no UTF-8 form")
    if not record_id or "\x00" in record_id:
        message = "the record id must be a non-empty string without U+0000"
        raise CommitError("record_id_invalid", message)


def commit_field(path: str, salt: bytes, encoded: bytes) -> bytes:
    """SHA-256 commitment of one field (spec section 4)."""
    message = _FIELD_TAG + path.encode("utf-8") + b"\x00" + salt + b"\x00" + encoded
    return hashlib.sha256(message).digest()


def commit_record(
    payload: bytes,
    declarations: Mapping[str, str] | None,
    strict: bool,
    salt_key: bytes,
    record_id: str,
) -> CommittedRecord:
    """Parse, check and commit one payload, in the order of checks of docs/spec.md 6.2."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise CommitError("payload_too_large", f"the payload exceeds {MAX_PAYLOAD_BYTES} bytes")
    declared = dict(declarations or {})
    validate_declarations(declared)
    _check_salt_inputs(salt_key, record_id)
    document = parse(decode_utf8(payload))
    if not isinstance(document, dict):
        raise CommitError("payload_not_object", "the payload must be a JSON object")
    if not document:
        raise CommitError("payload_empty", "the payload object has no member")
    fields = _Walk(declared, strict).record(document)
    leaves = []
    for path, kind, encoded in sorted(fields, key=lambda field: field[0].encode("utf-8")):
        salt = _salt(salt_key, record_id, path)
        leaves.append(Leaf(path, kind, encoded, salt, commit_field(path, salt, encoded)))
    root = merkle_root([leaf.commitment for leaf in leaves])
    return CommittedRecord(serialize(document), leaves, root, len(leaves))


class _Walk:
    """Spec 6.2 step 5: every value in canonical order, each before its children."""

    def __init__(self, declared: dict[str, str], strict: bool) -> None:
        self.declared = declared
        self.strict = strict
        #: (committed path, kind, enc(value)) of every leaf met so far.
        self.fields: list[tuple[str, str, bytes]] = []

    def record(self, document: dict[str, JsonValue]) -> list[tuple[str, str, bytes]]:
        self.children(document, Path(), free_above=False)
        return self.fields

    def children(self, container: JsonValue, path: Path, free_above: bool) -> None:
        if isinstance(container, dict):
            for name, member in sorted_members(container):
                self.value(member, path.member(name), name, free_above)
        elif isinstance(container, list):
            for index, element in enumerate(container):
                self.value(element, path.element(index), None, free_above)

    def value(self, value: JsonValue, path: Path, name: str | None, free_above: bool) -> None:
        """The checks of 6.2.5 at one value; ``name`` is the member name that reached it."""
        field = path.text
        if name is not None and _CONTROL.search(name):
            message = "a member name holds a control character (Unicode category Cc)"
            raise CommitError("control_character", message, field)
        if len(field.encode("utf-8")) > MAX_PATH_BYTES:
            message = f"the committed path exceeds {MAX_PATH_BYTES} bytes"
            raise CommitError("path_too_long", message, field)
        kind = self.declared.get(path.pattern)
        if isinstance(value, dict | list) and value:
            if kind not in (None, "free"):
                message = (
                    "a path declared with a kind other than free holds a non-empty object or array"
                )
                raise CommitError("value_type", message, field)
            self.children(value, path, free_above or kind == "free")
            return
        if len(self.fields) == MAX_FIELDS:
            message = f"the payload has more than {MAX_FIELDS} fields"
            raise CommitError("too_many_fields", message)
        if self.strict and kind is None and not free_above:
            message = "the stream is strict and no declaration covers this field"
            raise CommitError("undeclared_field", message, field)
        self.fields.append((field, kind or "free", encode(kind or "free", value, field)))

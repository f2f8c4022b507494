"""Daily transparency log files of a (tenant, fleet) log, and their offline replay.

This module is the whole format (docs/fleets.md), read: its lines as structs, and
:func:`replay_log_file`, with which anyone replays a file — no server, no storage, no web
layer; only the core's RFC 6962 verifier, the C2SP note formats and the genesis derivation.
The service writes files from the same structs (``fleet/transparency.py``).

A file is UTF-8 JSON Lines (one JSON object per line, each ending in ``\\n``):

1. the header: ``format`` (``recordseal-transparency-log/v1``), ``date`` (``YYYY-MM-DD``,
   UTC), ``origin``, ``tenant`` (null for a fleet with no tenant), ``fleet``, ``genesis``
   (base64 of the genesis root, leaf 0 of the log) and ``previous``: null, or the last anchor
   before this day as ``{size, root, created_at, proof}`` where ``proof`` is the RFC 6962
   consistency proof from size 1 (the tree of the genesis leaf alone) to it;
2. one line per anchor sealed that day, by size: ``size``, ``root`` (base64), ``created_at``
   (RFC 3339 UTC), ``proof`` (consistency proof from the anchor before it: the previous line,
   else the header's ``previous``, else size 1) and ``checkpoint``: the signed checkpoint note
   with its witness cosignature lines appended (a valid C2SP note).

Replay starts from the genesis root it recomputes from (tenant, fleet), checks that the
header names it, and follows the chain of consistency proofs through ``previous`` and every
line: each anchor is proven to extend the one before, hence the genesis. Each checkpoint must
state the header's origin, the line's size and root; signatures are verified when the
caller supplies the log's (and the witnesses') keys. A file proves itself only: a server
could hand out another fleet's (or another day's) valid file under a name, so a caller who
fetched ``<date>/<tenant>/<fleet>.log`` passes that name as ``expected``
(:meth:`LogFileName.parse`), and a file of another (tenant, fleet) or day is refused. Any
failure raises :class:`TransparencyLogError` with a stable ``code`` and the line number.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date as Date
from functools import partial
from pathlib import PurePath
from typing import TypeVar

import msgspec

from recordseal.core import leaf_hash, verify_consistency
from recordseal.identifiers import IDENTIFIER
from recordseal.merkle.genesis import successor_genesis, tenant_genesis
from recordseal.tlog import (
    Checkpoint,
    Cosignature,
    CosignerKey,
    NoteVerifier,
    parse_note,
    verify_cosignatures,
    verify_note,
)

from .errors import Refused, VerificationError, attempt

T = TypeVar("T")

FORMAT = "recordseal-transparency-log/v1"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INSTANT = re.compile(
    r"(([0-9]{4}-[0-9]{2}-[0-9]{2})T[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?Z"
)


class TransparencyLogError(VerificationError):
    """A file that does not replay: ``code`` names the rule, ``line`` is 1-based (0: the
    whole file); when a hash disagrees, ``expected`` and ``computed`` hold both."""

    def __init__(
        self,
        code: str,
        message: str,
        line: int = 0,
        *,
        expected: bytes | None = None,
        computed: bytes | None = None,
    ) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.code = code
        self.line = line
        self.expected = expected
        self.computed = computed


class PreviousAnchor(msgspec.Struct, forbid_unknown_fields=True):
    size: int
    root: str
    created_at: str
    proof: list[str]


class Predecessor(msgspec.Struct, forbid_unknown_fields=True):
    """The log a successor log succeeds, at the last checkpoint signed for it (docs/tlog.md,
    "Successor logs")."""

    origin: str
    size: int
    root: str


class Header(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    format: str
    date: str
    origin: str
    tenant: str | None
    fleet: str
    genesis: str
    previous: PreviousAnchor | None
    #: only in the files of a successor log: its leaf 0 commits to this checkpoint
    predecessor: Predecessor | None = None


class AnchorLine(msgspec.Struct, forbid_unknown_fields=True):
    size: int
    root: str
    created_at: str
    proof: list[str]
    checkpoint: str


@dataclass(frozen=True, slots=True)
class ReplayedAnchor:
    size: int
    root: bytes
    created_at: str
    cosigned_by: tuple[str, ...]  # witnesses whose cosignature verified (when keys were given)


@dataclass(frozen=True, slots=True)
class ReplayedLog:
    """What a replay proved: these anchors extend ``genesis`` (and ``previous``, if any)."""

    origin: str
    tenant: str | None
    fleet: str
    date: str
    genesis: bytes
    previous: tuple[int, bytes] | None
    anchors: tuple[ReplayedAnchor, ...]
    #: a successor log's predecessor checkpoint (origin, size, root), which its leaf 0 commits to
    predecessor: tuple[str, int, bytes] | None = None

    @property
    def latest(self) -> tuple[int, bytes] | None:
        if self.anchors:
            return self.anchors[-1].size, self.anchors[-1].root
        return self.previous


@dataclass(frozen=True, slots=True)
class LogFileName:
    """Where a day's file of a (tenant, fleet) log is published: ``<date>/<fleet>.log`` for a
    fleet with no tenant, ``<date>/<tenant>/<fleet>.log`` for a tenant's fleet."""

    date: str
    tenant: str | None
    fleet: str

    @property
    def path(self) -> str:
        folder = self.date if self.tenant is None else f"{self.date}/{self.tenant}"
        return f"{folder}/{self.fleet}.log"

    @classmethod
    def parse(cls, path: str | PurePath) -> LogFileName | None:
        """The name at the end of ``path`` (a file path or a URL path), or None when it does
        not end in either layout."""
        parts = PurePath(path).parts
        if not parts or not parts[-1].endswith(".log"):
            return None
        fleet = parts[-1].removesuffix(".log")
        if not IDENTIFIER.fullmatch(fleet):
            return None
        if len(parts) >= 2 and _is_date(parts[-2]):
            return cls(parts[-2], None, fleet)
        if len(parts) >= 3 and _is_date(parts[-3]) and IDENTIFIER.fullmatch(parts[-2]):
            return cls(parts[-3], parts[-2], fleet)
        return None


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def replay_log_file(
    data: bytes,
    *,
    log_verifiers: Iterable[NoteVerifier] = (),
    witness_verifiers: Iterable[CosignerKey] = (),
    expected: LogFileName | None = None,
) -> ReplayedLog:
    """Replay a day's file back to its genesis root; raise TransparencyLogError if it does not.

    With ``log_verifiers`` every checkpoint's log signature must verify under them; with
    ``witness_verifiers`` cosignatures by those witnesses must verify and are reported. With
    ``expected``, the file must be the log of that (tenant, fleet) on that day
    (``scope_mismatch`` otherwise).
    """
    log_keys, witness_keys = list(log_verifiers), list(witness_verifiers)
    lines = _split(data)
    header = _decode(lines[0], Header, 1)
    _check_header(header)
    found = LogFileName(header.date, header.tenant, header.fleet)
    if expected is not None and found != expected:
        raise TransparencyLogError(
            "scope_mismatch",
            f"the file is {found.path} (tenant {found.tenant!r}, fleet {found.fleet!r}), not"
            f" {expected.path}",
            1,
        )
    genesis, what = _genesis_of(header)
    stated = _bytes(header.genesis, "genesis", 1)
    if stated != genesis:
        raise TransparencyLogError(
            "genesis_mismatch",
            f"the genesis is not {what} (expected {b64(genesis)})",
            1,
            expected=genesis,
            computed=stated,
        )
    size, root = 1, leaf_hash(genesis)
    previous = None
    if header.previous is not None:
        prior = header.previous
        if _day_of(prior.created_at, 1) >= header.date:
            raise TransparencyLogError(
                "date_mismatch", "the previous anchor is not from an earlier day", 1
            )
        prior_root = _bytes(prior.root, "previous root", 1)
        _consistent(size, root, prior.size, prior_root, prior.proof, 1, "the previous anchor")
        size, root = prior.size, prior_root
        previous = (size, root)
    anchors: list[ReplayedAnchor] = []
    last_time = ""
    for number, raw in enumerate(lines[1:], start=2):
        line = _decode(raw, AnchorLine, number)
        if (anchors or previous is not None) and line.size <= size:
            raise TransparencyLogError(
                "size_not_increasing", f"size {line.size} does not grow from {size}", number
            )
        order = _order_of(line.created_at, number)
        if _day_of(line.created_at, number) != header.date or order < last_time:
            raise TransparencyLogError(
                "date_mismatch",
                f"created_at {line.created_at} is not in order within {header.date}",
                number,
            )
        line_root = _bytes(line.root, "root", number)
        _consistent(size, root, line.size, line_root, line.proof, number, f"anchor {line.size}")
        cosigned = _check_checkpoint(header, line, line_root, number, log_keys, witness_keys)
        anchors.append(ReplayedAnchor(line.size, line_root, line.created_at, cosigned))
        size, root, last_time = line.size, line_root, order
    succeeds = header.predecessor
    return ReplayedLog(
        header.origin,
        header.tenant,
        header.fleet,
        header.date,
        genesis,
        previous,
        tuple(anchors),
        None
        if succeeds is None
        else (succeeds.origin, succeeds.size, _bytes(succeeds.root, "root", 1)),
    )


def check_days_link(earlier: ReplayedLog, later: ReplayedLog) -> None:
    """Two replayed files of one log on consecutive days link: the later day's ``previous``
    is the earlier day's last anchor. This shows what one file cannot: lines dropped from the
    end of the earlier day's file."""
    if (earlier.tenant, earlier.fleet, earlier.origin) != (later.tenant, later.fleet, later.origin):
        raise TransparencyLogError("days_do_not_link", "the two files are of different logs")
    if (
        Date.fromisoformat(later.date).toordinal() - Date.fromisoformat(earlier.date).toordinal()
        != 1
    ):
        raise TransparencyLogError("days_do_not_link", "the two files are not of consecutive days")
    if later.previous != earlier.latest:
        raise TransparencyLogError(
            "days_do_not_link",
            f"{later.date} continues from {_anchor_text(later.previous)}, but {earlier.date}"
            f" ends at {_anchor_text(earlier.latest)}",
        )


def _anchor_text(anchor: tuple[int, bytes] | None) -> str:
    return "nothing" if anchor is None else f"size {anchor[0]} ({b64(anchor[1])})"


def _split(data: bytes) -> list[bytes]:
    if not data.endswith(b"\n"):
        raise TransparencyLogError("file_malformed", "the file is empty or lacks a final newline")
    return data[:-1].split(b"\n")


def _decode(raw: bytes, kind: type[T], number: int) -> T:
    try:
        return msgspec.json.decode(raw, type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise TransparencyLogError("line_malformed", str(error), number) from None


def _is_date(text: str) -> bool:
    try:
        return bool(_DATE.fullmatch(text)) and Date.fromisoformat(text).isoformat() == text
    except ValueError:
        return False


def _genesis_of(header: Header) -> tuple[bytes, str]:
    """Leaf 0 the header must state, and what it is in words."""
    prior = header.predecessor
    if prior is None:
        return (
            tenant_genesis(header.tenant, header.fleet),
            f"the genesis root of tenant {header.tenant!r}, fleet {header.fleet!r}",
        )
    if not prior.origin or prior.origin == header.origin or not 1 <= prior.size < 2**64:
        raise TransparencyLogError(
            "line_malformed", "predecessor is not another log's checkpoint of size 1 or more", 1
        )
    root = _bytes(prior.root, "predecessor root", 1)
    return (
        successor_genesis(prior.origin, prior.size, root),
        f"leaf 0 of the successor of {prior.origin} after its checkpoint of size {prior.size}",
    )


def _check_header(header: Header) -> None:
    if header.format != FORMAT:
        raise TransparencyLogError("format_unknown", f"format is not {FORMAT!r}", 1)
    if not _is_date(header.date):
        raise TransparencyLogError("line_malformed", f"date {header.date!r} is not a date", 1)
    for name, value in (("tenant", header.tenant), ("fleet", header.fleet)):
        if value is not None and not IDENTIFIER.fullmatch(value):
            raise TransparencyLogError("line_malformed", f"{name} is not an identifier", 1)
    if not header.origin:
        raise TransparencyLogError("line_malformed", "origin is empty", 1)


def _day_of(instant: str, number: int) -> str:
    return _parse_instant(instant, number).group(2)


def _order_of(instant: str, number: int) -> str:
    """A text that sorts like the instant, whatever the number of fraction digits."""
    found = _parse_instant(instant, number)
    return f"{found.group(1)}.{(found.group(3) or '').ljust(9, '0')}"


def _parse_instant(instant: str, number: int) -> re.Match[str]:
    found = _INSTANT.fullmatch(instant)
    if found is None:
        raise TransparencyLogError(
            "line_malformed", f"created_at {instant!r} is not RFC 3339 UTC", number
        )
    return found


def _bytes(text: str, what: str, number: int) -> bytes:
    try:
        value = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        value = b""
    if len(value) != 32 or b64(value) != text:
        raise TransparencyLogError(
            "line_malformed", f"{what} is not canonical base64 of 32 bytes", number
        )
    return value


def _consistent(
    old_size: int,
    old_root: bytes,
    new_size: int,
    new_root: bytes,
    proof: list[str],
    number: int,
    what: str,
) -> None:
    hashes = [_bytes(node, "proof hash", number) for node in proof]
    if new_size < old_size:
        raise TransparencyLogError(
            "size_not_increasing", f"{what} (size {new_size}) is below size {old_size}", number
        )
    consistent = attempt(
        partial(verify_consistency, old_size, new_size, old_root, new_root, hashes),
        "{what} is not proven consistent with size {old_size}: {error}",
        what=what,
        old_size=old_size,
    )
    if isinstance(consistent, Refused):
        raise TransparencyLogError("proof_invalid", str(consistent), number) from None


def _check_checkpoint(
    header: Header,
    line: AnchorLine,
    root: bytes,
    number: int,
    log_keys: list[NoteVerifier],
    witness_keys: list[CosignerKey],
) -> tuple[str, ...]:
    opened = attempt(
        partial(_open_checkpoint, line.checkpoint, log_keys, witness_keys),
        "checkpoint: {code}: {error}",
    )
    if isinstance(opened, Refused):
        raise TransparencyLogError("checkpoint_invalid", str(opened), number) from None
    checkpoint, cosignatures = opened
    if (checkpoint.origin, checkpoint.size, checkpoint.root_hash) != (
        header.origin,
        line.size,
        root,
    ):
        raise TransparencyLogError(
            "checkpoint_mismatch",
            "the checkpoint does not state the header's origin and this line's size and root",
            number,
        )
    return tuple(cosignature.name for cosignature in cosignatures)


def _open_checkpoint(
    signed: str, log_keys: list[NoteVerifier], witness_keys: list[CosignerKey]
) -> tuple[Checkpoint, list[Cosignature]]:
    """A line's checkpoint, its log signature verified (with ``log_keys``) and the valid
    cosignatures of ``witness_keys``; ``TlogError`` otherwise."""
    note = parse_note(signed)
    checkpoint = Checkpoint.parse(note.text)
    if log_keys:
        verify_note(note, log_keys)
    return checkpoint, verify_cosignatures(note.text, note.signatures, witness_keys)

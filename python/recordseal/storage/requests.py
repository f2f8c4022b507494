"""What the services hand the store: the appends and seals it carries out, each with the
callbacks it calls inside its transaction (the record builder, the signer of a checkpoint,
the checks of a store put back to an earlier state), and the values they carry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from recordseal.storage.errors import StorageError


class IdempotencyClaim(NamedTuple):
    """An ``Idempotency-Key`` (a batch's item ``i``: ``<key>#<i>``) and the SHA-256 of the
    request it came with (of the item's text as sent): what a record's read gives
    (``services/reading.py``), what the store keeps. A tuple, cheap to make per record."""

    key: str
    request_hash: bytes


@dataclass(frozen=True, slots=True)
class SubjectClaim:
    """The subject a record belongs to; ``new_wrapped_key`` is set when it is created now."""

    index: bytes
    subject_ref: str
    new_wrapped_key: bytes | None


class NewRecord(NamedTuple):
    """What the service builds once the store has given it a sequence number and link (a
    tuple: one is made per record, under the stream locks)."""

    record_id: str
    seq: int
    header: bytes  # RFC 8785 bytes of the signed header
    signature: bytes
    chain_leaf: bytes
    sealed_payload: bytes


#: Chain leaves per seal transaction: bounds how long a seal holds the write lock (ingest
#: waits meanwhile); a larger backlog is sealed in several transactions, one checkpoint each.
SEAL_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class SealRequest:
    """Seal the pending chain leaves of (tenant, fleet) into the log ``origin``.

    ``sign(size, root)`` returns the signed checkpoint note; it runs inside the transaction.
    """

    tenant: str | None  # None: a fleet with no tenant (legacy); it collects no API records
    fleet: str
    origin: str
    genesis: bytes  # the tenant genesis root: leaf 0 of a new log
    sign: Callable[[int, bytes], str]
    now: str
    limit: int = SEAL_LIMIT  # pending leaves sealed at most by this transaction
    #: Asked with the log's stored size before anything is signed: True when the store is
    #: behind what the service signed for this log (docs/continuity.md).
    behind: Callable[[int], bool] | None = None

    def admit(self, stored: str | None, size: int) -> None:
        """Raise :class:`LogBehind` when the store's log of this scope is named ``stored``,
        another origin than this seal's (a store put back to before a ``recordseal recover``),
        or when its stored ``size`` is behind what was signed."""
        if stored is not None and stored != self.origin:
            raise LogBehind(
                self.origin, size, f"the store's log of its scope is {stored}, not {self.origin}"
            )
        if self.behind is not None and self.behind(size):
            raise LogBehind(self.origin, size)


class LogBehind(StorageError):
    """A seal found the log's stored size behind the last checkpoint the service signed for
    it, or the store's log of the scope has another origin: the database was restored or
    failed over. Nothing was signed. ``reason`` is set when nothing fenced the log yet."""

    def __init__(self, origin: str, size: int, reason: str | None = None) -> None:
        super().__init__(reason or f"log {origin} is at size {size}, behind what was signed")
        self.origin = origin
        self.size = size
        self.reason = reason


class Append(NamedTuple):
    """One record to append: its stream, subject, id, the builder's input for it (the
    service's prepared record, opaque to the store) and its idempotency key, if any (a
    tuple: one is made per record)."""

    stream_id: int
    subject: SubjectClaim
    record_id: str
    prepared: object
    idempotency: IdempotencyClaim | None = None
    #: Asked with the stream's head (next sequence number, last chain leaf) under the stream
    #: lock before the append is placed: True when the store is behind what the service
    #: signed for the stream (the append is then refused ``Fenced``).
    behind: HeadCheck | None = None


#: ``behind(next_seq, prev)`` of an :class:`Append`.
HeadCheck = Callable[[int, bytes], bool]


class Call(NamedTuple):
    """The appends of one ``append_records`` call, in order, and their tenant: a
    transaction takes whole calls, and a call's records keep their order."""

    tenant: str
    appends: Sequence[Append]


#: Called once per transaction (or per call within it) under the stream locks, with the
#: appends placed, in order: append ``i`` extends the stream head ``heads[slots[i]]`` (its
#: next sequence number and the previous chain leaf), and ``heads`` is left at the streams'
#: new heads. Returns the records built, in order.
BatchBuilder = Callable[[Sequence[Append], Sequence[int], list[tuple[int, bytes]]], list[NewRecord]]

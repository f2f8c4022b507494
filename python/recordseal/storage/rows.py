"""The rows the store reads back and answers with (plain values); what the services hand it
is in ``storage.requests``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from recordseal.identifiers import DEFAULT_FLEET
from recordseal.merkle.genesis import successor_genesis, tenant_genesis


@dataclass(frozen=True, slots=True)
class TokenRow:
    """An API token as listed: never the token, only an id (hex of its hash's first 8 bytes)."""

    token_id: str
    tenant: str
    label: str
    created_at: str
    revoked_at: str | None
    #: When a service process last let a request through with it (to within a minute), or
    #: None if never.
    last_used_at: str | None = None


@dataclass(frozen=True, slots=True)
class StreamRow:
    id: int
    tenant: str
    name: str
    declarations: dict[str, str]
    strict: bool
    next_seq: int
    created_at: str
    fleet: str = DEFAULT_FLEET  # the (tenant, fleet) log its records are sealed into
    #: that log's row: a record takes its next position in the transaction that inserts it
    log_id: int = 0
    #: sequence numbers a gap header declared lost (docs/continuity.md, "Recover")
    lost_seqs: int = 0

    @property
    def record_count(self) -> int:
        """The records the stream holds (gap headers included): every sequence number below
        ``next_seq`` is a stored record or declared lost, so no record is counted."""
        return self.next_seq - 1 - self.lost_seqs


#: The ``streams`` columns a :class:`StreamRow` is read from (:func:`stream_row`), on both
#: backends.
STREAM_COLUMNS = (
    "id, tenant, name, declarations, strict, next_seq, created_at, fleet, log_id, lost_seqs"
)


def stream_row(values: Any) -> StreamRow:
    """The stream of a row (a tuple, or an asyncpg record) of :data:`STREAM_COLUMNS`
    (declarations are stored as JSON text)."""
    id_, tenant, name, declarations, strict, next_seq, created_at, fleet, log_id, lost = values
    return StreamRow(
        id_,
        tenant,
        name,
        json.loads(declarations),
        bool(strict),
        next_seq,
        created_at,
        fleet,
        log_id,
        lost,
    )


@dataclass(frozen=True, slots=True)
class SubjectRow:
    tenant: str
    subject_ref: str
    wrapped_key: bytes | None  # None once erased
    erased_at: str | None


@dataclass(frozen=True, slots=True)
class RecordRow:
    record_id: str
    tenant: str
    stream: str
    seq: int
    subject_ref: str
    header: bytes
    signature: bytes
    chain_leaf: bytes


@dataclass(frozen=True, slots=True)
class ListedRecord:
    """A record of a stream's listing (gap headers included): the record, and the log origin
    and index its chain leaf is sealed at, or None while it is pending."""

    record: RecordRow
    seal: tuple[str, int] | None


#: The columns a :class:`ListedRecord` is read from (:func:`listed_record`): the record's
#: (``r``), then its log's (``l``) origin, whether the record's position is below the log's
#: size, and its position. The same on both backends.
LISTED_COLUMNS = (
    "r.record_id, r.tenant, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf,"
    " l.origin, r.log_index < l.size, r.log_index"
)


def listed_record(stream: str, values: Any) -> ListedRecord:
    """A row of :data:`LISTED_COLUMNS` of the stream named ``stream``."""
    record_id, tenant, seq, subject_ref, header, signature, chain_leaf = values[:7]
    record = RecordRow(
        record_id, tenant, stream, seq, subject_ref, bytes(header), bytes(signature),
        bytes(chain_leaf),
    )  # fmt: skip
    origin, sealed, index = values[7:]
    return ListedRecord(record, (origin, index) if sealed else None)


@dataclass(frozen=True, slots=True)
class SigningKeyRow:
    """A header-signing key (docs/operations.md, "Keys"): the active one is the newest
    ``not_before`` with neither ``not_after`` nor ``revoked_at`` set."""

    key_id: str
    algorithm: str
    public_key: bytes
    not_before: str
    not_after: str | None
    revoked_at: str | None
    #: from when the key is known compromised (``recordseal keys revoke``)
    compromised_at: str | None = None
    #: where the private half lives: a file name in the keys directory; None for the first
    #: key, ``header-signing.ed25519``
    location: str | None = None

    def columns(self) -> tuple[object, ...]:
        """The ``signing_keys`` columns, in the order both backends' INSERTs name them."""
        return (
            self.key_id,
            self.algorithm,
            self.public_key,
            self.not_before,
            self.not_after,
            self.revoked_at,
            self.compromised_at,
            self.location,
        )


@dataclass(frozen=True, slots=True)
class Erasure:
    """The outcome of an erase: ``erased_now`` is False for a repeat (a no-op)."""

    erased_now: bool
    erased_at: str
    payloads_deleted: int


@dataclass(frozen=True, slots=True)
class SealedBatch:
    origin: str
    first_index: int  # index of the first leaf sealed by this batch
    size: int
    root: bytes
    note: str  # the signed checkpoint


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    origin: str
    size: int
    root: bytes
    note: str
    created_at: str


@dataclass(frozen=True, slots=True)
class LatestCheckpoint:
    """A log's newest checkpoint and who vouched for it: the names of the witnesses with a
    stored cosignature and of the authorities with a stored time-stamp on it."""

    checkpoint: CheckpointRow
    vouched_by: frozenset[str]


#: Receipts read per query when looking for the newest witnessed checkpoint.
RECEIPT_PAGE = 512
#: Every log's newest checkpoint (the log's size is its newest checkpoint's), and the names
#: of the receipts on it: the same SQL for both backends.
LATEST_CHECKPOINTS = (
    "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
    " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id AND c.size = l.size"
    " WHERE l.retired_at IS NULL"
)
LATEST_RECEIPTS = (
    "SELECT l.origin, x.witness FROM cosignatures x"
    " JOIN logs l ON l.tenant = x.tenant AND l.id = x.log_id AND x.size = l.size"
    " WHERE l.retired_at IS NULL"
    " UNION ALL SELECT l.origin, t.authority FROM timestamps t"
    " JOIN logs l ON l.tenant = t.tenant AND l.id = t.log_id AND t.size = l.size"
    " WHERE l.retired_at IS NULL"
)


def latest_checkpoints(
    checkpoints: Iterable[Any], receipts: Iterable[Any]
) -> list[LatestCheckpoint]:
    """The rows of LATEST_CHECKPOINTS with the names of LATEST_RECEIPTS."""
    vouched: dict[str, set[str]] = {}
    for origin, name in receipts:
        vouched.setdefault(origin, set()).add(name)
    return [
        LatestCheckpoint(CheckpointRow(*row), frozenset(vouched.get(row[0], ())))
        for row in checkpoints
    ]


#: The fleet of the deployment's aggregate log's row, which has no tenant: no fleet id is
#: empty (docs/tlog.md, "The aggregate log").
AGGREGATE_FLEET = ""


@dataclass(frozen=True, slots=True)
class AnchorLog:
    """One (tenant, fleet) log; ``tenant`` is None for a legacy fleet (docs/fleets.md,
    "Genesis roots and legacy fleets")."""

    tenant: str | None
    fleet: str
    origin: str
    #: a successor log's predecessor at its last signed checkpoint: (origin, size, root)
    predecessor: tuple[str, int, bytes] | None = None

    @classmethod
    def of_row(
        cls,
        tenant: str | None,
        fleet: str,
        origin: str,
        predecessor: str | None,
        size: int | None,
        root: bytes | None,
    ) -> AnchorLog:
        if predecessor is None or size is None or root is None:
            return cls(tenant, fleet, origin)
        return cls(tenant, fleet, origin, (predecessor, size, bytes(root)))

    @property
    def is_aggregate(self) -> bool:
        return self.tenant is None and self.fleet == AGGREGATE_FLEET

    def leaf_0(self) -> bytes:
        """The log's entry 0: the (tenant, fleet)'s genesis root, or for a successor log the
        commitment to its predecessor's last signed checkpoint (docs/tlog.md)."""
        if self.predecessor is None:
            return tenant_genesis(self.tenant, self.fleet)
        return successor_genesis(*self.predecessor)


@dataclass(frozen=True, slots=True)
class LogRow:
    """A log as its tiles serve it (docs/tlog.md, "Tiles"): its scope, retired logs too,
    and its sealed size (the size of its newest checkpoint)."""

    log: AnchorLog
    size: int


@dataclass(frozen=True, slots=True)
class Anchor:
    """A tier-4 batch anchor: one checkpoint of a (tenant, fleet) log (its root hash)."""

    tenant: str | None
    fleet: str
    origin: str
    size: int
    root: bytes
    note: str  # the signed checkpoint
    created_at: str  # RFC 3339 UTC, as ``utc_now`` writes it

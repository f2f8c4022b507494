"""The store interface the services use, and the rows it returns.

Every method is one transaction. Backends: SQLite (``sqlite.py``, the embedded default) and
PostgreSQL (``postgres.py``, for production and several service processes on one database).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class StoreError(Exception):
    """Base of the store's domain errors."""


class Conflict(StoreError):
    """The row exists already (for example a stream name within a tenant)."""


class SubjectErased(StoreError):
    """The subject's key was destroyed: nothing may be written for it any more."""


class SubjectRace(StoreError):
    """Another writer created the same new subject first, with another key: retry."""


class Deferred(StoreError):
    """Not placed: an earlier append of the same stream in the same call was refused with
    SubjectRace. Append it again after that one, so a call's records keep their order."""


class Replayed(StoreError):
    """The idempotency key was used before with the same request: its record is the answer."""

    def __init__(self, record_id: str) -> None:
        super().__init__(record_id)
        self.record_id = record_id


class KeyReused(StoreError):
    """The idempotency key was used before with another request."""


@dataclass(frozen=True, slots=True)
class IdempotencyClaim:
    """An ``Idempotency-Key`` and the SHA-256 of the request it came with."""

    key: str
    request_hash: bytes


@dataclass(frozen=True, slots=True)
class SubjectClaim:
    """The subject a record belongs to; ``new_wrapped_key`` is set when it is created now."""

    index: bytes
    subject_ref: str
    new_wrapped_key: bytes | None


@dataclass(frozen=True, slots=True)
class TokenRow:
    """An API token as listed: never the token, only an id (hex of its hash's first 8 bytes)."""

    token_id: str
    tenant: str
    label: str
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class StreamRow:
    id: int
    tenant: str
    name: str
    declarations: dict[str, str]
    strict: bool
    next_seq: int
    created_at: str
    fleet: str = "default"  # the (tenant, fleet) log its records are sealed into
    #: that log's row: a record takes its next position in the transaction that inserts it
    log_id: int = 0


@dataclass(frozen=True, slots=True)
class SubjectRow:
    tenant: str
    subject_ref: str
    wrapped_key: bytes | None  # None once erased
    erased_at: str | None


@dataclass(frozen=True, slots=True)
class NewRecord:
    """What the service builds once the store has given it a sequence number and link."""

    record_id: str
    seq: int
    header: bytes  # RFC 8785 bytes of the signed header
    signature: bytes
    chain_leaf: bytes
    sealed_payload: bytes


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
class SigningKeyRow:
    key_id: str
    algorithm: str
    public_key: bytes
    not_before: str
    not_after: str | None
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class Erasure:
    """The outcome of an erase: ``erased_now`` is False for a repeat (a no-op)."""

    erased_now: bool
    erased_at: str
    payloads_deleted: int


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
class AnchorLog:
    """One (tenant, fleet) log; ``tenant`` is None for a legacy fleet (spec panel 6.2, 9.4)."""

    tenant: str | None
    fleet: str
    origin: str


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


@dataclass(frozen=True, slots=True)
class Append:
    """One record to append: its stream, subject, id, the builder's input for it (the
    service's prepared record, opaque to the store) and its idempotency key, if any."""

    stream_id: int
    subject: SubjectClaim
    record_id: str
    prepared: object
    idempotency: IdempotencyClaim | None = None


#: Called once per transaction (or per call within it) under the stream locks, with the
#: appends placed, in order: append ``i`` extends the stream head ``heads[slots[i]]`` (its
#: next sequence number and the previous chain leaf), and ``heads`` is left at the streams'
#: new heads. Returns the records built, in order.
BatchBuilder = Callable[[Sequence[Append], Sequence[int], list[tuple[int, bytes]]], list[NewRecord]]


class Store(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None: ...
    async def tenant_for_token(self, token_hash: bytes) -> str | None: ...
    async def list_tokens(self, tenant: str) -> list[TokenRow]: ...
    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        """Revoke the tenant's token whose id is ``token_id``; False if there is none."""
        ...

    async def register_signing_key(self, key: SigningKeyRow) -> None: ...
    async def signing_keys(self) -> list[SigningKeyRow]: ...

    async def create_stream(
        self,
        tenant: str,
        name: str,
        declarations: dict[str, str],
        strict: bool,
        genesis: bytes,
        now: str,
        *,
        fleet: str = "default",
    ) -> StreamRow: ...
    async def get_stream(self, tenant: str, name: str) -> StreamRow | None: ...

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        """The tenant's stored subjects among ``subject_indexes`` (erased ones too, without
        a key), by index, in one query however many are asked for."""
        ...

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None: ...

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[NewRecord | StoreError]:
        """Append records, each accepted or refused on its own; the outcomes in order.

        For each: create the subject if new, assign the next sequence number and link, build
        (``build``, once for the appends placed), give it the next position of its log, and
        insert (with the idempotency key, if any), in one transaction with the others. The
        rules of placement are ``storage.placing``'s, for every backend.
        Refusals (nothing written for that record): SubjectErased when the subject was
        erased, even concurrently; SubjectRace when a new subject was created by another
        writer first, and Deferred for every later append of that stream in the call;
        Replayed when the idempotency key was stored with the same request
        hash, KeyReused when with another. Appends from several calls may share one
        transaction (group commit); none returns before that transaction has committed.
        """
        ...

    async def idempotent_records(
        self, tenant: str, keys: list[str]
    ) -> dict[str, tuple[bytes, str]]:
        """The request hash and record id stored under each of ``keys`` that is known."""
        ...

    async def purge_idempotency_keys(self, older_than: str) -> int:
        """Forget idempotency keys created before ``older_than``; returns how many."""
        ...

    async def claim_sealing(self) -> bool:
        """True while this process is the one sealer of the database (taken over when its
        holder dies: the claim is a lock the operating system or the server releases)."""
        ...

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None: ...
    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None: ...
    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]: ...

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure: ...

    # sealed batches
    async def unsealed_logs(self) -> list[tuple[str, str]]: ...
    async def seal(self, request: SealRequest) -> SealedBatch | None: ...
    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]: ...
    async def checkpoints_around(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow | None, CheckpointRow | None]: ...
    async def log_origins(self) -> list[str]: ...

    # tier-4 anchors by scope. ``tenant`` is compared null-safely (SQL ``IS`` /
    # ``IS NOT DISTINCT FROM``): None matches only legacy logs (no tenant), a tenant id only
    # that tenant's logs, never the legacy ones.
    async def anchor_logs(self) -> list[AnchorLog]:
        """Every log, legacy ones included, in creation order."""
        ...

    async def anchors(
        self,
        tenant: str | None,
        fleet: str,
        *,
        created_from: str | None = None,
        created_before: str | None = None,
    ) -> list[Anchor]:
        """The anchors of the (tenant, fleet) log by size, optionally those with
        ``created_from <= created_at < created_before`` (RFC 3339 UTC text, or a date
        ``YYYY-MM-DD`` for a day's start)."""
        ...

    async def latest_anchor(
        self, tenant: str | None, fleet: str, *, created_before: str | None = None
    ) -> Anchor | None:
        """The largest anchor of the (tenant, fleet) log (created before ``created_before``
        when given), or None."""
        ...

    async def log_nodes(
        self, origin: str, ids: set[tuple[int, int]]
    ) -> dict[tuple[int, int], bytes]: ...
    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None: ...
    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None: ...
    async def cosignatures(self, origin: str, size: int) -> list[str]: ...
    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None: ...
    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]: ...

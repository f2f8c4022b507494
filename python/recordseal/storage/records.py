"""The records part of the store: signing keys, streams, subjects, appends and their
idempotency keys, records, payloads and erasure.

An append's outcome is a plain value: the record placed (:class:`NewRecord`), or why it was
not (:data:`Refusal`); nothing is raised for a refusal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from recordseal.identifiers import DEFAULT_FLEET
from recordseal.storage.requests import Append, BatchBuilder, NewRecord
from recordseal.storage.rows import (
    Erasure,
    ListedRecord,
    RecordRow,
    SigningKeyRow,
    StreamRow,
    SubjectRow,
)


@dataclass(frozen=True, slots=True)
class Replayed:
    """The idempotency key was used before with the same request: its record is the answer."""

    record_id: str


@dataclass(frozen=True, slots=True)
class KeyReused:
    """The idempotency key was used before with another request."""

    key: str


@dataclass(frozen=True, slots=True)
class SubjectErased:
    """The subject's key was destroyed: nothing may be written for it any more."""

    subject_ref: str


@dataclass(frozen=True, slots=True)
class SubjectRace:
    """Another writer created the same new subject first, with another key: prepare the
    record again under the stored subject."""

    subject_ref: str


@dataclass(frozen=True, slots=True)
class Deferred:
    """Not placed: an earlier append of the same stream in the same call met a
    :class:`SubjectRace`. Append it again after that one, so a call's records keep their
    order."""


@dataclass(frozen=True, slots=True)
class Fenced:
    """The store's head of the stream is behind what the service has signed for it (the
    database was restored or failed over: docs/continuity.md). Nothing may be signed for the
    stream until ``recordseal recover`` has declared the loss."""

    stream_id: int


#: Why an append was not placed (nothing was written for it).
Refusal = Replayed | KeyReused | SubjectErased | SubjectRace | Deferred | Fenced
#: What became of one append.
AppendOutcome = NewRecord | Refusal


class RecordStore(Protocol):
    """Every method is one transaction (appends may share one: group commit)."""

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        """Store a header-signing key (a no-op for a key id stored already)."""
        ...

    async def signing_keys(self) -> list[SigningKeyRow]: ...

    async def rotate_signing_key(self, new: SigningKeyRow, retire: str, at: str) -> bool:
        """In one transaction: end the validity of the active key ``retire`` at ``at`` and
        store ``new``; False (nothing written) when ``retire`` is not active any more."""
        ...

    async def revoke_signing_key(self, key_id: str, revoked_at: str, compromised_at: str) -> bool:
        """Mark a key revoked at ``revoked_at`` and compromised from ``compromised_at``; False
        when no key has this id."""
        ...

    async def create_stream(
        self,
        tenant: str,
        name: str,
        declarations: dict[str, str],
        strict: bool,
        genesis: bytes,
        now: str,
        *,
        fleet: str = DEFAULT_FLEET,
    ) -> StreamRow | None:
        """The new stream, with the (tenant, fleet) log it seals into (made now if new);
        None when the tenant has a stream of this name already (nothing is written)."""
        ...

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None: ...

    async def list_streams(self, tenant: str, after: str | None, limit: int) -> list[StreamRow]:
        """Up to ``limit`` of the tenant's streams whose names come after ``after`` (from the
        first when None), by name in byte order: one index range, whatever the tenant holds."""
        ...

    async def get_subjects(
        self, tenant: str, subject_indexes: Sequence[bytes]
    ) -> dict[bytes, SubjectRow]:
        """The tenant's stored subjects among ``subject_indexes`` (erased ones too, without
        a key), by index, in one query however many are asked for."""
        ...

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None: ...

    async def append_records(
        self, tenant: str, appends: list[Append], now: str, build: BatchBuilder
    ) -> list[AppendOutcome]:
        """Append records, each placed or refused on its own; the outcomes in order.

        For each: create the subject if new, assign the next sequence number and link, build
        (``build``, once for the appends placed), give it the next position of its log, and
        insert (with the idempotency key, if any), in one transaction with the others. The
        rules of placement, and so the refusals, are ``storage.placing``'s, for every
        backend. Appends from several calls may share one transaction (group commit); none
        returns before that transaction has committed. A transaction that fails raises,
        and nothing of it is stored.
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

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None: ...
    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None: ...
    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]: ...

    async def list_records(
        self, stream: StreamRow, from_seq: int, limit: int
    ) -> list[ListedRecord]:
        """Up to ``limit`` records of ``stream`` (as read by :meth:`get_stream`) from sequence
        number ``from_seq`` on, in order (gap headers included), each with where it is
        sealed: one index range."""
        ...

    async def stream_heads(self) -> list[tuple[str, str, int, bytes]]:
        """Every stream as (tenant, name, next sequence number, chain leaf of its last record
        or its genesis hash): what the continuity check compares with the journal."""
        ...

    async def chain_leaf_at(self, tenant: str, stream: str, seq: int) -> bytes | None:
        """The chain leaf of the stream's record ``seq``, or None if the store has none."""
        ...

    async def apply_erasures(self, erasures: Sequence[tuple[str, bytes, str, str]]) -> int:
        """Make sure every (tenant, subject index, subject handle, erased at) is erased: a
        subject still holding its key loses it and its payloads, one the store does not know
        is stored erased (so it is never re-keyed). Returns how many changed."""
        ...

    def on_reconnect(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run ``hook`` before the first append after the appends' database connection was
        lost and opened again (a failover may have put the database back to an earlier state:
        ``ledger.continuity`` reads the journal again). A no-op for a store with no server."""
        ...

    async def keys_wrapped_before(
        self, generation: int, limit: int
    ) -> list[tuple[str, bytes, str, bytes]]:
        """Up to ``limit`` subjects whose key is wrapped by a KEK older than ``generation``
        (``crypto.vault``: 60 bytes, or 61 with an older generation byte), as (tenant,
        subject index, subject handle, wrapped key)."""
        ...

    async def replace_wrapped_keys(self, changes: Sequence[tuple[str, bytes, bytes, bytes]]) -> int:
        """Store each (tenant, subject index, old wrapped key, new wrapped key) where the
        subject still holds the old one (an erasure meanwhile wins); how many were stored."""
        ...

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        """Destroy the stored subject's wrapped key and delete its payloads, in one
        transaction with no append of it under way; a repeat changes nothing."""
        ...

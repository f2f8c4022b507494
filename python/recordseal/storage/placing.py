"""Where each append of a transaction goes: the placement rules, written once for every backend.

A backend reads what the rules need under its own locks (stored idempotency keys, subjects,
stream heads) and hands it over through :class:`Lookups`; :func:`place` decides every append
in order, then builds the placed ones with one call of the service's builder. Nothing here
touches a database, so the SQLite job and the PostgreSQL writer apply exactly these rules.

The rules, for each append in order:

1. Its idempotency key stored (or placed earlier in this transaction): with the same request
   hash it is ``Replayed`` (its record is the answer), with another ``KeyReused``.
2. Its subject must be stored with the claimed handle; another handle means another writer
   created that new subject first: ``SubjectRace``, and every later append of the same stream
   of the same call is ``Deferred`` (nothing placed), so a call's records keep their order
   when the service appends them again.
3. An erased subject (no key any more): ``SubjectErased``.
4. A stream whose stored head is behind what the service signed for it (the append's
   ``behind`` says so: the database was restored or failed over): ``Fenced``, and so is every
   later append of that stream in the transaction.
5. Otherwise it is placed at its stream's head.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from recordseal.storage.records import (
    AppendOutcome,
    Deferred,
    Fenced,
    KeyReused,
    Refusal,
    Replayed,
    SubjectErased,
    SubjectRace,
)
from recordseal.storage.requests import Append, BatchBuilder, Call, SubjectClaim


class Lookups(Protocol):
    """What a backend has read (or reads now) under its locks."""

    def stored_key(self, tenant: str, key: str) -> tuple[bytes, str] | None:
        """The request hash and record id stored under an idempotency key."""
        ...

    def stored_subject(self, tenant: str, subject: SubjectClaim) -> tuple[str, bool] | None:
        """The stored handle of the claim's subject and whether its key is live (after the
        backend has inserted :func:`new_subjects`)."""
        ...

    def head(self, stream_id: int) -> tuple[int, bytes]:
        """The stream's next sequence number and the chain leaf of its last record."""
        ...


@dataclass(slots=True)
class Placed:
    """The outcome of :func:`place`: one record or refusal per append, the new stream heads,
    and the idempotency keys of the records placed ((tenant, key) -> (hash, record id))."""

    outcomes: list[AppendOutcome]
    heads: dict[int, tuple[int, bytes]]
    keys: dict[tuple[str, str], tuple[bytes, str]] = field(default_factory=dict)


def new_subjects(
    calls: Sequence[Call], stored_key: Callable[[str, str], tuple[bytes, str] | None]
) -> list[tuple[str, bytes, str, bytes]]:
    """The subjects these calls' appends create, as (tenant, index, handle, wrapped key),
    sorted (the order every backend inserts them in): the first claim of each new subject
    wins, later ones see a race (rule 2). An append whose idempotency key is stored, or used
    earlier in the call, is refused (rule 1) and creates nothing."""
    first_claims: dict[tuple[str, bytes], tuple[str, bytes]] = {}
    keys_used: set[tuple[str, str]] = set()
    for tenant, appends in calls:
        for append in appends:
            if append.idempotency is not None:
                key = (tenant, append.idempotency.key)
                if key in keys_used or stored_key(*key) is not None:
                    continue
                keys_used.add(key)
            wrapped = append.subject.new_wrapped_key
            if wrapped is not None:
                first_claims.setdefault(
                    (tenant, append.subject.index), (append.subject.subject_ref, wrapped)
                )
    return [(t, i, ref, wrapped) for (t, i), (ref, wrapped) in sorted(first_claims.items())]


def check(
    tenant: str,
    append: Append,
    lookups: Lookups,
    placed_keys: dict[tuple[str, str], tuple[bytes, str]],
) -> Refusal | None:
    """The refusal of one append by rules 1-3, or None if it may be placed."""
    claim = append.idempotency
    if claim is not None:
        known = placed_keys.get((tenant, claim.key)) or lookups.stored_key(tenant, claim.key)
        if known is not None:
            if known[0] != claim.request_hash:
                return KeyReused(claim.key)
            return Replayed(known[1])
    subject = append.subject
    stored = lookups.stored_subject(tenant, subject)
    if stored is None or stored[0] != subject.subject_ref:
        return SubjectRace(subject.subject_ref)
    if not stored[1]:
        return SubjectErased(subject.subject_ref)
    return None


def place(calls: Sequence[Call], lookups: Lookups, build: BatchBuilder) -> Placed:
    """Decide every append of the calls in order, then build the placed ones in one
    ``build`` call. The outcomes are in the order of the calls' appends."""
    decided: list[int | Refusal] = []  # an index into ``placed``, or the refusal
    placed: list[Append] = []
    slots: list[int] = []
    slot_of: dict[int, int] = {}
    heads: list[tuple[int, bytes]] = []
    fenced: set[int] = set()
    keys: dict[tuple[str, str], tuple[bytes, str]] = {}
    for tenant, appends in calls:
        raced: set[int] = set()  # streams of this call behind a raced subject
        for append in appends:
            stream_id = append.stream_id
            if stream_id in raced:
                decided.append(Deferred())
                continue
            refusal = check(tenant, append, lookups, keys)
            if refusal is None and stream_id not in slot_of:
                refusal = _fence(append, lookups, slot_of, heads, fenced)
            if refusal is not None:
                if isinstance(refusal, SubjectRace):
                    raced.add(stream_id)
                decided.append(refusal)
                continue
            if append.idempotency is not None:
                claim = append.idempotency
                keys[(tenant, claim.key)] = (claim.request_hash, append.record_id)
            decided.append(len(placed))
            placed.append(append)
            slots.append(slot_of[stream_id])
    records = build(placed, slots, heads) if placed else []
    if len(records) != len(placed):
        raise AssertionError(f"the builder made {len(records)} records for {len(placed)}")
    return Placed(
        [records[d] if isinstance(d, int) else d for d in decided],
        {stream_id: heads[slot] for stream_id, slot in slot_of.items()},
        keys,
    )


def _fence(
    append: Append,
    lookups: Lookups,
    slot_of: dict[int, int],
    heads: list[tuple[int, bytes]],
    fenced: set[int],
) -> Fenced | None:
    """Rule 4, for a stream without a slot yet: read its head once per transaction (its slot),
    and ask the append's ``behind`` whether the store is behind what was signed."""
    stream_id = append.stream_id
    if stream_id in fenced:
        return Fenced(stream_id)
    head = lookups.head(stream_id)
    if append.behind is not None and append.behind(*head):
        fenced.add(stream_id)
        return Fenced(stream_id)
    slot_of[stream_id] = len(heads)
    heads.append(head)
    return None

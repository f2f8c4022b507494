"""The placement rules of ``storage.placing`` decided by the native core (``place_appends``,
rust-core/src/placing.rs): the backends' ``place``. ``storage.placing`` stays the reference
and the oracle of the tests; without the extension (or with ``RECORDSEAL_CORE=reference``)
it is what runs.

The core decides every append of a transaction in one pass over what the backend read under
its locks (:class:`Known`: the stored idempotency keys and subjects, of which it reads those
the appends name). Rule 4 (a stream whose stored head is behind what the service signed)
needs the stream's head and the service's check of it, which only Python has: the core asks
it once per stream, exactly where the reference asks it (the check may fence the stream). No
Python runs per record but the one ``build`` call and the list of outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from recordseal.core.backend import extension
from recordseal.storage import placing
from recordseal.storage.placing import Lookups, Placed
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
from recordseal.storage.requests import BatchBuilder, Call


class Known(Lookups, Protocol):
    """A backend's lookups, with what it has read as mappings the core takes whole."""

    def known_keys(self) -> dict[tuple[str, str], tuple[bytes, str]]:
        """(tenant, key) -> (request hash, record id) of every stored key the calls name."""
        ...

    def known_subjects(self) -> dict[tuple[str, bytes], tuple[str, bool]]:
        """(tenant, subject index) -> (handle, live) of every subject the calls name."""
        ...


#: The refusals ``place_appends`` names, each made from the value it gives with the name.
_REFUSALS: dict[str, Callable[[Any], Refusal]] = {
    "replayed": Replayed,
    "key_reused": KeyReused,
    "subject_race": SubjectRace,
    "subject_erased": SubjectErased,
    "fenced": Fenced,
    "deferred": lambda _: Deferred(),
}


def _refusal(kind: str, value: Any) -> Refusal:
    """The refusal the core named (``place_appends``)."""
    return _REFUSALS[kind](value)


def native_place(calls: Sequence[Call], lookups: Known, build: BatchBuilder) -> Placed:
    """``placing.place``, decided by the core (module docstring)."""
    assert extension is not None
    calls = list(calls)
    heads: dict[int, tuple[int, bytes]] = {}

    def check(stream_id: int, call: int, position: int) -> bool:
        """Rule 4 for a stream, at its first append rules 1 to 3 let through."""
        append = calls[call][1][position]
        head = heads[stream_id] = lookups.head(stream_id)
        return append.behind is not None and append.behind(*head)

    decisions, slots, streams, placed_keys = extension.place_appends(
        calls, lookups.known_keys(), lookups.known_subjects(), check
    )
    slot_heads = [heads[stream_id] for stream_id in streams]
    appends = [append for _, call_appends in calls for append in call_appends]
    placed = [appends[n] for n, decided in enumerate(decisions) if type(decided) is int]
    records = build(placed, slots, slot_heads) if placed else []
    if len(records) != len(placed):
        raise AssertionError(f"the builder made {len(records)} records for {len(placed)}")
    outcomes: list[AppendOutcome] = [
        records[decided] if type(decided) is int else _refusal(*decided) for decided in decisions
    ]
    return Placed(
        outcomes,
        {stream_id: slot_heads[slot] for slot, stream_id in enumerate(streams)},
        {(tenant, key): (digest, record_id) for tenant, key, digest, record_id in placed_keys},
    )


def place(calls: Sequence[Call], lookups: Known, build: BatchBuilder) -> Placed:
    """Decide every append of the calls in order (``storage.placing``'s rules): natively
    when the extension runs, else by the reference."""
    if extension is None:
        return placing.place(calls, lookups, build)
    return native_place(calls, lookups, build)

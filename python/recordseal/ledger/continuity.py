"""Continuity: the service never signs two histories, whatever its database is put back to.

The store is compared with the continuity journal (``storage.journal``) at start, and the
journal is consulted again under the locks wherever something is signed:

- a stream whose stored head is behind the journal's (or holds another chain leaf at the
  journal's sequence number) is **fenced**: nothing is appended to it, so no header is signed
  for a sequence number that may have been used (``head_check``, rule 4 of
  ``storage.placing``);
- a log whose stored size is behind the journal's last signed checkpoint (or whose checkpoint
  at that size has another root), or behind the size a witness reports it cosigned, is
  fenced: it is not sealed, so no second checkpoint of one size is signed
  (``SealRequest.behind``);
- erasures are re-applied from the journal before anything is served.

A fence holds until ``recordseal recover`` (run while the service is stopped) has declared
the lost sequence numbers and started a successor log (docs/continuity.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from recordseal import metrics
from recordseal.clock import utc_now
from recordseal.storage.base import Store
from recordseal.storage.journal import (
    Erased,
    Head,
    Journal,
    JournalState,
    Signed,
)
from recordseal.storage.requests import HeadCheck
from recordseal.storage.rows import AnchorLog

log = logging.getLogger("recordseal.continuity")

STORE_ROLLED_BACK = "store_rolled_back"


@dataclass(frozen=True, slots=True)
class Fence:
    """Why a stream (``name`` its name) or a log (``name`` its origin) is fenced."""

    kind: str  # "stream" or "log"
    tenant: str | None
    name: str
    reason: str
    since: str
    fleet: str | None = None  # a log's fleet


class Continuity:
    """One process's view of the journal, and the fences found by comparing it with the store."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.state = JournalState()
        self.streams: dict[tuple[str, str], Fence] = {}
        self.logs: dict[str, Fence] = {}
        self._log_scopes: dict[tuple[str | None, str], str] = {}  # (tenant, fleet) -> origin
        self._checks: dict[tuple[str, str], HeadCheck] = {}

    # --- at start --------------------------------------------------------------------------

    async def start(self, store: Store) -> None:
        """Open the journal, re-apply its erasures, and fence what the store lost."""
        self.state = await self.journal.load()
        await self._reapply_erasures(store)
        await self._compare_streams(store)
        await self._compare_logs(store)
        self._report()

        async def refresh() -> None:
            await self.refresh(store)

        store.records.on_reconnect(refresh)

    async def refresh(self, store: Store) -> None:
        """After the store's connection was lost and opened again (a failover while the
        service runs): read what every process journaled since, so the next append of a
        stream another process wrote is checked against that process's head too, and
        re-apply the erasures."""
        for entry in (await self.journal.read()).entries():
            self.state.add(entry)
        await self._reapply_erasures(store)
        log.warning("continuity.journal_reread", extra={"note": "the store reconnected"})

    async def _reapply_erasures(self, store: Store) -> None:
        erasures = [
            (e.tenant, e.index, e.subject_ref, e.erased_at) for e in self.state.erasures.values()
        ]
        reapplied = await store.records.apply_erasures(erasures)
        if reapplied:
            log.warning(
                "continuity.erasures_reapplied",
                extra={
                    "count": reapplied,
                    "note": "the store held subjects the journal says were erased (a restore)",
                },
            )

    async def _compare_streams(self, store: Store) -> None:
        stored = {
            (t, n): (next_seq, head) for t, n, next_seq, head in await store.records.stream_heads()
        }
        for key, head in self.state.heads.items():
            found = stored.get(key)
            if found is None:
                reason = f"the store has no stream; the journal has seq {head.seq}"
            elif found[0] - 1 < head.seq:
                reason = f"the store's last seq is {found[0] - 1}; seq {head.seq} was signed"
            elif await self._holds(store, key, head, found[1]):
                continue
            else:
                reason = f"the store's record at seq {head.seq} is not the one signed"
            self._fence_stream(key[0], key[1], reason)

    @staticmethod
    async def _holds(store: Store, key: tuple[str, str], head: Head, stored_head: bytes) -> bool:
        """Whether the store's record at the journal's seq is the one signed."""
        if stored_head == head.leaf:
            return True
        return await store.records.chain_leaf_at(*key, head.seq) == head.leaf

    async def _compare_logs(self, store: Store) -> None:
        scopes = await store.logs.anchor_logs()
        self._log_scopes = {(a.tenant, a.fleet): a.origin for a in scopes}
        by_origin = {a.origin: a for a in scopes}
        sizes = {c.checkpoint.origin: c.checkpoint for c in await store.logs.latest_checkpoints()}
        for origin, signed in self.state.checkpoints.items():
            if origin in self.state.retired:
                continue
            stored = sizes.get(origin)
            if stored is None or stored.size < signed.size:
                size = 0 if stored is None else stored.size
                reason = f"the store's log is at size {size}; size {signed.size} was signed"
            else:
                at = stored if stored.size == signed.size else None
                at = at or await store.logs.checkpoint_at(origin, signed.size)
                if at is not None and at.root == signed.root:
                    continue
                reason = f"the store's checkpoint at size {signed.size} is not the one signed"
            scope = self._scope_of(origin, by_origin)
            if scope is not None:
                self.fence_log(origin, scope.tenant, scope.fleet, reason)
            else:  # the store lost the log altogether: the journal names its scope
                self.fence_log(origin, signed.tenant, signed.fleet, reason)

    def _scope_of(self, origin: str, by_origin: dict[str, AnchorLog]) -> AnchorLog | None:
        """The store's log of ``origin``, or of the predecessor it succeeds (a store put back
        to before the ``recordseal recover`` that started ``origin``)."""
        preceding = {r.successor: r.origin for r in self.state.retired.values()}
        while origin not in by_origin and origin in preceding:
            origin = preceding[origin]
        return by_origin.get(origin)

    def current_origin(self, origin: str) -> str:
        """The live log of the line that starts at ``origin``: its last successor."""
        while origin in self.state.retired:
            origin = self.state.retired[origin].successor
        return origin

    # --- fences ----------------------------------------------------------------------------

    def stream_fence(self, tenant: str, stream: str) -> Fence | None:
        return self.streams.get((tenant, stream))

    def log_fence(self, tenant: str | None, fleet: str) -> Fence | None:
        origin = self._log_scopes.get((tenant, fleet))
        return None if origin is None else self.logs.get(origin)

    def tenant_fences(self, tenant: str) -> list[Fence]:
        return [f for f in (*self.streams.values(), *self.logs.values()) if f.tenant == tenant]

    def _fence_stream(self, tenant: str, stream: str, reason: str) -> None:
        if (tenant, stream) in self.streams:
            return
        fence = Fence("stream", tenant, stream, reason, utc_now())
        self.streams[(tenant, stream)] = fence
        log.error(
            "continuity.stream_fenced",
            extra={
                "tenant": tenant,
                "stream": stream,
                "reason": reason,
                "note": "nothing is signed for it until `recordseal recover` (docs/continuity.md)",
            },
        )
        self._report()

    def fence_log(self, origin: str, tenant: str | None, fleet: str | None, reason: str) -> None:
        if origin in self.logs:
            return
        self.logs[origin] = Fence("log", tenant, origin, reason, utc_now(), fleet)
        if fleet is not None:
            self._log_scopes[(tenant, fleet)] = origin
        log.error(
            "continuity.log_fenced",
            extra={
                "origin": origin,
                "reason": reason,
                "note": "it is not sealed until `recordseal recover` (docs/continuity.md)",
            },
        )
        self._report()

    def _report(self) -> None:
        metrics.FENCED.labels("stream").set(len(self.streams))
        metrics.FENCED.labels("log").set(len(self.logs))

    # --- streams ---------------------------------------------------------------------------

    def head_check(self, tenant: str, stream: str) -> HeadCheck:
        """The ``behind(next_seq, prev)`` of the stream's appends (one per stream)."""
        check = self._checks.get((tenant, stream))
        if check is None:

            def check(next_seq: int, prev: bytes) -> bool:
                if (tenant, stream) in self.streams:
                    return True
                known = self.state.heads.get((tenant, stream))
                if known is None or next_seq - 1 > known.seq:
                    return False
                if next_seq - 1 == known.seq and prev == known.leaf:
                    return False
                self._fence_stream(
                    tenant,
                    stream,
                    f"the store's head is seq {next_seq - 1}; seq {known.seq} was signed",
                )
                return True

            self._checks[(tenant, stream)] = check
        return check

    async def signed_heads(self, heads: Iterable[Head]) -> None:
        """Journal the new heads of committed appends before anyone is told of them."""
        changed = [head for head in heads if self.state.add(head)]
        await self.journal.append(changed)

    # --- logs ------------------------------------------------------------------------------

    def seal_check(self, origin: str, tenant: str | None, fleet: str) -> Callable[[int], bool]:
        """The ``behind(stored_size)`` of a seal of ``origin``."""

        def behind(size: int) -> bool:
            if origin in self.logs:
                return True
            known = self.state.checkpoints.get(origin)
            if known is None or size >= known.size:
                return False
            self.fence_log(
                origin,
                tenant,
                fleet,
                f"the store's log is at size {size}; size {known.size} was signed",
            )
            return True

        return behind

    async def signed_checkpoint(
        self,
        origin: str,
        size: int,
        root: bytes,
        tenant: str | None,
        fleet: str,
        frontier: tuple[bytes, ...] = (),
    ) -> None:
        """Journal a committed checkpoint of the (tenant, fleet) log before it is offered to
        anyone; for the aggregate log, with its ``frontier`` at ``size``."""
        entry = Signed(origin, size, root, tenant, fleet, frontier)
        if self.state.add(entry):
            await self.journal.append([entry])

    def witness_ahead(
        self, origin: str, tenant: str | None, fleet: str, witness: str, size: int, ours: int
    ) -> None:
        """A witness cosigned ``size`` of the log, beyond the ``ours`` it now has."""
        self.fence_log(
            origin,
            tenant,
            fleet,
            f"witness {witness} cosigned size {size}; the store's log is at size {ours}",
        )

    # --- erasure ---------------------------------------------------------------------------

    async def erasing(self, tenant: str, index: bytes, subject_ref: str, erased_at: str) -> None:
        """Journal an erasure before the store erases (re-applied at every start)."""
        entry = Erased(tenant, index, subject_ref, erased_at)
        self.state.add(entry)
        await self.journal.append([entry])

    async def close(self) -> None:
        await self.journal.aclose()

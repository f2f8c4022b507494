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

The journal is shared by every process, so a check made before a signature reads its
*current* state, not the one this process read at start: before a seal, the log's last
signed checkpoint (``before_seal``); before an append, the head of each stream whose latest
head this process has not journaled itself since its store connections were last opened
(``before_append``). When a store connection is opened again (a failover), the process reads
the whole journal again, re-applies its erasures and compares every stream and log before it
serves anything from the store (``refresh``). A fence found by one process is journaled, and
every process adopts the journaled fences within a second (``watch``), so every worker and
host refuses the same streams and logs.

A fence holds until ``recordseal recover`` (run while the service is stopped) has declared
the lost sequence numbers and started a successor log (docs/continuity.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable

from recordseal import metrics
from recordseal.clock import utc_now
from recordseal.storage.base import Store
from recordseal.storage.journal import (
    Entry,
    Erased,
    Fenced,
    Head,
    Journal,
    JournalState,
    Signed,
    Unaccepted,
)
from recordseal.storage.requests import HeadCheck
from recordseal.storage.rows import AnchorLog

log = logging.getLogger("recordseal.continuity")

STORE_ROLLED_BACK = "store_rolled_back"

#: Seconds between two reads of the fences other processes journaled (``watch``).
WATCH_INTERVAL = 0.5


#: Why a stream (``name`` its name) or a log (``name`` its origin) is fenced: the journal's
#: entry itself, so a fence found here is journaled as it is and one read back is the same.
Fence = Fenced


class Continuity:
    """One process's view of the journal, and the fences found by comparing it with the store."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.state = JournalState()
        self.streams: dict[tuple[str, str], Fence] = {}
        self.logs: dict[str, Fence] = {}
        self._log_scopes: dict[tuple[str | None, str], str] = {}  # (tenant, fleet) -> origin
        self._checks: dict[tuple[str, str], HeadCheck] = {}
        #: streams whose latest head this process journaled itself since its store
        #: connections were last opened: their appends need no read of the journal first
        self._fresh: set[tuple[str, str]] = set()
        #: heads committed whose journal write failed: written with the next one, and no
        #: answer is given until they are (docs/continuity.md, "When the journal fails")
        self._unjournaled: dict[tuple[str, str], Head] = {}
        #: fences this process found and has not journaled yet
        self._unshared: list[Fenced] = []

    # --- at start --------------------------------------------------------------------------

    async def start(self, store: Store) -> None:
        """Open the journal, re-apply its erasures, and fence what the store lost."""
        self.state = await self.journal.load()
        await self._reapply_erasures(store)
        await self._compare_streams(store)
        await self._compare_logs(store)
        self._adopt(self.state.live_fences())
        self._report()

        async def refresh() -> None:
            await self.refresh(store)

        store.records.on_reconnect(refresh)

    async def refresh(self, store: Store) -> None:
        """After a store connection was opened again (a failover while the service runs),
        before anything is served from the store: read the whole journal again, re-apply
        its erasures, and compare every stream and log with it, as at start. Every stream's
        next append reads its head from the journal again (``before_append``)."""
        self._fresh.clear()
        for entry in (await self.journal.read()).entries():
            self.state.add(entry)
        await self._reapply_erasures(store)
        await self._compare_streams(store)
        await self._compare_logs(store)
        await self.share()
        log.warning("continuity.journal_reread", extra={"note": "a store connection reopened"})

    # --- the journal's current state, before a signature -----------------------------------

    async def before_append(self, streams: Collection[tuple[str, str]]) -> None:
        """Read the journal's heads of the streams whose latest head this process has not
        journaled itself since its store connections were opened: another process (or this
        one, before a failover) may have signed past what the store now holds."""
        wanted = [key for key in streams if key not in self._fresh]
        if wanted:
            for entry in await self.journal.current(wanted, ()):
                self.state.add(entry)

    async def before_seal(self, origin: str) -> None:
        """Read the journal's last signed checkpoint of ``origin``, whoever signed it: the
        seal's ``behind`` then compares the store with it."""
        await self._read_checkpoint(origin)

    async def _read_checkpoint(self, origin: str) -> None:
        for entry in await self.journal.current((), (origin,)):
            self.state.add(entry)

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
        for key, head in list(self.state.heads.items()):
            if key in self.streams:
                continue
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
        for origin, signed in list(self.state.checkpoints.items()):
            if origin in self.state.retired or origin in self.logs:
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

    def _fence_stream(
        self, tenant: str, stream: str, reason: str, since: str | None = None
    ) -> None:
        if (tenant, stream) in self.streams:
            return
        fence = Fence("stream", tenant, stream, reason, since or utc_now())
        self.streams[(tenant, stream)] = fence
        if since is None:  # found here: journaled for every other process
            self._unshared.append(fence)
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

    def fence_log(
        self,
        origin: str,
        tenant: str | None,
        fleet: str | None,
        reason: str,
        since: str | None = None,
    ) -> None:
        if origin in self.logs:
            return
        fence = Fence("log", tenant, origin, reason, since or utc_now(), fleet)
        self.logs[origin] = fence
        if since is None:  # found here: journaled for every other process
            self._unshared.append(fence)
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

    def _adopt(self, fences: Iterable[Fenced]) -> None:
        """Take up the fences other processes journaled (not journaled again)."""
        for fence in fences:
            if fence.kind == "stream" and fence.tenant is not None:
                self._fence_stream(fence.tenant, fence.name, fence.reason, fence.since)
            elif fence.kind == "log":
                self.fence_log(fence.name, fence.tenant, fence.fleet, fence.reason, fence.since)

    async def share(self) -> None:
        """Journal the fences this process found (and any heads whose write failed)."""
        await self._write([])

    async def adopt_shared(self) -> None:
        """Take up the fences every process journaled since ``recordseal recover`` last ran."""
        fences, recovered_at = await self.journal.shared()
        self._adopt(f for f in fences if f.since > recovered_at)

    async def watch(self, interval: float = WATCH_INTERVAL) -> None:
        """Every ``interval`` seconds: journal the fences found here, adopt the ones other
        processes journaled (a background task of ``serve``)."""
        trouble: str | None = None
        while True:
            try:
                await self.share()
                await self.adopt_shared()
                if trouble is not None:
                    log.info("continuity.fences_read_again")
                    trouble = None
            # Boundary of one round of a background task: a journal that does not answer now
            # is read again next round (appends and seals refuse meanwhile on their own).
            except Exception as error:
                if type(error).__name__ != trouble:
                    trouble = type(error).__name__
                    log.warning("continuity.fences_unread", extra={"error": trouble})
            await asyncio.sleep(interval)

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
        """Journal the new heads of committed appends before anyone is told of them, with
        any head whose journal write failed before (and the fences found meanwhile): a
        ``JournalError`` leaves them to the next write, and no answer is given until one
        has written them."""
        for head in heads:
            self.state.add(head)
            key = (head.tenant, head.stream)
            known = self._unjournaled.get(key)
            if known is None or head.seq > known.seq:
                self._unjournaled[key] = head
        await self._write(list(self._unjournaled.values()))

    async def _write(self, heads: list[Head]) -> None:
        fences = self._unshared
        if not heads and not fences:
            return
        self._unshared = []
        written = False
        try:
            await self.journal.append([*heads, *fences])
            written = True
        finally:
            if not written:  # failed or cancelled: the fences go with the next write
                self._unshared = fences + self._unshared
        for head in heads:
            key = (head.tenant, head.stream)
            if self._unjournaled.get(key) == head:
                del self._unjournaled[key]
            self._fresh.add(key)

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
        # The journal's word again: another process may have journaled past it since the
        # seal read it (two databases sealed at once, around a failover).
        await self._read_checkpoint(origin)
        known = self.state.checkpoints.get(origin)
        if known is None or known.size < size:
            if self.state.add(entry):
                await self.journal.append([entry])
            return
        if (known.size, known.root) == (size, root):
            return  # journaled already
        # Behind what the journal holds, or another root at its size: another history of the
        # log. Fence it, so it is never offered; recover moves what it sealed to the
        # successor (docs/continuity.md, "What a running service catches").
        self.state.conflicts.append((known, entry))
        unaccepted = Unaccepted(origin, size, root)
        self.state.add(unaccepted)
        entries: list[Entry] = [unaccepted]
        if known.size == size:
            reason = f"a second root was signed at size {size}"
            entries.append(entry)
        else:
            reason = f"a checkpoint of size {size} was signed while size {known.size} was"
        self.fence_log(origin, tenant, fleet, reason)
        await self.journal.append(entries)
        await self.share()

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

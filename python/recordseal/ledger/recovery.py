"""``recordseal recover``: continue every fenced stream and log without equivocation
(docs/continuity.md, "Recover").

Run while the service is stopped, after a restore or failover fenced streams and logs
(``ledger.continuity``):

- a fenced **stream** whose store ends at ``seq n-1`` while the journal says ``seq J`` was
  signed gets a signed gap header declaring ``n..J`` lost, stored as its record at ``J+1``
  (docs/records.md, "Gap declarations"); its next record is ``J+2``;
- the fenced **aggregate log** is taken up again at the last checkpoint the service signed
  for it, from the frontier the journal keeps (the entries the store lost stay lost; their
  hashes are committed in it);
- a fenced **log** is retired and a successor started (``<base>/2``, ``<base>/3``...), whose
  leaf 0 commits to the last checkpoint the service signed for the predecessor
  (``merkle.genesis.successor_genesis``) and whose checkpoint of size 1 is signed now; the
  records the predecessor had not sealed move to the successor.

Everything is signed and journaled first (the journal then holds the new heads, the
retirement and the successor's checkpoint), and then written to the store in one
transaction. Should that transaction never happen (a crash between the two), the streams and
logs are fenced again at the next start and a second ``recover`` declares past what the first
journaled: nothing is ever signed twice for one sequence number or one log size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from recordseal import chain
from recordseal.clock import new_record_id, utc_now
from recordseal.core import leaf_hash
from recordseal.crypto.signing import HeaderSigner
from recordseal.ledger.continuity import STORE_ROLLED_BACK, Continuity
from recordseal.ledger.errors import RecordServiceError
from recordseal.ledger.log_keys import LogSigner, as_signers, checkpoint_signer
from recordseal.merkle import tree
from recordseal.merkle.genesis import log_origin, successor_genesis, successor_origin
from recordseal.merkle.log import frontier
from recordseal.storage.base import Store
from recordseal.storage.journal import Entry, Head, Recovered, Retired, Signed
from recordseal.storage.recovery import AggregateRestore, GapRecord, Recovery, Succession
from recordseal.storage.tenancy import tenant_key


class ServiceRunning(RecordServiceError):
    """``recover`` runs while the service is stopped; nothing was written. ``holder`` says
    what showed a running service: its ``sealer_claim`` on the store, or its ``journal``
    (at ``location``)."""

    def __init__(
        self, message: str, holder: Literal["sealer_claim", "journal"], location: str | None
    ) -> None:
        super().__init__(message)
        self.holder = holder
        self.location = location


@dataclass
class RecoveryReport:
    """What ``recover`` did: gaps declared, logs succeeded, and what it could not recover."""

    gaps: list[GapRecord] = field(default_factory=list)
    successions: list[Succession] = field(default_factory=list)
    #: (stream or log, why it stays fenced)
    refused: list[tuple[str, str]] = field(default_factory=list)
    #: the aggregate log taken up again at its last signed checkpoint
    aggregate: AggregateRestore | None = None

    @property
    def changed(self) -> bool:
        return bool(self.gaps or self.successions or self.aggregate)

    def as_json(self) -> dict[str, object]:
        return {
            "gaps": [
                {
                    "tenant": g.tenant,
                    "stream": g.stream,
                    "from_seq": g.from_seq,
                    "to_seq": g.seq - 1,
                    "seq": g.seq,
                }
                for g in self.gaps
            ],
            "successions": [
                {
                    "predecessor": s.predecessor,
                    "size": s.size,
                    "root": s.root.hex(),
                    "successor": s.origin,
                }
                for s in self.successions
            ],
            "refused": [{"name": name, "reason": why} for name, why in self.refused],
            "aggregate": (
                None
                if self.aggregate is None
                else {"origin": self.aggregate.origin, "size": self.aggregate.size}
            ),
        }

    def done(self) -> list[str]:
        """What was recovered, a sentence each."""
        lines = []
        for g in self.gaps:
            last = g.seq - 1
            lost = f"seq {last}" if g.from_seq == last else f"seqs {g.from_seq}-{last}"
            lines.append(
                f"stream {g.tenant}/{g.stream}: {lost} declared lost"
                f" (gap header at seq {g.seq}); the next record is seq {g.seq + 1}"
            )
        lines += [
            f"log {s.predecessor} retired after size {s.size}; its successor is {s.origin}"
            for s in self.successions
        ]
        if self.aggregate is not None:
            lines.append(
                f"the aggregate log {self.aggregate.origin} goes on from its"
                f" signed size {self.aggregate.size}"
            )
        return lines

    def for_auditors(self) -> list[str]:
        """What verifiers of this service's bundles see change, a sentence each."""
        lines = []
        if self.successions:
            names = ", ".join(s.origin for s in self.successions)
            lines.append(
                f"auditors' key directories lack the successor logs ({names}): bundles of"
                " records sealed from now verify INCOMPLETE until they get the key directory"
                " exported again"
            )
        if self.gaps:
            lines.append(
                "a window of records across a declared gap verifies INCOMPLETE, naming the"
                " lost sequence numbers; records before and after it verify as before"
            )
        return lines


async def recover(
    store: Store,
    continuity: Continuity,
    header_signer: HeaderSigner,
    log_signer: Callable[[str], LogSigner | Sequence[LogSigner]],
    service_origin: str,
) -> RecoveryReport:
    """Compare the store with the journal (``continuity.start``, which also re-applies the
    journal's erasures) and recover what is fenced."""
    if not await store.logs.claim_sealing():
        raise ServiceRunning("a service holds the sealer claim of this store", "sealer_claim", None)
    await continuity.start(store)
    if await continuity.journal.other_writers():
        location = continuity.journal.location
        raise ServiceRunning(f"a service is writing the journal {location}", "journal", location)
    now = utc_now()
    report = RecoveryReport()
    await _plan_successions(store, continuity, log_signer, service_origin, report)
    await _plan_gaps(store, continuity, header_signer, now, report)
    if not report.gaps and not report.successions and report.aggregate is None:
        return report
    entries: list[Entry] = []
    for s in report.successions:
        entries += [
            Retired(s.predecessor, s.size, s.root, s.origin),
            Signed(s.origin, 1, leaf_hash(s.leaf), s.tenant, s.fleet),
        ]
    entries += [Head(g.tenant, g.stream, g.seq, g.chain_leaf) for g in report.gaps]
    # The fences journaled before this run are settled by it; what stays fenced is found
    # again at the next start.
    entries.append(Recovered(now))
    # Journaled first: from here on these heads and this checkpoint count as signed.
    await continuity.journal.append(entries)
    await store.logs.recover(Recovery(report.successions, report.gaps, now, report.aggregate))
    return report


#: Why ``recover`` leaves a fenced aggregate log as it is: the journal lacks its frontier
#: (docs/tlog.md, "The aggregate log").
AGGREGATE_REFUSED = (
    "the journal holds no frontier of the aggregate log's last signed checkpoint to take it"
    " up again from; it keeps its origin (the one public witnesses admitted), so it has no"
    " successor: it stays unsealed, and bundles prove against the tenant logs' own witnesses"
)


def _aggregate_restore(
    origin: str,
    signed: Signed,
    log_signer: Callable[[str], LogSigner | Sequence[LogSigner]],
) -> AggregateRestore | None:
    """The aggregate taken up again at its journaled checkpoint, when the journal's frontier
    is whole and gives that checkpoint's root; None otherwise."""
    ids = sorted(frontier(signed.size))
    if len(ids) != len(signed.frontier):
        return None
    nodes = dict(zip(ids, signed.frontier, strict=True))
    if tree.root(signed.size, lambda level, index: nodes[(level, index)]) != signed.root:
        return None
    note = checkpoint_signer(as_signers(log_signer(origin)), origin)(signed.size, signed.root)
    return AggregateRestore(origin, signed.size, signed.root, nodes, note)


async def _plan_successions(
    store: Store,
    continuity: Continuity,
    log_signer: Callable[[str], LogSigner | Sequence[LogSigner]],
    service_origin: str,
    report: RecoveryReport,
) -> None:
    taken = set(await store.logs.log_origins()) | set(continuity.state.checkpoints)
    taken |= {r.successor for r in continuity.state.retired.values()}
    for origin, fence in sorted(continuity.logs.items()):
        signed = continuity.state.checkpoints.get(origin)
        if origin == service_origin and signed is not None:
            report.aggregate = _aggregate_restore(origin, signed, log_signer)
            if report.aggregate is None:
                report.refused.append((f"log {origin}", AGGREGATE_REFUSED))
            continue
        if fence.fleet is None or signed is None:
            report.refused.append((f"log {origin}", "the store has no log it could succeed"))
            continue
        base = log_origin(service_origin, fence.tenant, fence.fleet)
        successor = successor_origin(base, origin)
        while successor in taken:
            successor = successor_origin(base, successor)
        taken.add(successor)
        leaf = successor_genesis(origin, signed.size, signed.root)
        sign = checkpoint_signer(as_signers(log_signer(successor)), successor)
        note = sign(1, leaf_hash(leaf))  # every log key: two generations during a rotation
        keep = await _accepted_size(store, continuity, origin, fence.tenant, fence.fleet)
        report.successions.append(
            Succession(
                fence.tenant,
                fence.fleet,
                origin,
                signed.size,
                signed.root,
                successor,
                leaf,
                note,
                keep,
            )
        )


async def _accepted_size(
    store: Store, continuity: Continuity, origin: str, tenant: str | None, fleet: str
) -> int | None:
    """Where the predecessor's sealing stands for good: the size of its last stored
    checkpoint that a witness or authority vouched for (or that the journal holds), before
    the first one the journal never accepted (``Unaccepted``). The records sealed after it
    move to the successor with the unsealed ones: the checkpoints that sealed them were
    never vouched for, and never will be now that the log is retired, so only the successor
    can bring them to a witnessed checkpoint. None: every stored checkpoint stands (none was
    vouched for at all, as with no witness configured, and none is unaccepted)."""
    unaccepted = [size for (o, size) in continuity.state.unaccepted if o == origin]
    limit = min(unaccepted, default=None)
    rows = await store.logs.checkpoints(tenant_key(tenant), fleet)
    stored = [c for c in rows if c.origin == origin and (limit is None or c.size < limit)]
    journaled = continuity.state.checkpoints.get(origin)
    for row in reversed(stored):
        if journaled is not None and (journaled.size, journaled.root) == (row.size, row.root):
            return row.size
        if await store.logs.cosignatures(origin, row.size) or await store.logs.timestamps(
            origin, row.size
        ):
            return row.size
    if limit is None:
        return None
    return max((row.size for row in stored), default=1)


async def _plan_gaps(
    store: Store,
    continuity: Continuity,
    signer: HeaderSigner,
    now: str,
    report: RecoveryReport,
) -> None:
    stored = {
        (t, n): (next_seq, head) for t, n, next_seq, head in await store.records.stream_heads()
    }
    for (tenant, stream), _ in sorted(continuity.streams.items()):
        signed = continuity.state.heads[(tenant, stream)]
        found = stored.get((tenant, stream))
        name = f"stream {tenant}/{stream}"
        if found is None:
            report.refused.append(
                (name, "the store has no such stream (it was created after the backup)")
            )
            continue
        next_seq, prev = found
        if next_seq > signed.seq:
            report.refused.append(
                (
                    name,
                    f"the store holds another record at seq {signed.seq} than the one signed:"
                    " it is not an earlier state of this service's store",
                )
            )
            continue
        header = chain.build_gap_header(
            tenant=tenant,
            stream=stream,
            from_seq=next_seq,
            to_seq=signed.seq,
            reason=STORE_ROLLED_BACK,
            declared_at=now,
            prev=prev,
            key_id=signer.key_id,
        )
        canonical = chain.canonical_header(header)
        report.gaps.append(
            GapRecord(
                tenant,
                stream,
                new_record_id(),
                next_seq,
                signed.seq + 1,
                prev,
                canonical,
                signer.sign_message(chain.gap_signing_message(canonical)),
                chain.chain_leaf(canonical),
            )
        )

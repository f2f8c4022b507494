"""The sealer: seals pending chain leaves into per-(tenant, fleet) logs, and gets witnesses
to cosign (and authorities to time-stamp) each log's newest checkpoint.

One process at a time seals: the one whose ``logs.claim_sealing()`` holds (a lock file next to
the SQLite database, a session advisory lock on PostgreSQL; either is released when its holder
dies, so another process takes over). Sealing is one transaction per log (storage ``seal``,
which also holds the log's row on PostgreSQL): a crash seals a batch entirely or not at all, and a
restart picks the same pending leaves up again, so no leaf is sealed twice or skipped.
Witnesses are asked after the commit (``ledger.offering``): the newest checkpoint of every
log is offered to every configured witness and authority until each has vouched for it, at
start too, so a quiet log is cosigned as soon as a witness is configured. A witness that is
down delays nothing but its own cosignature; it is offered the newest checkpoint again with
backoff (consistency proofs cover the gap).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography import x509

from recordseal import metrics
from recordseal.audit import FleetAudit, FleetScope
from recordseal.clock import utc_now
from recordseal.identifiers import DEFAULT_FLEET
from recordseal.ledger import offering, refusals
from recordseal.ledger.continuity import STORE_ROLLED_BACK, Continuity
from recordseal.ledger.log_keys import LogKeyring, LogSigner, checkpoint_signer
from recordseal.ledger.offering import Head, Offers
from recordseal.ledger.witnessed import WitnessPolicy
from recordseal.merkle import log as merkle_log
from recordseal.merkle import tree
from recordseal.merkle.aggregate import AGGREGATE_LIMIT
from recordseal.merkle.genesis import log_origin, tenant_genesis
from recordseal.network.tsa_client import timestamp_root
from recordseal.network.witness_client import WitnessClient
from recordseal.settings import AuthoritySetting, WitnessSetting
from recordseal.storage.activity import TWO_ROOTS
from recordseal.storage.logs import LogStore, WitnessNote
from recordseal.storage.requests import SEAL_LIMIT, LogBehind, SealRequest
from recordseal.storage.rows import AGGREGATE_FLEET, AnchorLog, SealedBatch
from recordseal.tlog import Ed25519Signer, TlogError, cosigner_verifier

log = logging.getLogger("recordseal.sealer")

#: Seconds between two checkpoints of the aggregate log at least: public witnesses admit a
#: log with a budget of about one request a second (docs/tlog.md, "The aggregate log").
AGGREGATE_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class Witness:
    name: str
    client: WitnessClient
    #: which logs it witnesses: every tenant log, or the deployment's aggregate alone
    logs: Literal["tenant", "aggregate"] = "tenant"


@dataclass(frozen=True, slots=True)
class TimestampAuthority:
    """An RFC 3161 authority: it receives the 32-byte checkpoint root, nothing else."""

    name: str
    url: str
    roots: list[x509.Certificate]


class Sealer:
    def __init__(
        self,
        store: LogStore,
        log_keys: bytes | LogKeyring,
        service_origin: str,
        witnesses: Sequence[Witness] = (),
        authorities: Sequence[TimestampAuthority] = (),
        audit: FleetAudit | None = None,
        seal_limit: int = SEAL_LIMIT,
        *,
        quorum: int = 1,
        retry_delays: tuple[float, float] = (offering.FIRST_DELAY, offering.MAX_DELAY),
        clock: Callable[[], float] = time.monotonic,
        continuity: Continuity,
        refusals_file: Path | None = None,
    ) -> None:
        """``seal_limit``: pending leaves per seal transaction (a larger backlog is sealed in
        several, one checkpoint each); ``quorum``: how many of the witnesses and authorities
        make a checkpoint witnessed; ``retry_delays``: the first and the longest wait before
        offering a checkpoint again to a voucher that failed; ``refusals_file``: where the
        sealing leader records the witnesses that refuse logs (``ledger.refusals``)."""
        self.refusals_file = refusals_file
        self._store = store
        self._continuity = continuity
        self._seal_limit = seal_limit
        self._audit = audit or FleetAudit()
        self._log_keys = (
            log_keys if isinstance(log_keys, LogKeyring) else LogKeyring.of_seed(log_keys)
        )
        self._service = service_origin
        self._vouchers: dict[str, Witness | TimestampAuthority] = {w.name: w for w in witnesses}
        self._vouchers.update((a.name, a) for a in authorities)
        self._policy = WitnessPolicy(
            tuple(w.name for w in witnesses) + tuple(a.name for a in authorities), quorum
        )
        public = tuple(w.name for w in witnesses if w.logs == "aggregate")
        #: the vouchers of the tenant logs' checkpoints, and of the aggregate's
        self.tenant_policy = WitnessPolicy(
            tuple(n for n in self._policy.names if n not in public), quorum, part=True
        )
        self.aggregate_policy = WitnessPolicy(public, quorum, part=True)
        self._offers = Offers(
            self.tenant_policy.names,
            first_delay=retry_delays[0],
            max_delay=retry_delays[1],
            clock=clock,
            scoped={self.aggregate_origin: public},
        )
        self._clock = clock
        self._aggregated_at: float | None = None  # when this process last sealed the aggregate
        # (origin, witness) -> the size it last cosigned, as far as this process knows
        self._witness_sizes: dict[tuple[str, str], int] = {}

    @property
    def aggregate_origin(self) -> str:
        """The origin of the deployment's aggregate log: the service's own (docs/tlog.md)."""
        return self._service

    def checkpoint_signer(self, origin: str) -> Callable[[int, bytes], str]:
        """``sign(size, root)``: the signed checkpoint note of ``origin``, with every key that
        signs it now (the one signing function of tenant logs and the aggregate alike)."""
        return checkpoint_signer(self.signers(origin), origin)

    def signer(self, origin: str) -> Ed25519Signer:
        """The newest Ed25519 log key under the log's name (C2SP: the key name is the
        origin): the key today's witnesses check."""
        return [s for s in self.signers(origin) if isinstance(s, Ed25519Signer)][-1]

    def signers(self, origin: str) -> list[LogSigner]:
        """The keys that sign a checkpoint of ``origin`` now: Ed25519 and ML-DSA-44, of two
        generations during a rotation."""
        return self._log_keys.signing(origin)

    def log_compromise(self, vkey: str) -> str | None:
        """When a log key is known compromised (``recordseal keys revoke``), or None."""
        return self._log_keys.compromise_of(vkey)

    def every(self, origin: str) -> list[LogSigner]:
        """Every log key of ``origin``, retired ones too: what verifies its checkpoints."""
        return self._log_keys.every(origin)

    def origin(self, tenant: str | None, fleet: str = DEFAULT_FLEET) -> str:
        """The origin of the (tenant, fleet) log: its first, or the successor ``recordseal
        recover`` started for it (docs/continuity.md)."""
        return self._continuity.current_origin(log_origin(self._service, tenant, fleet))

    async def seal_pending(self) -> list[SealedBatch]:
        """Seal every log that has pending leaves; return the new checkpoints."""
        sealed = []
        for tenant, fleet in await self._store.unsealed_logs():
            sealed += await self.seal_log(tenant, fleet)
        return sealed

    async def open_fleet_logs(self, scopes: Sequence[FleetScope]) -> list[SealedBatch]:
        """Start the log of every fleet from its genesis root (docs/fleets.md, "Genesis roots and
        legacy fleets"): a log that
        does not exist yet is created with leaf 0 and its first anchor (size 1)."""
        sealed = []
        for scope in scopes:
            sealed += await self.seal_log(scope.tenant_id, scope.fleet_id)
        return sealed

    async def seal_log(self, tenant: str | None, fleet: str) -> list[SealedBatch]:
        """Seal the pending leaves of one log (creating it if new); audit each new anchor
        under the fleet's tenant scope."""
        sealed: list[SealedBatch] = []
        origin = self.origin(tenant, fleet)
        if origin in self._continuity.logs:
            return sealed  # fenced: nothing is signed for it (docs/continuity.md)
        sign = self.checkpoint_signer(origin)
        behind = self._continuity.seal_check(origin, tenant, fleet)
        while True:  # a large backlog goes in several bounded transactions
            # The journal's word now, whoever signed last (docs/continuity.md).
            await self._continuity.before_seal(origin)
            genesis = tenant_genesis(tenant, fleet)
            request = SealRequest(
                tenant, fleet, origin, genesis, sign, utc_now(), self._seal_limit, behind
            )
            try:
                batch = await self._store.seal(request)
            except LogBehind as refused:
                if refused.reason is not None:  # the store's log is another origin
                    self._continuity.fence_log(origin, tenant, fleet, refused.reason)
                break  # fenced, and logged
            if batch is None:
                break
            # Journaled before it is offered to anyone (docs/continuity.md).
            await self._continuity.signed_checkpoint(origin, batch.size, batch.root, tenant, fleet)
            sealed.append(batch)
            self._offers.sealed(batch)
            await self._audit.emit(
                FleetScope(fleet, tenant),
                "anchor.sealed",
                key=f"anchor.sealed/{origin}/{batch.size}",
                origin=origin,
                size=batch.size,
                root=batch.root.hex(),
            )
            if batch.size - batch.first_index < self._seal_limit:
                break
        return sealed

    async def seal_aggregate(self) -> SealedBatch | None:
        """Take the tenant checkpoints signed since into the aggregate log and sign its
        checkpoint: at most once every ``AGGREGATE_INTERVAL`` seconds (the request budget of
        the public witnesses), and never while it is fenced. None when nothing was sealed."""
        now = self._clock()
        if self._aggregated_at is not None and now - self._aggregated_at < AGGREGATE_INTERVAL:
            return None
        origin = self.aggregate_origin
        if origin in self._continuity.logs:
            return None  # fenced (docs/continuity.md): nothing is signed for it
        await self._continuity.before_seal(origin)
        request = SealRequest(
            None,
            AGGREGATE_FLEET,
            origin,
            b"",
            self.checkpoint_signer(origin),
            utc_now(),
            AGGREGATE_LIMIT,
            self._continuity.seal_check(origin, None, AGGREGATE_FLEET),
        )
        try:
            batch = await self._store.seal_aggregate(request)
        except LogBehind as refused:
            if refused.reason is not None:  # the store's aggregate has another origin
                self._continuity.fence_log(origin, None, AGGREGATE_FLEET, refused.reason)
            return None
        if batch is None:
            return None
        self._aggregated_at = now
        # Journaled before it is offered to anyone, as a tenant log's (docs/continuity.md),
        # with its frontier: a store put back behind it takes it up again from there.
        ids = sorted(merkle_log.frontier(batch.size))
        nodes = await self._store.log_nodes(origin, set(ids))
        await self._continuity.signed_checkpoint(
            origin, batch.size, batch.root, None, AGGREGATE_FLEET, tuple(nodes[i] for i in ids)
        )
        self._offers.sealed(batch)
        return batch

    async def consistency(self, origin: str, old_size: int, new_size: int) -> list[bytes]:
        def compute(node: tree.NodeReader) -> list[bytes]:
            return tree.consistency_path(old_size, new_size, node)

        nodes = await self._store.log_nodes(origin, tree.nodes_needed(compute))
        return compute(lambda level, index: nodes[(level, index)])

    # --- witnessing ----------------------------------------------------------------------

    @property
    def policy(self) -> WitnessPolicy:
        """The configured vouchers and the quorum that makes a checkpoint witnessed."""
        return self._policy

    async def load_offers(self) -> None:
        """Offer the stored newest checkpoint of every log to whoever has not vouched for it
        (at start, and whenever this process becomes the sealing leader)."""
        if self._vouchers:
            self._offers.load(await self._store.latest_checkpoints())
            self._record_refusals()

    def _record_refusals(self) -> None:
        if self.refusals_file is not None:
            refusals.write(self.refusals_file, refusals.refusing(self._offers.failures()))

    def pending_offers(self) -> dict[str, set[str]]:
        """Per log origin, the vouchers its newest checkpoint still waits for."""
        return self._offers.pending()

    def offer_failures(self) -> dict[tuple[str, str], tuple[int, str]]:
        """Per (log origin, voucher) failing now: failed offers in a row and the last code."""
        return self._offers.failures()

    async def offer_due(self) -> None:
        """Make every offer that is due now, concurrently, and wait for their outcomes."""
        await asyncio.gather(*(self._offer(head, name) for head, name in self._offers.due()))

    async def _offer(self, head: Head, name: str) -> None:
        voucher = self._vouchers[name]
        if head.origin in self._continuity.logs:  # fenced: its stale head is not offered
            self._offers.failed(head, name, STORE_ROLLED_BACK)
            return
        try:
            if isinstance(voucher, Witness):
                await self._cosign(voucher, head)
            else:
                stamp = await timestamp_root(voucher.url, head.root, voucher.roots)
                await self._store.add_timestamp(head.origin, head.size, name, stamp.token)
        except (TlogError, OSError) as error:
            code = getattr(error, "code", type(error).__name__)
            if code == "witness_ahead" and isinstance(error, TlogError):
                await self._witness_ahead(head, name, error)
            failures = (
                metrics.WITNESS_FAILURES if isinstance(voucher, Witness) else metrics.TSA_FAILURES
            )
            failures.labels(name, code).inc()
            change = self._offers.failed(head, name, code)
            if isinstance(voucher, Witness):
                await self._note_failure(head, name, code, error)
            if change is not None:
                self._record_refusals()  # on every change of state: rare, and a tiny file
            if change is not None and code in refusals.CODES:
                log.error(
                    "voucher.refusing",
                    extra={
                        "voucher": name,
                        "origin": head.origin,
                        "size": head.size,
                        "code": code,
                        "detail": str(error),
                        "answer": getattr(error, "evidence", {}).get("detail", ""),
                        "note": "the witness answers and refuses this log's checkpoints, so its"
                        " bundles stay VERIFICATION INCOMPLETE: it holds another history of this"
                        " origin (such as a demo witness of an earlier data directory) or does"
                        " not witness it (docs/operations.md)",
                    },
                )
            elif change is not None:
                log.warning(
                    "voucher.failing",
                    extra={
                        "voucher": name,
                        "origin": head.origin,
                        "size": head.size,
                        "code": change.code,
                        "retry_in_seconds": change.retry_in,
                        "note": "offered again with backoff; logged again only when this changes",
                    },
                )
        # Outermost boundary of one offer (a task of its own, started by the sealing loop): a
        # fault of ours is counted as the voucher's internal_error and offered again later.
        except Exception:
            self._offers.failed(head, name, "internal_error")
            log.exception(
                "voucher.offer_failed",
                extra={"voucher": name, "origin": head.origin, "size": head.size},
            )
        else:
            if isinstance(voucher, Witness):
                metrics.COSIGNATURES.labels(name).inc()
                await self._note(head, name, WitnessNote(cosigned_size=head.size))
            change = self._offers.vouched(head, name)
            if change is not None:
                self._record_refusals()
                log.info(
                    "voucher.vouching_again",
                    extra={
                        "voucher": name,
                        "origin": head.origin,
                        "size": head.size,
                        "failed_offers": change.failures,
                    },
                )

    async def _note_failure(self, head: Head, name: str, code: str, error: Exception) -> None:
        """Keep the failure for the live view (``storage/activity.py``): a witness holding
        another root at a size it cosigned is named ``witness.two_roots``, else its answer."""
        failing = self._offers.failures().get((head.origin, name))
        answer = str(getattr(error, "evidence", {}).get("detail", "") or error)
        reason = TWO_ROOTS if "root_mismatch" in answer else answer[:300]
        note = WitnessNote(failures=failing[0] if failing else 1, code=code, reason=reason)
        await self._note(head, name, note)

    async def _note(self, head: Head, name: str, note: WitnessNote) -> None:
        try:
            await self._store.note_witness(head.origin, name, utc_now(), note)
        # Boundary of a best-effort write inside an offer's task: the live view's row only,
        # whatever the store raised; it never stops offering.
        except Exception:
            log.exception("voucher.note_failed", extra={"voucher": name, "origin": head.origin})

    async def _witness_ahead(self, head: Head, name: str, error: TlogError) -> None:
        """A witness cosigned a larger size of the log than it has: the store lost part of
        the log (restored, failed over, and the journal too). Fence it."""
        size = error.evidence.get("witness_size")
        scope = next((a for a in await self._store.anchor_logs() if a.origin == head.origin), None)
        if head.origin == self.aggregate_origin:
            scope = AnchorLog(None, AGGREGATE_FLEET, head.origin)
        if isinstance(size, int) and scope is not None:
            self._continuity.witness_ahead(
                head.origin, scope.tenant, scope.fleet, name, size, head.size
            )

    async def _cosign(self, witness: Witness, head: Head) -> None:
        key = (head.origin, witness.name)

        async def proof_for(size: int) -> list[bytes]:
            try:
                return await self.consistency(head.origin, size, head.size)
            except KeyError:  # nodes the store lost: the aggregate taken up again by recover
                raise TlogError(
                    "consistency_unavailable",
                    f"the store lacks the nodes of a consistency proof from size {size} to"
                    f" {head.size}: the witness cosigned a checkpoint the store lost in a"
                    " restore before the last signed one (docs/continuity.md, 'Recover')",
                    {"witness": witness.name, "from_size": size, "size": head.size},
                ) from None

        cosignatures = await witness.client.cosign(
            head.note, self._witness_sizes.get(key, 0), proof_for
        )
        # One stored value per witness: its line for each of its keys (Ed25519, ML-DSA-44).
        lines = "".join(cosignature.line for cosignature in cosignatures)
        await self._store.add_cosignature(head.origin, head.size, witness.name, lines)
        self._witness_sizes[key] = head.size

    async def run(self, interval: float) -> None:
        """Seal every ``interval`` seconds while this process leads, and offer each log's
        newest checkpoint to the vouchers that have not vouched for it (in the background:
        a slow witness never delays sealing)."""
        # httpx reports every request at INFO; offers to vouchers are reported here instead,
        # once per change of state, so their request lines are left out while this runs.
        quiet = _OffersFilter(self._vouchers.values())
        logging.getLogger("httpx").addFilter(quiet)
        offers: set[asyncio.Task[None]] = set()
        leading = False
        trouble: str | None = None
        try:
            while True:
                try:
                    if await self._store.claim_sealing():
                        if not leading:
                            await self.load_offers()
                            leading = True
                        started = time.time()
                        for batch in await self.seal_pending():
                            metrics.SEALED_RECORDS.inc(batch.size - batch.first_index)
                        await self.seal_aggregate()
                        # Everything acknowledged before this round began is sealed now.
                        metrics.SEALED_THROUGH.set(started)
                        for head, name in self._offers.due():
                            task = asyncio.create_task(self._offer(head, name))
                            offers.add(task)
                            task.add_done_callback(offers.discard)
                    else:
                        leading = False
                    if trouble is not None:
                        log.info("sealer.recovered")
                        trouble = None
                # Outermost boundary of one sealing round of a background task
                # (web/background.py): a failed round is logged and sealing goes on.
                except Exception as error:
                    reason = f"{type(error).__name__}: {error}"
                    if reason != trouble:
                        log.exception(
                            "sealer.round_failed",
                            extra={"note": "logged again only when the failure changes"},
                        )
                        trouble = reason
                await asyncio.sleep(interval)
        finally:
            for task in list(offers):
                task.cancel()
            await asyncio.gather(*offers, return_exceptions=True)
            logging.getLogger("httpx").removeFilter(quiet)


class _OffersFilter(logging.Filter):
    """Drops httpx's request lines for the requests made to these witnesses and
    authorities (httpx logs ``'HTTP Request: %s %s ...'`` with the URL second)."""

    def __init__(self, vouchers: Iterable[Witness | TimestampAuthority]) -> None:
        super().__init__()
        self._urls = tuple(
            voucher.client.url if isinstance(voucher, Witness) else voucher.url
            for voucher in vouchers
        )

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not self._urls or not isinstance(args, tuple) or len(args) < 2:
            return True
        return not str(args[1]).startswith(self._urls)


def configured_witnesses(witnesses: Sequence[WitnessSetting]) -> list[Witness]:
    """Witnesses of the ``RECORDSEAL_WITNESSES`` setting, each with its client."""
    # Few attempts per offer (a size correction and one transient retry): the sealer itself
    # offers again with backoff.
    return [
        Witness(
            w.name,
            WitnessClient(w.url, [cosigner_verifier(vkey) for vkey in w.vkeys], attempts=3),
            w.logs,
        )
        for w in witnesses
    ]


def configured_authorities(authorities: Sequence[AuthoritySetting]) -> list[TimestampAuthority]:
    """Authorities of the ``RECORDSEAL_TIMESTAMP_AUTHORITIES`` setting."""
    return [TimestampAuthority(a.name, a.url, a.roots()) for a in authorities]

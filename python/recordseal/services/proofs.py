"""The proof part of a bundle (``seal``): built against the freshest witnessed checkpoint,
waited for, and refreshed for anyone holding a bundle (docs/bundle.md, "Which checkpoint",
"Refreshing a proof").

A record's proof uses the newest checkpoint of its log that carries the configured quorum of
receipts (``ledger.witnessed``), or the newest checkpoint when none does; ``previous`` is, as
ever, the latest checkpoint that does not yet include the record (the witnessed lower bound).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import msgspec

from recordseal.core import CommitError, verify_consistency
from recordseal.ledger.sealer import Sealer
from recordseal.ledger.witnessed import newest_witnessed, with_cosignatures
from recordseal.merkle import tree
from recordseal.services import bundles
from recordseal.services.errors import Inconsistent, Invalid, NotFound
from recordseal.storage.base import Store
from recordseal.storage.rows import CheckpointRow
from recordseal.tlog import TlogError, open_checkpoint
from recordseal.verify.bundle import Bundle, Seal
from recordseal.verify.errors import BundleError
from recordseal.verify.refresh import Consistency
from recordseal.verify.sealing import open_seal

#: Seconds between looks at the store while a request waits for its proof.
POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class Proof:
    """A record's ``seal`` (None while it is pending) and whether its checkpoint is
    witnessed (carries the quorum; True when no voucher is configured and it is sealed)."""

    seal: Seal | None
    witnessed: bool
    checkpoint: CheckpointRow | None = None
    index: int = 0  # the record's entry in its log

    @property
    def complete(self) -> bool:
        """Nothing better will come by waiting."""
        return self.seal is not None and self.witnessed


@dataclass(frozen=True, slots=True)
class Refreshed:
    bundle: Bundle
    consistency: Consistency | None  # None when the old bundle had no seal


class ProofService:
    def __init__(self, store: Store, sealer: Sealer, *, max_wait: float = 60.0) -> None:
        self._store = store
        self._sealer = sealer
        #: The longest a request may wait for a proof (the ``max_wait_seconds`` setting).
        self.max_wait = max_wait

    def check_wait(self, seconds: float) -> float:
        """``seconds`` when it is a wait this service grants; 422 ``wait_invalid`` else."""
        if not 0 <= seconds <= self.max_wait:
            raise Invalid(
                "wait_invalid", f"wait must be from 0 to {self.max_wait:g} seconds", "wait"
            )
        return seconds

    async def of_record(self, tenant: str, record_id: str, wait: float = 0.0) -> Proof:
        """The record's proof, waiting up to ``wait`` seconds for it to be sealed and its
        checkpoint witnessed (what there is when the time is up)."""
        deadline = time.monotonic() + wait
        pause = POLL_SECONDS
        while True:
            proof = await self._current(tenant, record_id)
            left = deadline - time.monotonic()
            if proof.complete or left <= 0:
                return proof
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, MAX_POLL_SECONDS)

    async def _current(self, tenant: str, record_id: str) -> Proof:
        found = await self._store.logs.record_seal(tenant, record_id)
        if found is None:
            return Proof(None, False)
        origin, index = found
        policy = self._sealer.policy
        logs = self._store.logs
        sealing = await newest_witnessed(logs, origin, index, self._sealer.tenant_policy)
        aggregate = None
        if sealing is None:
            through = await self._through_aggregate(origin, index)
            if through is not None:
                sealing, aggregate = through
        witnessed = sealing is not None or not policy.configured
        if sealing is None:
            sealing = await logs.newest_checkpoint(origin)
        if sealing is None:  # the seal and its checkpoint are one transaction
            raise RuntimeError(f"{origin}: no checkpoint covers sealed index {index}")
        seal = await self._seal(origin, index, sealing, aggregate)
        return Proof(seal, witnessed, sealing, index)

    async def _through_aggregate(
        self, origin: str, index: int
    ) -> tuple[CheckpointRow, tuple[CheckpointRow, int]] | None:
        """The newest checkpoint of ``origin`` holding entry ``index`` that a witnessed
        aggregate checkpoint includes, with that aggregate checkpoint and the checkpoint's
        position in the aggregate (docs/bundle.md, "Which checkpoint"); None when no
        aggregate checkpoint that includes the record carries the quorum."""
        policy, logs = self._sealer.aggregate_policy, self._store.logs
        if not policy.configured:
            return None
        first = await logs.aggregated(origin, index, None, newest=False)
        if first is None:
            return None
        aggregate_origin = self._sealer.aggregate_origin
        witnessed = await newest_witnessed(logs, aggregate_origin, first[1], policy)
        if witnessed is None:
            return None
        newest = await logs.aggregated(origin, index, witnessed.size, newest=True)
        assert newest is not None  # ``first`` is one
        sealing, position = newest
        return sealing, (witnessed, position)

    async def _seal(
        self,
        origin: str,
        index: int,
        sealing: CheckpointRow,
        aggregate: tuple[CheckpointRow, int] | None = None,
    ) -> Seal:
        previous, _ = await self._store.logs.checkpoints_around(origin, index)
        proof = await self._inclusion(origin, index, sealing.size)
        through = None
        if aggregate is not None:
            checkpoint, position = aggregate
            path = await self._inclusion(checkpoint.origin, position, checkpoint.size)
            cosigned = await self._cosigned(checkpoint.origin, checkpoint)
            through = bundles.tlog_proof_text(position, path, cosigned)
        return bundles.seal_of(
            origin,
            bundles.tlog_proof_text(index, proof, await self._cosigned(origin, sealing)),
            previous=await self._cosigned(origin, previous) if previous else None,
            previous_consistency=(
                await self._sealer.consistency(origin, previous.size, sealing.size)
                if previous
                else ()
            ),
            timestamps=await self._store.logs.timestamps(origin, sealing.size),
            aggregate=through,
        )

    async def _inclusion(self, origin: str, index: int, size: int) -> list[bytes]:
        """The RFC 6962 inclusion path of entry ``index`` in the log's tree of ``size``."""

        def inclusion(node: tree.NodeReader) -> list[bytes]:
            return tree.inclusion_path(index, size, node)

        nodes = await self._store.logs.log_nodes(origin, tree.nodes_needed(inclusion))
        return inclusion(lambda level, i: nodes[(level, i)])

    async def _cosigned(self, origin: str, checkpoint: CheckpointRow) -> str:
        """The signed checkpoint with every stored witness cosignature line added."""
        return await with_cosignatures(self._store.logs, origin, checkpoint.size, checkpoint.note)

    # --- refreshing a bundle held by anyone ----------------------------------------------

    async def refresh(self, bundle: Bundle, wait: float = 0.0) -> Refreshed:
        """The same disclosure with the newest witnessed proof of its record.

        The record is found by the bundle's signed header (tenant, record id, the exact
        header and signature), so neither a token nor the subject's key is needed: the proof
        is of the header alone, and an erased subject's records still refresh. The old
        seal, if any, must be of the record's log and entry, signed by its log key and
        consistent with the log (409 ``checkpoint_inconsistent`` otherwise: a fork, or not
        this service's log).
        """
        header = bundle.header
        row = await self._store.records.get_record(header.tenant, header.record_id)
        if (
            row is None
            or row.header != header.canonical()
            or row.signature.hex() != bundle.signature
        ):
            raise NotFound(
                "record_not_found",
                "this service holds no record with this signed header and signature",
                "header",
            )
        proof = await self.of_record(header.tenant, header.record_id, wait)
        consistency = None
        if bundle.seal is not None:
            if proof.seal is None or proof.checkpoint is None:
                raise Invalid(
                    "seal_invalid",
                    "the record is not sealed here, yet the bundle has a seal",
                    "seal",
                )
            consistency = await self._consistency(bundle.seal, proof)
        return Refreshed(msgspec.structs.replace(bundle, seal=proof.seal), consistency)

    async def _consistency(self, old: Seal, new: Proof) -> Consistency:
        assert new.seal is not None and new.checkpoint is not None
        origin, checkpoint = new.seal.log, new.checkpoint
        try:
            opened = open_seal(old)
        except BundleError as error:
            raise Invalid("seal_invalid", str(error), "seal.proof") from None
        if old.log != origin or opened.checkpoint.origin != origin:
            raise Invalid("seal_invalid", f"the seal is not of the record's log {origin}", "seal")
        if opened.proof.index != new.index:
            raise Invalid("seal_invalid", "the seal's index is not the record's entry", "seal")
        try:
            old_checkpoint, _ = open_checkpoint(
                opened.proof.checkpoint, [s.verifier() for s in self._sealer.every(origin)]
            )
        except TlogError as error:
            message = f"the seal's checkpoint is not signed by the log's key ({error.code})"
            raise Invalid("seal_invalid", message, "seal.proof") from None
        small, large = sorted(
            [(old_checkpoint.size, old_checkpoint.root_hash), (checkpoint.size, checkpoint.root)]
        )
        if large[0] > checkpoint.size:
            newest = await self._store.logs.newest_checkpoint(origin)
            if newest is None or large[0] > newest.size:
                raise Inconsistent(
                    "checkpoint_inconsistent",
                    f"the seal's checkpoint (size {large[0]}) is larger than this log",
                    "seal.proof",
                )
        proof = await self._sealer.consistency(origin, small[0], large[0])
        try:
            verify_consistency(small[0], large[0], small[1], large[1], proof)
        except CommitError:
            raise Inconsistent(
                "checkpoint_inconsistent",
                f"the seal's checkpoint (size {old_checkpoint.size}) is not consistent with this"
                f" log's checkpoint of size {checkpoint.size}",
                "seal.proof",
            ) from None
        return Consistency(small[0], large[0], tuple(proof))

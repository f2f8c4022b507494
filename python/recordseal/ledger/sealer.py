"""The sealer: seals pending chain leaves into per-(tenant, fleet) logs, and gets witnesses
to cosign each new checkpoint.

One process at a time seals: the one whose ``logs.claim_sealing()`` holds (a lock file next to
the SQLite database, a session advisory lock on PostgreSQL; either is released when its holder
dies, so another process takes over). Sealing is one transaction per log (storage ``seal``,
which also holds the log's row on PostgreSQL): a crash seals a batch entirely or not at all, and a
restart picks the same pending leaves up again, so no leaf is sealed twice or skipped.
Witnesses are asked after the commit; a witness that is down delays nothing but its own
cosignature, and it is asked again (for the newest checkpoint) on the next round.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509

from recordseal.audit import FleetAudit, FleetScope
from recordseal.clock import utc_now
from recordseal.identifiers import DEFAULT_FLEET
from recordseal.merkle import tree
from recordseal.merkle.genesis import log_origin, tenant_genesis
from recordseal.storage.logs import LogStore
from recordseal.storage.rows import SEAL_LIMIT, SealedBatch, SealRequest
from recordseal.tlog import Checkpoint, Ed25519Signer, TlogError, sign_checkpoint
from recordseal.tlog.client import WitnessClient
from recordseal.tlog.tsa_client import timestamp_root

log = logging.getLogger("recordseal.sealer")


@dataclass(frozen=True, slots=True)
class Witness:
    name: str
    client: WitnessClient


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
        log_key_seed: bytes,
        service_origin: str,
        witnesses: Sequence[Witness] = (),
        authorities: Sequence[TimestampAuthority] = (),
        audit: FleetAudit | None = None,
        seal_limit: int = SEAL_LIMIT,
    ) -> None:
        """``seal_limit``: pending leaves per seal transaction (a larger backlog is sealed in
        several, one checkpoint each)."""
        self._store = store
        self._seal_limit = seal_limit
        self._audit = audit or FleetAudit()
        self._seed = log_key_seed
        self._service = service_origin
        self._witnesses = list(witnesses)
        self._authorities = list(authorities)
        # (origin, witness or authority) -> the size it last vouched for
        self._witnessed: dict[tuple[str, str], int] = {}

    def signer(self, origin: str) -> Ed25519Signer:
        """The log key under the log's name (C2SP: the key name is the origin)."""
        return Ed25519Signer.from_seed(origin, self._seed)

    def origin(self, tenant: str | None, fleet: str = DEFAULT_FLEET) -> str:
        return log_origin(self._service, tenant, fleet)

    async def seal_pending(self) -> list[SealedBatch]:
        """Seal every log that has pending leaves; return the new checkpoints."""
        sealed = []
        for tenant, fleet in await self._store.unsealed_logs():
            sealed += await self.seal_log(tenant, fleet)
        return sealed

    async def open_fleet_logs(self, scopes: Sequence[FleetScope]) -> list[SealedBatch]:
        """Start the log of every fleet from its genesis root (spec panel 2.5): a log that
        does not exist yet is created with leaf 0 and its first anchor (size 1)."""
        sealed = []
        for scope in scopes:
            sealed += await self.seal_log(scope.tenant_id, scope.fleet_id)
        return sealed

    async def seal_log(self, tenant: str | None, fleet: str) -> list[SealedBatch]:
        """Seal the pending leaves of one log (creating it if new); audit each new anchor
        under the fleet's tenant scope."""
        sealed = []
        origin = self.origin(tenant, fleet)
        signer = self.signer(origin)

        def sign(size: int, root: bytes) -> str:
            return sign_checkpoint(Checkpoint(origin, size, root), signer)

        while True:  # a large backlog goes in several bounded transactions
            genesis = tenant_genesis(tenant, fleet)
            batch = await self._store.seal(
                SealRequest(tenant, fleet, origin, genesis, sign, utc_now(), self._seal_limit)
            )
            if batch is None:
                break
            sealed.append(batch)
            self._audit.emit(
                FleetScope(fleet, tenant),
                "anchor.sealed",
                origin=origin,
                size=batch.size,
                root=batch.root.hex(),
            )
            if batch.size - batch.first_index < self._seal_limit:
                break
        return sealed

    async def consistency(self, origin: str, old_size: int, new_size: int) -> list[bytes]:
        def compute(node: tree.NodeReader) -> list[bytes]:
            return tree.consistency_path(old_size, new_size, node)

        nodes = await self._store.log_nodes(origin, tree.nodes_needed(compute))
        return compute(lambda level, index: nodes[(level, index)])

    async def witness(self, batch: SealedBatch) -> None:
        """Ask every witness to cosign; failures are logged and retried on the next round."""
        for witness in self._witnesses:
            key = (batch.origin, witness.name)
            old = self._witnessed.get(key, 0)
            if old == batch.size:
                continue

            async def proof_for(size: int, batch: SealedBatch = batch) -> list[bytes]:
                return await self.consistency(batch.origin, size, batch.size)

            try:
                cosignature = await witness.client.add_checkpoint(batch.note, old, proof_for)
            except (TlogError, OSError) as error:
                log.warning(
                    "witness %s did not cosign %s@%d: %s",
                    witness.name,
                    batch.origin,
                    batch.size,
                    getattr(error, "code", type(error).__name__),
                )
                continue
            await self._store.add_cosignature(
                batch.origin, batch.size, witness.name, cosignature.line
            )
            self._witnessed[key] = batch.size
        for authority in self._authorities:
            key = (batch.origin, authority.name)
            if self._witnessed.get(key) == batch.size:
                continue
            try:
                stamp = await timestamp_root(authority.url, batch.root, authority.roots)
            except (TlogError, OSError) as error:
                log.warning(
                    "time-stamping authority %s did not stamp %s@%d: %s",
                    authority.name,
                    batch.origin,
                    batch.size,
                    getattr(error, "code", type(error).__name__),
                )
                continue
            await self._store.add_timestamp(batch.origin, batch.size, authority.name, stamp.token)
            self._witnessed[key] = batch.size

    async def run(self, interval: float) -> None:
        """Seal and witness every ``interval`` seconds while this process leads."""
        latest: dict[str, SealedBatch] = {}
        while True:
            try:
                if await self._store.claim_sealing():
                    for batch in await self.seal_pending():
                        latest[batch.origin] = batch
                    for origin, batch in list(latest.items()):
                        await self.witness(batch)
                        vouchers = [w.name for w in self._witnesses]
                        vouchers += [a.name for a in self._authorities]
                        if all(self._witnessed.get((origin, v)) == batch.size for v in vouchers):
                            del latest[origin]
            except Exception:  # never let one bad round stop sealing
                log.exception("sealing round failed")
            await asyncio.sleep(interval)


def configured_witnesses(config: str) -> list[Witness]:
    """Witnesses from ``[{"name", "url", "vkey"}]`` (the ``RECORDSEAL_WITNESSES`` setting)."""
    from recordseal.tlog import CosignatureVerifier

    return [
        Witness(
            item["name"], WitnessClient(item["url"], CosignatureVerifier.from_vkey(item["vkey"]))
        )
        for item in json.loads(config)
    ]


def configured_authorities(config: str) -> list[TimestampAuthority]:
    """Authorities from ``[{"name", "url", "roots_pem"}]``."""
    return [
        TimestampAuthority(
            item["name"], item["url"], x509.load_pem_x509_certificates(item["roots_pem"].encode())
        )
        for item in json.loads(config)
    ]

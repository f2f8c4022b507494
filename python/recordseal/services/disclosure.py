"""Disclosure bundles (docs/bundle.md): chosen fields of one record, with every proof.

Nothing about a record's fields is stored outside its encrypted payload: the leaves are
recomputed from the decrypted payload (commitment is deterministic), so an erased subject's
records can no longer be disclosed, while their headers still prove the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from recordseal.core import commit_record
from recordseal.services import bundles, path_hints
from recordseal.services.errors import Invalid
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService, header_members
from recordseal.storage.base import Store
from recordseal.storage.rows import RecordRow
from recordseal.verify.bundle import Bundle, Coverage


@dataclass(frozen=True, slots=True)
class Window:
    from_seq: int
    to_seq: int


class DisclosureService:
    def __init__(self, store: Store, records: RecordService, proofs: ProofService) -> None:
        self._store = store
        self._records = records
        self._proofs = proofs

    async def disclose(
        self,
        tenant: str,
        record_id: str,
        wanted: Sequence[str],
        window: Window | None,
        *,
        wait: float = 0.0,
    ) -> Bundle:
        """A bundle of the ``wanted`` fields; with ``wait``, after waiting up to that many
        seconds for the record to be sealed and its checkpoint witnessed."""
        row, payload = await self._records.payload(tenant, record_id)
        header = header_members(row.header)
        stream = await self._records.stream(tenant, row.stream)
        keys = await self._records.keys_for(tenant, row.subject_ref)
        committed = commit_record(
            payload, stream.declarations, stream.strict, keys.salt_key, record_id
        )
        if committed.root.hex() != header["root"]:
            raise RuntimeError("stored payload does not reproduce the signed root")
        try:
            fields = bundles.field_disclosures(
                committed, bundles.leaf_values(orjson.loads(payload)), wanted
            )
        except bundles.UnknownField as unknown:
            known = [leaf.path for leaf in committed.leaves]
            detail = path_hints.unknown_field(unknown.path, known)
            raise Invalid("unknown_field", detail, unknown.path) from None
        except bundles.DuplicateField as repeated:
            raise Invalid(
                "field_repeated", "each field may be asked for once", repeated.path
            ) from None
        coverage = await self._coverage(tenant, row, window) if window else None
        proof = await self._proofs.of_record(tenant, record_id, wait)
        return bundles.build_bundle(header, row.signature, fields, proof.seal, coverage)

    async def _coverage(self, tenant: str, row: RecordRow, window: Window) -> Coverage:
        if not 1 <= window.from_seq <= row.seq <= window.to_seq:
            raise Invalid(
                "coverage_invalid",
                "coverage must be a window from_seq <= the record's seq <= to_seq, from 1",
                "coverage",
            )
        rows = await self._store.records.stream_records(tenant, row.stream)
        if window.to_seq > rows[-1].seq:
            raise Invalid("coverage_invalid", "coverage reaches past the stream's end", "coverage")
        # By seq, not position: after a declared gap (docs/records.md, "Gap declarations") the
        # stream has no record at the numbers it declares lost.
        return bundles.coverage_of(
            window.from_seq,
            window.to_seq,
            [
                (header_members(r.header), r.signature)
                for r in rows
                if window.from_seq <= r.seq <= window.to_seq
            ],
        )

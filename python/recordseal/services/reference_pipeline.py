"""The reference of the ingest pipeline (``services/pipeline.py``): the three calls composed of
the Python pieces, one record at a time: the reference core (:mod:`recordseal.core.reference`)
and the reference read (:func:`recordseal.services.reading.read_request`), ``cryptography``'s
AES-GCM and Ed25519, and :mod:`recordseal.chain`.

It is the oracle the native pipeline is tested against (``tests/service/test_pipeline.py``,
``tests/service/test_ingest_oracle.py``), and what a service signs with where the native
extension is not built (:func:`recordseal.services.header_keys.pipeline_for`). Both give the
same bytes, except the payload nonces and the record ids made for read records, which are
random.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from recordseal import chain
from recordseal.clock import new_record_id
from recordseal.core import reference
from recordseal.core.errors import CommitError
from recordseal.crypto.signing import HEADER_CONTEXT, key_id_of
from recordseal.crypto.vault import SubjectKeys
from recordseal.services import reading
from recordseal.services.pipeline import Prepared, ReadInput, RecordInput, Signed
from recordseal.services.reading import RecordRead, ReferenceRead


@dataclass(frozen=True, slots=True)
class ReferencePrepared:
    """A record prepared by :class:`ReferencePipeline`, with the header members it needs."""

    record_id: str
    root: bytes
    field_count: int
    sealed_payload: bytes
    tenant: str
    stream: str
    record_type: str
    occurred_at: str
    subject_ref: str


class ReferencePipeline:
    """The pipeline composed of the Python pieces, one record at a time: the reference
    core, ``cryptography``'s AES-GCM and Ed25519, and :mod:`recordseal.chain`."""

    __slots__ = ("_private", "key_id", "public_key")

    def __init__(self, seed: bytes) -> None:
        self._private = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_key = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.key_id = key_id_of(self.public_key)

    def read(
        self, body: bytes, idempotency_key: str | None, batch: bool
    ) -> list[RecordRead | CommitError]:
        return list(reading.read_request(body, idempotency_key, batch))

    def prepare(self, items: Sequence[RecordInput | ReadInput]) -> list[Prepared | CommitError]:
        results: list[Prepared | CommitError] = []
        for given in items:
            item = given if isinstance(given, RecordInput) else _text_input(given)
            try:
                committed = reference.commit_record(
                    item.payload, item.declarations, item.strict, item.salt_key, item.record_id
                )
            except CommitError as refusal:
                results.append(refusal)
                continue
            keys = SubjectKeys(item.salt_key, item.payload_key)
            results.append(
                ReferencePrepared(
                    record_id=item.record_id,
                    root=committed.root,
                    field_count=committed.field_count,
                    sealed_payload=keys.encrypt_payload(item.record_id, committed.canonical),
                    tenant=item.tenant,
                    stream=item.stream,
                    record_type=item.record_type,
                    occurred_at=item.occurred_at,
                    subject_ref=item.subject_ref,
                )
            )
        return results

    def sign(
        self,
        records: Sequence[Prepared],
        slots: Sequence[int],
        heads: list[tuple[int, bytes]],
        ingested_at: str,
    ) -> list[Signed]:
        signed = []
        for record, slot in zip(records, slots, strict=True):
            if not isinstance(record, ReferencePrepared):
                raise TypeError("ReferencePipeline signs the records it prepared")
            seq, prev = heads[slot]
            header = chain.canonical_header(
                chain.build_header(
                    tenant=record.tenant,
                    stream=record.stream,
                    seq=seq,
                    record_id=record.record_id,
                    record_type=record.record_type,
                    occurred_at=record.occurred_at,
                    subject_ref=record.subject_ref,
                    root=record.root,
                    field_count=record.field_count,
                    prev=prev,
                    key_id=self.key_id,
                    ingested_at=ingested_at,
                )
            )
            leaf = chain.chain_leaf(header)
            signed.append(Signed(seq, header, self._private.sign(HEADER_CONTEXT + header), leaf))
            heads[slot] = (seq + 1, leaf)
        return signed


def _text_input(item: ReadInput) -> RecordInput:
    """The ``RecordInput`` of a reference read (its payload's text as sent), with a new
    record id."""
    read, tenant, subject_ref, declarations, strict, salt_key, payload_key = item
    if not isinstance(read, ReferenceRead):
        raise TypeError("ReferencePipeline prepares the records it read")
    return RecordInput(
        tenant,
        read.stream,
        read.record_type,
        read.occurred_at,
        subject_ref,
        new_record_id(),
        read.payload,
        declarations,
        strict,
        salt_key,
        payload_key,
    )

"""The per-record work of ingest, in three calls (docs/records.md, "The ingest pipeline").

``read`` reads a request's body once into its records (``services/reading.py``); ``prepare``
commits each payload and seals its canonical bytes under the subject's payload key; ``sign``
gives each accepted record its place in its stream, builds its RFC 8785 header, signs it and
hashes it into the record's chain leaf. :class:`NativePipeline` does each call in the Rust
core (``prepare`` and ``sign`` with the interpreter released, on every core);
:class:`ReferencePipeline` composes the Python pieces (the reference core, msgspec,
``cryptography``, :mod:`recordseal.chain`) and is the oracle the native one is tested against.
Both give the same bytes, except the payload nonces and the record ids made for read records,
which are random.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from recordseal import chain
from recordseal.clock import new_record_id
from recordseal.core import reference
from recordseal.core.errors import CommitError
from recordseal.crypto.signing import HEADER_CONTEXT, HeaderSigner, key_id_of
from recordseal.crypto.vault import SubjectKeys
from recordseal.services import reading
from recordseal.services.reading import RecordRead, ReferenceRead

if TYPE_CHECKING:
    from recordseal._native import ModuleKey, PreparedRecord


class RecordInput(NamedTuple):
    """One record to prepare. A tuple, so that the native core reads it cheaply."""

    tenant: str
    stream: str
    record_type: str
    #: Already normalised to UTC by the caller: the header holds it as given.
    occurred_at: str
    subject_ref: str
    record_id: str
    #: The payload's JSON text as received.
    payload: bytes
    declarations: Mapping[str, str] | None
    strict: bool
    #: The subject's keys (``SubjectKeys.salt_key`` and ``.payload_key``), 32 bytes each.
    salt_key: bytes
    payload_key: bytes


#: One record to prepare from a request read (``Pipeline.read``): ``(read, tenant,
#: subject_ref, declarations, strict, salt_key, payload_key)``. Its stream, record type and
#: UTC ``occurred_at`` are the read's; its record id is made by ``prepare``. A plain tuple, the
#: cheapest for Python to build and for the native core to read.
ReadInput = tuple[RecordRead, str, str, Mapping[str, str] | None, bool, bytes, bytes]


class Prepared(Protocol):
    """An accepted record, committed and sealed, waiting for its place in the stream."""

    @property
    def record_id(self) -> str: ...
    @property
    def root(self) -> bytes: ...
    @property
    def field_count(self) -> int: ...
    @property
    def sealed_payload(self) -> bytes:
        """``nonce(12) ‖ AES-256-GCM(canonical payload) ‖ tag``; the record id is the AAD
        (``SubjectKeys.decrypt_payload`` opens it)."""
        ...


class Signed(NamedTuple):
    """A record placed in its stream: its seq, canonical header, signature and chain leaf."""

    seq: int
    header: bytes
    signature: bytes
    chain_leaf: bytes


class Pipeline(Protocol):
    key_id: str
    public_key: bytes

    def read(
        self, body: bytes, idempotency_key: str | None, batch: bool
    ) -> list[RecordRead | CommitError]:
        """Read a request's body (``services/reading.py``): a record or the refusal of each
        item; a fault of the whole request raises its CommitError."""
        ...

    def prepare(self, items: Sequence[RecordInput | ReadInput]) -> list[Prepared | CommitError]:
        """Commit and seal each item (the reads of a ``ReadInput`` from this pipeline's
        ``read``); a refused payload gives its CommitError in its place (never raised)."""
        ...

    def sign(
        self,
        records: Sequence[Prepared],
        slots: Sequence[int],
        heads: list[tuple[int, bytes]],
        ingested_at: str,
    ) -> list[Signed]:
        """Place, sign and chain ``records`` in order (records from this pipeline's
        ``prepare``). Record ``i`` takes ``heads[slots[i]]``, its stream's
        ``(next_seq, prev chain leaf)``, and moves it on; ``heads`` ends as the final heads."""
        ...


class NativePipeline:
    """The pipeline in the Rust core: two calls per batch, each with the interpreter
    released and the batch spread over rayon's pool (``RAYON_NUM_THREADS`` threads, by
    default one per core)."""

    __slots__ = ("_prepare", "_read", "_signer", "key_id", "public_key")

    def __init__(self, key: bytes | ModuleKey) -> None:
        """``key``: the 32-byte Ed25519 seed of the header-signing key, or the key in a
        hardware module (``recordseal.crypto.hsm``), which then signs every header."""
        from recordseal._native import Ed25519Signer, prepare_records, read_request

        self._signer = Ed25519Signer(key) if isinstance(key, bytes) else key
        self._prepare = prepare_records
        self._read = read_request
        self.public_key = self._signer.public_key
        self.key_id = key_id_of(self.public_key)

    def read(
        self, body: bytes, idempotency_key: str | None, batch: bool
    ) -> list[RecordRead | CommitError]:
        return cast("list[RecordRead | CommitError]", self._read(body, idempotency_key, batch))

    def prepare(self, items: Sequence[RecordInput | ReadInput]) -> list[Prepared | CommitError]:
        return cast("list[Prepared | CommitError]", self._prepare(items))  # type: ignore[arg-type]

    def sign(
        self,
        records: Sequence[Prepared],
        slots: Sequence[int],
        heads: list[tuple[int, bytes]],
        ingested_at: str,
    ) -> list[Signed]:
        signed = self._signer.sign_headers(
            self.key_id, ingested_at, cast("Sequence[PreparedRecord]", records), slots, heads
        )
        return list(map(Signed._make, signed))


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


def pipeline_for(signer: HeaderSigner) -> Pipeline:
    """The pipeline that signs with ``signer``'s key: the native one when the extension is
    built (the only one for a key in a hardware module), else the reference one."""
    if signer.native is not None:
        return NativePipeline(signer.native)
    if signer.seed is None:
        raise RuntimeError("a header key in a hardware module needs the native extension")
    return ReferencePipeline(signer.seed)


def pipeline_from_seed(seed: bytes) -> Pipeline:
    """The native pipeline when the extension is built, else the reference one."""
    try:
        return NativePipeline(seed)
    except ModuleNotFoundError as missing:
        # Only an absent extension falls back, as in recordseal.core.
        if missing.name != "recordseal._native":
            raise
        return ReferencePipeline(seed)

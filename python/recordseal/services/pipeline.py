"""The per-record work of ingest, in three calls (docs/records.md, "The ingest pipeline").

``read`` reads a request's body once into its records (``services/reading.py``); ``prepare``
commits each payload and seals its canonical bytes under the subject's payload key; ``sign``
gives each accepted record its place in its stream, builds its RFC 8785 header, signs it and
hashes it into the record's chain leaf. :class:`Pipeline` is the contract of the three calls;
:class:`NativePipeline` does each call in the Rust core (``prepare`` and ``sign`` with the
interpreter released, on every core). Its reference, composed of the Python pieces, is
:class:`recordseal.services.reference_pipeline.ReferencePipeline`; which one a header key
signs with is chosen in :func:`recordseal.services.header_keys.pipeline_for`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from recordseal.core.errors import CommitError
from recordseal.crypto.signing import key_id_of
from recordseal.services.reading import RecordRead

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

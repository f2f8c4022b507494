"""The record service: streams, ingest, record views, payloads and subject erasure."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, assert_never, cast

import orjson

from recordseal import chain
from recordseal.clock import new_record_id, new_subject_ref, utc_now
from recordseal.core import CommitError, canonicalize, encode_value, validate_declarations
from recordseal.crypto.hsm import ModuleFailure
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper, SubjectKeys
from recordseal.fleet.manifest import FleetManifest
from recordseal.identifiers import DEFAULT_FLEET
from recordseal.ledger.continuity import STORE_ROLLED_BACK, Continuity, Fence
from recordseal.services import path_hints
from recordseal.services.errors import (
    AlreadyExists,
    Gone,
    Invalid,
    NotFound,
    ServiceError,
    TooLarge,
    Unavailable,
    tenant_inactive,
)
from recordseal.services.header_keys import HeaderKeys
from recordseal.services.pipeline import Pipeline, Prepared, RecordInput
from recordseal.services.streams import check_stream_fleet
from recordseal.services.subject_cache import SubjectKeyCache
from recordseal.services.tenant_states import TenantStates
from recordseal.storage.base import Store
from recordseal.storage.journal import Head
from recordseal.storage.records import (
    Deferred,
    Fenced,
    KeyReused,
    Replayed,
    SubjectErased,
    SubjectRace,
)
from recordseal.storage.requests import Append, IdempotencyClaim, NewRecord, SubjectClaim
from recordseal.storage.rows import Erasure, RecordRow, StreamRow, SubjectRow

log = logging.getLogger("recordseal.keys")

STREAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_RECORD_TYPE = 128
MAX_SUBJECT_ID = 256
#: Records of one ``POST /v1/records:batch``.
MAX_BATCH = 1000
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._:-]{1,255}")


@dataclass(frozen=True, slots=True)
class RecordIn:
    stream: str
    record_type: str
    occurred_at: str
    subject_id: str
    payload: bytes  # the payload's JSON text as received


@dataclass(frozen=True, slots=True)
class Ingested:
    record_id: str
    stream: str
    seq: int
    root: bytes
    chain_leaf: bytes
    header: bytes
    signature: bytes
    key_id: str
    field_count: int
    #: True when an idempotency key named an earlier request: this is that request's record.
    replayed: bool = False

    @classmethod
    def of(cls, row: RecordRow, replayed: bool) -> Ingested:
        header = header_members(row.header)
        return cls(
            record_id=row.record_id,
            stream=row.stream,
            seq=row.seq,
            root=bytes.fromhex(header["root"]),
            chain_leaf=row.chain_leaf,
            header=row.header,
            signature=row.signature,
            key_id=header["key_id"],
            field_count=header["field_count"],
            replayed=replayed,
        )


@dataclass(frozen=True, slots=True)
class Retry:
    """An ``Idempotency-Key`` with the hash of the request it came with (of one batch item)."""

    key: str
    request_hash: bytes

    @classmethod
    def of(cls, key: str | None, request: bytes, item: int | None = None) -> Retry | None:
        """The key of a request (or of item ``item`` of a batch); None without a key."""
        if key is None:
            return None
        if not IDEMPOTENCY_KEY.fullmatch(key):
            raise Invalid(
                "idempotency_key_invalid",
                "an Idempotency-Key is 1 to 255 letters, digits, '.', '_', ':' or '-'",
                "Idempotency-Key",
            )
        # Items of a batch are keyed apart from single posts ('#' never occurs in a key).
        return cls(key if item is None else f"{key}#{item}", hashlib.sha256(request).digest())


@dataclass(frozen=True, slots=True)
class _BatchSubjects:
    """What a batch's items refer to, looked up once for the batch: its streams by name (or
    the refusal of a name that is none), its subject indexes by subject id, and its stored
    subjects by index (those not cached when the batch began)."""

    streams: dict[str, StreamRow | NotFound]
    indexes: dict[str, bytes]
    stored: dict[bytes, SubjectRow]


@dataclass(frozen=True, slots=True)
class _Staged:
    """A record checked and given its subject and id, waiting for the pipeline."""

    position: int  # in the call's items
    stream: StreamRow
    subject: SubjectClaim
    retry: Retry | None
    input: RecordInput


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _has_control_character(text: str) -> bool:
    """True if ``text`` has a C0 or C1 control character or DEL (Unicode category Cc)."""
    return _CONTROL.search(text) is not None


def _check_label(value: str, field: str, limit: int) -> None:
    if not value or len(value) > limit or _has_control_character(value):
        raise Invalid(
            f"{field}_invalid",
            f"{field} must be 1 to {limit} characters without control characters",
            field,
        )


def _refusal(error: CommitError) -> Invalid | TooLarge:
    if error.code == "payload_too_large":
        return TooLarge(error.code, str(error), error.field)
    return Invalid(error.code, str(error), error.field)


class RecordService:
    """Everything the record API does, scoped to the tenant of the caller's token."""

    def __init__(
        self,
        store: Store,
        wrapper: KeyWrapper,
        signer: HeaderSigner | HeaderKeys,
        manifest: Callable[[], FleetManifest] = FleetManifest,
        pipeline: Pipeline | None = None,
        *,
        continuity: Continuity,
        tenant_states: TenantStates | None = None,
    ) -> None:
        """``signer``: the header keys as the store names them (``HeaderKeys``, re-read so a
        rotation reaches this process), or one fixed key; ``manifest`` answers the fleet
        manifest in force (which fleets a stream may join); ``pipeline`` does the per-record
        cryptography of a batch under a fixed key (by default the native one);
        ``continuity`` journals what is signed and erased, and fences streams the store lost
        (docs/continuity.md); ``tenant_states`` says which tenants are frozen read-only (no
        new stream or record; by default read from the store's tenant rows)."""
        self._continuity = continuity
        self._tenant_states = tenant_states or TenantStates(store.hierarchy)
        self._header_keys = (
            signer if isinstance(signer, HeaderKeys) else HeaderKeys.fixed(signer, pipeline)
        )
        self._manifest = manifest
        self._store = store
        self._wrapper = wrapper
        # One bound method, so the PostgreSQL writer sees every call's builder as the same.
        self._builder = self._build
        # Streams never change after creation, so a process may keep them.
        self._streams: dict[tuple[str, str], StreamRow] = {}
        self._subjects = SubjectKeyCache()

    # --- streams ------------------------------------------------------------------------

    async def create_stream(
        self,
        tenant: str,
        name: str,
        declarations: dict[str, str] | None,
        strict: bool,
        fleet: str = DEFAULT_FLEET,
    ) -> StreamRow:
        if not STREAM_NAME.fullmatch(name):
            raise Invalid(
                "stream_name_invalid",
                "a stream name is 1 to 128 characters of letters, digits, '.', '_', ':' and"
                " '-', starting with a letter or digit",
                "name",
            )
        declarations = declarations or {}
        try:
            validate_declarations(declarations)
        except CommitError as error:
            hint = (
                path_hints.declaration(error.field) if error.code == "declaration_invalid" else None
            )
            raise Invalid(
                error.code, f"{error}; {hint}" if hint else str(error), error.field
            ) from None
        if strict and not declarations:
            raise Invalid(
                "strict_without_declarations",
                "a strict stream needs declarations: it would refuse every field",
                "strict",
            )
        check_stream_fleet(self._manifest(), tenant, fleet)
        await self._tenant_states.check_writable(tenant, "no new streams")
        fence = self._continuity.stream_fence(tenant, name)
        if fence is not None:
            raise _fenced(fence, "name")
        created = await self._store.records.create_stream(
            tenant,
            name,
            declarations,
            strict,
            chain.stream_genesis(tenant, name),
            utc_now(),
            fleet=fleet,
        )
        if created is None:
            raise AlreadyExists("stream_exists", "a stream with this name exists", "name")
        return created

    async def stream(self, tenant: str, name: str) -> StreamRow:
        return await self._stream(tenant, name)

    async def current_stream(self, tenant: str, name: str) -> StreamRow:
        """The stream as stored now: its ``next_seq`` is current (:meth:`stream` may keep an
        earlier copy, whose other members never change)."""
        stream = await self._store.records.get_stream(tenant, name)
        if stream is None:
            raise NotFound("stream_not_found", "no stream of this name", "name")
        return stream

    async def keys_for(self, tenant: str, subject_ref: str) -> SubjectKeys:
        """The keys of a live subject (Gone once erased)."""
        subject = await self._store.records.get_subject_by_ref(tenant, subject_ref)
        if subject is None or subject.wrapped_key is None:
            raise Gone("subject_erased", "the subject was erased", None)
        return self._keys(subject)

    async def _stream(self, tenant: str, name: str) -> StreamRow:
        stream = self._streams.get((tenant, name))
        if stream is None:
            stream = await self._store.records.get_stream(tenant, name)
            if stream is None:
                raise NotFound("stream_not_found", "no stream of this name", "stream")
            self._streams[(tenant, name)] = stream
        return stream

    # --- subjects -----------------------------------------------------------------------

    def _subject(
        self,
        tenant: str,
        subject_id: str,
        fresh: dict[bytes, tuple[SubjectClaim, SubjectKeys]],
        batch: _BatchSubjects,
    ) -> tuple[SubjectClaim, SubjectKeys]:
        """The subject's claim and keys; a new subject gets a key that is stored only with
        its first record, so a refused post leaves nothing behind. ``fresh`` holds the new
        subjects of one batch, so a subject new in it gets one key however often it occurs."""
        index = batch.indexes[subject_id]
        cached = self._subjects.get(tenant, index) or fresh.get(index)
        if cached is not None:
            return cached
        subject = batch.stored.get(index)
        if subject is None:
            subject_ref = new_subject_ref()
            key, wrapped = self._wrapper.new_subject_key(tenant, subject_ref)
            fresh[index] = (SubjectClaim(index, subject_ref, wrapped), SubjectKeys.derive(key))
            return fresh[index]
        if subject.wrapped_key is None:
            raise Gone("subject_erased", "the subject was erased", "subject_id")
        claim, keys = SubjectClaim(index, subject.subject_ref, None), self._keys(subject)
        self._subjects.put(tenant, index, claim, keys)
        return claim, keys

    async def _batch_subjects(
        self, tenant: str, items: Sequence[RecordIn | ServiceError]
    ) -> _BatchSubjects:
        """The streams and subject indexes of a batch's items, and the stored subjects among
        those this process has not cached: one query instead of one per item."""
        streams: dict[str, StreamRow | NotFound] = {}
        indexes: dict[str, bytes] = {}
        wanted = []
        for item in items:
            if not isinstance(item, RecordIn):
                continue
            if item.stream not in streams:
                try:
                    streams[item.stream] = await self._stream(tenant, item.stream)
                except NotFound as unknown:
                    streams[item.stream] = unknown
            if item.subject_id not in indexes:
                index = indexes[item.subject_id] = self._wrapper.subject_index(
                    tenant, item.subject_id
                )
                if self._subjects.get(tenant, index) is None:
                    wanted.append(index)
        stored = await self._store.records.get_subjects(tenant, wanted) if wanted else {}
        return _BatchSubjects(streams, indexes, stored)

    def _keys(self, subject: SubjectRow) -> SubjectKeys:
        assert subject.wrapped_key is not None
        key = self._wrapper.unwrap(subject.tenant, subject.subject_ref, subject.wrapped_key)
        return SubjectKeys.derive(key)

    # --- records ------------------------------------------------------------------------

    async def ingest(self, tenant: str, record: RecordIn, retry: Retry | None = None) -> Ingested:
        """Validate, commit, encrypt and append one record; nothing is stored on refusal.

        With an idempotency key, a request seen before returns its first record (and stores
        nothing); the same key with another request is refused. The same pipeline as a
        batch's, with a batch of one.
        """
        (result,) = await self.ingest_batch(tenant, [record], [retry])
        if isinstance(result, ServiceError):
            raise result
        return result

    async def ingest_batch(
        self, tenant: str, items: list[RecordIn | ServiceError], retries: list[Retry | None]
    ) -> list[Ingested | ServiceError]:
        """Ingest each item on its own; the results (a record or a refusal) in order.

        Items are checked one after the other (a new subject that appears twice gets one
        key), committed and encrypted by one pipeline call, then appended in one store call,
        in order: they share a transaction, and the items of one stream get increasing
        sequence numbers.

        An item whose new subject another writer created first (and the later items of its
        stream) is prepared again under the stored subject's key, with the other such items
        in one more call, in order: up to ``RACE_RETRIES`` times, then refused as
        ``subject_busy``.
        """
        results = await self._ingest(tenant, items, retries)
        for _ in range(RACE_RETRIES):
            raced = [n for n, result in enumerate(results) if isinstance(result, _Race)]
            if not raced:
                break
            again = await self._ingest(
                tenant, [items[n] for n in raced], [retries[n] for n in raced]
            )
            for n, result in zip(raced, again, strict=True):
                results[n] = result
        return [_subject_busy() if isinstance(r, _Race) else r for r in results]

    async def _ingest(
        self, tenant: str, items: Sequence[RecordIn | ServiceError], retries: Sequence[Retry | None]
    ) -> list[Ingested | ServiceError | _Race]:
        """Replays, checks, one pipeline call, one append: each item's result in order."""
        await self._header_keys.current()  # a rotation reaches this process here
        keys = [retry.key for retry in retries if retry is not None]
        known = await self._store.records.idempotent_records(tenant, keys) if keys else {}
        subjects = await self._batch_subjects(tenant, items)
        # A frozen tenant's records are refused one by one: a retry of a record stored before
        # the freeze still gets its first result.
        frozen = not await self._tenant_states.active(tenant)
        fresh: dict[bytes, tuple[SubjectClaim, SubjectKeys]] = {}
        results: list[Ingested | ServiceError | _Race] = [_RACE] * len(items)
        staged: list[_Staged] = []
        for position, (item, retry) in enumerate(zip(items, retries, strict=True)):
            try:
                if isinstance(item, ServiceError):
                    raise item
                if retry is not None and retry.key in known:
                    results[position] = await self._replay(tenant, retry, known[retry.key])
                    continue
                if frozen:
                    raise tenant_inactive("no new records")
                staged.append(self._stage(tenant, position, item, retry, fresh, subjects))
            except ServiceError as refusal:
                results[position] = refusal
        pipeline = self._header_keys.active.pipeline
        prepared = pipeline.prepare([s.input for s in staged]) if staged else []
        appendable: list[tuple[_Staged, Prepared]] = []
        for stage, committed in zip(staged, prepared, strict=True):
            if isinstance(committed, CommitError):
                results[stage.position] = _refusal(committed)
            else:
                appendable.append((stage, committed))
        if appendable:
            appended = await self._append(tenant, appendable)
            for (stage, _), result in zip(appendable, appended, strict=True):
                results[stage.position] = result
        return results

    async def _replay(self, tenant: str, retry: Retry, known: tuple[bytes, str]) -> Ingested:
        request_hash, record_id = known
        if request_hash != retry.request_hash:
            raise _key_reused()
        return Ingested.of(await self.record(tenant, record_id), replayed=True)

    def _stage(
        self,
        tenant: str,
        position: int,
        record: RecordIn,
        retry: Retry | None,
        fresh: dict[bytes, tuple[SubjectClaim, SubjectKeys]],
        batch: _BatchSubjects,
    ) -> _Staged:
        """Everything before the pipeline: the envelope's checks, the subject and a record id
        (refusals raise)."""
        stream = batch.streams[record.stream]
        if isinstance(stream, NotFound):
            raise stream
        fence = self._continuity.stream_fence(tenant, stream.name) or self._continuity.log_fence(
            tenant, stream.fleet
        )
        if fence is not None:
            raise _fenced(fence, "stream")
        _check_label(record.record_type, "record_type", MAX_RECORD_TYPE)
        _check_label(record.subject_id, "subject_id", MAX_SUBJECT_ID)
        try:
            occurred_at = encode_value("timestamp", record.occurred_at)[len(b"time:") :].decode()
        except CommitError:
            raise Invalid(
                "occurred_at_invalid", "occurred_at must be an RFC 3339 timestamp", "occurred_at"
            ) from None
        subject, keys = self._subject(tenant, record.subject_id, fresh, batch)
        return _Staged(
            position,
            stream,
            subject,
            retry,
            RecordInput(
                tenant,
                stream.name,
                record.record_type,
                occurred_at,
                subject.subject_ref,
                new_record_id(),
                record.payload,
                stream.declarations,
                stream.strict,
                keys.salt_key,
                keys.payload_key,
            ),
        )

    def _build(
        self, appends: Sequence[Append], slots: Sequence[int], heads: list[tuple[int, bytes]]
    ) -> list[NewRecord]:
        """The store's builder: header, signature and chain leaf of every placed record, in
        one pipeline call (under the stream locks)."""
        prepared = [cast(Prepared, append.prepared) for append in appends]
        now = utc_now()
        try:
            signed = self._header_keys.signing_at(now).pipeline.sign(prepared, slots, heads, now)
        except ModuleFailure as failure:  # a hardware module that failed: nothing is stored
            log.error("keys.header_key_module_failed", extra={"reason": str(failure)})
            raise Unavailable(
                "signing_key_unavailable",
                "the hardware module holding the header-signing key could not sign; nothing"
                " was stored (docs/operations.md, Keys in a hardware module)",
                None,
            ) from None
        return [
            NewRecord(p.record_id, s.seq, s.header, s.signature, s.chain_leaf, p.sealed_payload)
            for p, s in zip(prepared, signed, strict=True)
        ]

    async def _append(
        self, tenant: str, prepared: list[tuple[_Staged, Prepared]]
    ) -> list[Ingested | ServiceError | _Race]:
        """Append prepared records in one store call; each outcome as the API reports it
        (``_Race``: a new subject was created elsewhere first, prepare again)."""
        appends = [
            Append(
                stage.stream.id,
                stage.subject,
                record.record_id,
                record,
                None
                if stage.retry is None
                else IdempotencyClaim(stage.retry.key, stage.retry.request_hash),
                self._continuity.head_check(tenant, stage.stream.name),
            )
            for stage, record in prepared
        ]
        outcomes = await self._store.records.append_records(
            tenant, appends, utc_now(), self._builder
        )
        results: list[Ingested | ServiceError | _Race] = []
        heads: dict[str, Head] = {}  # each stream's last record placed
        for (stage, record), outcome in zip(prepared, outcomes, strict=True):
            match outcome:
                case NewRecord():
                    name = stage.stream.name
                    heads[name] = Head(tenant, name, outcome.seq, outcome.chain_leaf)
                    results.append(
                        Ingested(
                            record_id=record.record_id,
                            stream=stage.stream.name,
                            seq=outcome.seq,
                            root=record.root,
                            chain_leaf=outcome.chain_leaf,
                            header=outcome.header,
                            signature=outcome.signature,
                            key_id=_key_id_of(outcome.header),
                            field_count=record.field_count,
                        )
                    )
                case SubjectErased():
                    self._subjects.forget(tenant, stage.subject.index)
                    results.append(Gone("subject_erased", "the subject was erased", "subject_id"))
                case SubjectRace() | Deferred():
                    results.append(_RACE)
                case Replayed(record_id=record_id):
                    # Only an append with a key is replayed: its key is the retry's.
                    assert stage.retry is not None
                    known = (stage.retry.request_hash, record_id)
                    results.append(await self._replay(tenant, stage.retry, known))
                case KeyReused():
                    results.append(_key_reused())
                case Fenced():
                    fence = self._continuity.stream_fence(tenant, stage.stream.name)
                    assert fence is not None  # head_check fenced it
                    results.append(_fenced(fence, "stream"))
                case _:
                    assert_never(outcome)
        # What was signed is journaled before anyone is told of it (docs/continuity.md).
        await self._continuity.signed_heads(heads.values())
        return results

    async def record(self, tenant: str, record_id: str) -> RecordRow:
        row = await self._store.records.get_record(tenant, record_id)
        # A gap header is stored as a record but is none: it is only ever covered.
        if row is None or header_members(row.header)["format"] == chain.GAP_FORMAT:
            raise NotFound("record_not_found", "no record with this id", "record_id")
        return row

    async def seal(self, tenant: str, record_id: str) -> dict[str, Any] | None:
        """Where the record's chain leaf was sealed: its log and index, or None if pending."""
        found = await self._store.logs.record_seal(tenant, record_id)
        return None if found is None else {"log": found[0], "index": found[1]}

    async def payload(self, tenant: str, record_id: str) -> tuple[RecordRow, bytes]:
        """The record and its decrypted canonical payload; Gone once the subject is erased."""
        row = await self.record(tenant, record_id)
        subject = await self._store.records.get_subject_by_ref(tenant, row.subject_ref)
        sealed = await self._store.records.get_sealed_payload(tenant, record_id)
        if subject is None or subject.wrapped_key is None or sealed is None:
            raise Gone("subject_erased", "the subject was erased; the payload is gone", None)
        return row, self._keys(subject).decrypt_payload(record_id, sealed)

    async def erase(self, tenant: str, subject_id: str) -> SignedErasure:
        """Erase the subject (a repeat is a no-op), with a signed receipt of the erasure."""
        _check_label(subject_id, "subject_id", MAX_SUBJECT_ID)
        index = self._wrapper.subject_index(tenant, subject_id)
        subject = (await self._store.records.get_subjects(tenant, [index])).get(index)
        if subject is None:
            raise NotFound("subject_not_found", "no records for this subject", "subject_id")
        self._subjects.forget(tenant, index)
        now = utc_now()
        signer = (await self._header_keys.current()).signer
        # Journaled first: an erasure outlives any restore of the store (docs/continuity.md).
        await self._continuity.erasing(tenant, index, subject.subject_ref, subject.erased_at or now)
        erasure = await self._store.records.erase_subject(tenant, subject.subject_ref, now)
        receipt = chain.build_erasure_receipt(
            tenant=tenant,
            subject_ref=subject.subject_ref,
            erased_at=erasure.erased_at,
            key_id=signer.key_id,
        )
        message = chain.erasure_receipt_message(canonicalize(orjson.dumps(receipt)))
        return SignedErasure(erasure, receipt, signer.sign_message(message))


@dataclass(frozen=True, slots=True)
class SignedErasure:
    """An erasure and its receipt (docs/records.md, "Erasure receipts"): the receipt's
    members and the header-signing key's signature over them."""

    erasure: Erasure
    receipt: dict[str, Any]
    signature: bytes


def _fenced(fence: Fence, field: str) -> Unavailable:
    """The 503 of a fenced stream or log: it names the stream (or log), never a value."""
    what = f"stream '{fence.name}'" if fence.kind == "stream" else f"log '{fence.name}'"
    return Unavailable(
        STORE_ROLLED_BACK,
        f"{what} is fenced: the store is behind what the service signed for it (a restore or"
        " failover); an operator must run `recordseal recover` (docs/continuity.md)",
        field,
    )


def _key_reused() -> Invalid:
    return Invalid(
        "idempotency_key_reused",
        "this Idempotency-Key was used with another request",
        "Idempotency-Key",
    )


#: How often the items of a post whose new subject another writer created first are prepared
#: again (``RecordService.ingest_batch``) before they are refused as ``subject_busy``.
RACE_RETRIES = 2


def _subject_busy() -> AlreadyExists:
    return AlreadyExists(
        "subject_busy", "the subject was being created concurrently: retry", "subject_id"
    )


class _Race:
    """Not appended: a new subject was created by another writer first (this record's or,
    for a later record of its stream, an earlier one's). Prepare it again and append it
    after the records before it, in order."""


_RACE = _Race()


def header_members(header: bytes) -> dict[str, Any]:
    """The header as a JSON object (it is RFC 8785 text)."""
    members: dict[str, Any] = orjson.loads(header)
    return members


_KEY_ID = b'"key_id":"'


def _key_id_of(header: bytes) -> str:
    """The ``key_id`` member of a canonical header (16 hex digits after its name)."""
    start = header.index(_KEY_ID) + len(_KEY_ID)
    return header[start : start + 16].decode()

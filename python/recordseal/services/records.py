"""The record service: streams, ingest, record views, payloads and subject erasure."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

import orjson

from recordseal import chain
from recordseal.clock import new_subject_ref, utc_now
from recordseal.core import CommitError, canonicalize, validate_declarations
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
    Malformed,
    NotFound,
    ServiceError,
    TooLarge,
    Unavailable,
    tenant_inactive,
)
from recordseal.services.header_keys import HeaderKeys
from recordseal.services.pipeline import Pipeline, Prepared, ReadInput
from recordseal.services.reading import MAX_SUBJECT_ID, RecordRead, label_refusal
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
from recordseal.storage.requests import (
    Append,
    HeadCheck,
    IdempotencyClaim,
    NewRecord,
    SubjectClaim,
)
from recordseal.storage.rows import Erasure, RecordRow, StreamRow, SubjectRow

log = logging.getLogger("recordseal.keys")

STREAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")

#: What the ingest of one record gave: the record stored now (``NewRecord``), the record an
#: ``Idempotency-Key`` named, stored before (``RecordRow``: a replay), or the refusal.
Ingested = NewRecord | RecordRow | ServiceError


def refusal_of(error: CommitError) -> ServiceError:
    """A refusal of the core (a record's read or its payload) as the API reports it: the
    request's schema is 400, a payload too large 413, every other rule 422."""
    if error.code == "request_invalid":
        return Malformed(error.code, str(error), error.field)
    if error.code == "payload_too_large":
        return TooLarge(error.code, str(error), error.field)
    return Invalid(error.code, str(error), error.field)


@dataclass(frozen=True, slots=True)
class _Context:
    """What a call's records refer to, looked up once for the call: each stream by name (or
    why it takes no record: unknown, fenced) with its head check, and each subject by id
    (its claim and keys, or its erasure)."""

    streams: dict[str, tuple[StreamRow, HeadCheck] | ServiceError]
    subjects: dict[str, tuple[SubjectClaim, SubjectKeys] | Gone]


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
        manifest in force (which fleets a stream may join); ``pipeline`` reads requests and
        does the per-record cryptography of a batch under a fixed key (by default the native
        one);
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

    # --- ingest -------------------------------------------------------------------------

    def read(
        self, body: bytes, idempotency_key: str | None, batch: bool
    ) -> list[RecordRead | CommitError]:
        """Read a request's body once (``Pipeline.read``): a record or the refusal of each
        item. A fault of the request as a whole raises its ``CommitError``."""
        return self._header_keys.active.pipeline.read(body, idempotency_key, batch)

    async def post_record(
        self, tenant: str, body: bytes, idempotency_key: str | None = None
    ) -> NewRecord | RecordRow:
        """``POST /v1/records``: read the body and ingest its record; a refusal raises (the
        core's ``CommitError`` for the request, a ``ServiceError`` for the record)."""
        (result,) = await self.ingest(tenant, self.read(body, idempotency_key, batch=False))
        if isinstance(result, ServiceError):
            raise result
        return result

    async def ingest(
        self, tenant: str, reads: Sequence[RecordRead | CommitError]
    ) -> list[Ingested]:
        """Ingest each record read on its own; the results in order. Nothing is stored for a
        refused record.

        With an idempotency key, a record seen before gives its first record (and stores
        nothing); the same key with another request is refused. The records are committed and
        encrypted by one pipeline call, then appended in one store call, in order: they share
        a transaction, and the records of one stream get increasing sequence numbers.

        A record whose new subject another writer created first (and the later records of its
        stream) is prepared again under the stored subject's key, with the other such records
        in one more call, in order: up to ``RACE_RETRIES`` times, then refused as
        ``subject_busy``.
        """
        results = await self._ingest(tenant, reads)
        for _ in range(RACE_RETRIES):
            raced = [n for n, result in enumerate(results) if result is _RACE]
            if not raced:
                break
            again = await self._ingest(tenant, [reads[n] for n in raced])
            for n, result in zip(raced, again, strict=True):
                results[n] = result
        return [_subject_busy() if r is _RACE else r for r in results]  # type: ignore[misc]

    async def _ingest(
        self, tenant: str, reads: Sequence[RecordRead | CommitError]
    ) -> list[Ingested | _Race]:
        """Replays, checks, one pipeline call, one append: each record's result in order."""
        await self._header_keys.current()  # a rotation reaches this process here
        records = [read for read in reads if not isinstance(read, CommitError)]
        keyed = [read.idempotency[0] for read in records if read.idempotency is not None]
        known = await self._store.records.idempotent_records(tenant, keyed) if keyed else {}
        # A frozen tenant's records are refused one by one: a retry of a record stored before
        # the freeze still gets its first result. Its records need no stream or subject.
        frozen = not await self._tenant_states.active(tenant)
        context = await self._context(tenant, [] if frozen else records)
        results: list[Ingested | _Race] = [_RACE] * len(reads)
        # The records to prepare: their places, streams, subjects, keys and reads.
        staged: list[tuple[int, StreamRow, HeadCheck, SubjectClaim, tuple[str, bytes] | None]] = []
        inputs: list[ReadInput] = []
        for position, read in enumerate(reads):
            if isinstance(read, CommitError):
                results[position] = refusal_of(read)
                continue
            idempotency = read.idempotency
            if idempotency is not None and idempotency[0] in known:
                results[position] = await self._replay(tenant, idempotency, known[idempotency[0]])
                continue
            if frozen:
                results[position] = tenant_inactive("no new records")
                continue
            stream = context.streams[read.stream]
            if isinstance(stream, ServiceError):
                results[position] = stream
                continue
            if read.refusal is not None:
                results[position] = refusal_of(read.refusal)
                continue
            subject = context.subjects[read.subject_id]
            if isinstance(subject, Gone):
                results[position] = subject
                continue
            (row, behind), (claim, keys) = stream, subject
            staged.append((position, row, behind, claim, idempotency))
            inputs.append(
                (read, tenant, claim.subject_ref, row.declarations, row.strict, keys.salt_key,
                 keys.payload_key)
            )  # fmt: skip
        if not inputs:
            return results
        prepared = self._header_keys.active.pipeline.prepare(inputs)
        appends: list[Append] = []
        appended: list[int] = []  # the index into ``staged`` of each append
        for n, ((position, row, behind, claim, idempotency), record) in enumerate(
            zip(staged, prepared, strict=True)
        ):
            if isinstance(record, CommitError):
                results[position] = refusal_of(record)
                continue
            claimed = None if idempotency is None else IdempotencyClaim(*idempotency)
            appends.append(Append(row.id, claim, record.record_id, record, claimed, behind))
            appended.append(n)
        if appends:
            await self._append(tenant, appends, [staged[n] for n in appended], reads, results)
        return results

    async def _context(self, tenant: str, records: Sequence[RecordRead]) -> _Context:
        """The streams and subjects of a call's records: the stored subjects this process has
        not cached are read with one query. A new subject gets a key that is stored only with
        its first record, so a refused post leaves nothing behind; it gets one key however
        often it occurs."""
        streams: dict[str, tuple[StreamRow, HeadCheck] | ServiceError] = {}
        subjects: dict[str, tuple[SubjectClaim, SubjectKeys] | Gone] = {}
        wanted: dict[bytes, str] = {}  # subject index -> subject id, of those not cached
        for read in records:
            name, subject_id = read.stream, read.subject_id
            if name not in streams:
                streams[name] = await self._stream_for_records(tenant, name)
            if subject_id not in subjects:
                cached = self._subjects.get(tenant, subject_id)
                if cached is None:
                    wanted[self._wrapper.subject_index(tenant, subject_id)] = subject_id
                    continue
                subjects[subject_id] = cached
        stored = await self._store.records.get_subjects(tenant, list(wanted)) if wanted else {}
        for index, subject_id in wanted.items():
            subject = stored.get(index)
            if subject is None:
                subject_ref = new_subject_ref()
                key, wrapped = self._wrapper.new_subject_key(tenant, subject_ref)
                subjects[subject_id] = (
                    SubjectClaim(index, subject_ref, wrapped),
                    SubjectKeys.derive(key),
                )
            elif subject.wrapped_key is None:
                subjects[subject_id] = Gone(
                    "subject_erased", "the subject was erased", "subject_id"
                )
            else:
                claim, keys = SubjectClaim(index, subject.subject_ref, None), self._keys(subject)
                subjects[subject_id] = (claim, keys)
                self._subjects.put(tenant, subject_id, claim, keys)
        return _Context(streams, subjects)

    async def _stream_for_records(
        self, tenant: str, name: str
    ) -> tuple[StreamRow, HeadCheck] | ServiceError:
        """The stream records name, with its head check; or why it takes none now."""
        try:
            stream = await self._stream(tenant, name)
        except NotFound as unknown:
            return unknown
        fence = self._continuity.stream_fence(tenant, stream.name) or self._continuity.log_fence(
            tenant, stream.fleet
        )
        if fence is not None:
            return _fenced(fence, "stream")
        return stream, self._continuity.head_check(tenant, stream.name)

    def _keys(self, subject: SubjectRow) -> SubjectKeys:
        assert subject.wrapped_key is not None
        key = self._wrapper.unwrap(subject.tenant, subject.subject_ref, subject.wrapped_key)
        return SubjectKeys.derive(key)

    async def _replay(
        self, tenant: str, idempotency: tuple[str, bytes], known: tuple[bytes, str]
    ) -> RecordRow | ServiceError:
        request_hash, record_id = known
        if request_hash != idempotency[1]:
            return _key_reused()
        return await self.record(tenant, record_id)

    def _build(
        self, appends: Sequence[Append], slots: Sequence[int], heads: list[tuple[int, bytes]]
    ) -> list[NewRecord]:
        """The store's builder: header, signature and chain leaf of every placed record, in
        one pipeline call (under the stream locks)."""
        prepared: list[Prepared] = [append.prepared for append in appends]  # type: ignore[misc]
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
            NewRecord(p.record_id, seq, header, signature, leaf, p.sealed_payload)
            for p, (seq, header, signature, leaf) in zip(prepared, signed, strict=True)
        ]

    async def _append(
        self,
        tenant: str,
        appends: list[Append],
        staged: list[tuple[int, StreamRow, HeadCheck, SubjectClaim, tuple[str, bytes] | None]],
        reads: Sequence[RecordRead | CommitError],
        results: list[Ingested | _Race],
    ) -> None:
        """Append prepared records in one store call; each outcome into ``results`` as the API
        reports it (``_RACE``: a new subject was created elsewhere first, prepare again)."""
        # The journal's heads of the streams this process has not journaled itself since
        # its store connections opened (docs/continuity.md, "What a running service catches").
        await self._continuity.before_append({(tenant, row.name) for _, row, *_ in staged})
        outcomes = await self._store.records.append_records(
            tenant, appends, utc_now(), self._builder
        )
        heads: dict[str, NewRecord] = {}  # each stream's last record placed
        for (position, row, _, _, idempotency), outcome in zip(staged, outcomes, strict=True):
            if isinstance(outcome, NewRecord):
                heads[row.name] = outcome
                results[position] = outcome
            elif isinstance(outcome, SubjectRace | Deferred):
                results[position] = _RACE
            elif isinstance(outcome, SubjectErased):
                read = reads[position]
                assert not isinstance(read, CommitError)
                self._subjects.forget(tenant, read.subject_id)
                results[position] = Gone("subject_erased", "the subject was erased", "subject_id")
            elif isinstance(outcome, Replayed):
                # Only an append with a key is replayed: its key is the read's.
                assert idempotency is not None
                known = (idempotency[1], outcome.record_id)
                results[position] = await self._replay(tenant, idempotency, known)
            elif isinstance(outcome, KeyReused):
                results[position] = _key_reused()
            elif isinstance(outcome, Fenced):
                fence = self._continuity.stream_fence(tenant, row.name)
                assert fence is not None  # head_check fenced it
                results[position] = _fenced(fence, "stream")
            else:
                assert_never(outcome)
        # What was signed is journaled before anyone is told of it (docs/continuity.md).
        await self._continuity.signed_heads(
            Head(tenant, name, record.seq, record.chain_leaf) for name, record in heads.items()
        )

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
        refusal = label_refusal(subject_id, "subject_id", MAX_SUBJECT_ID)
        if refusal is not None:
            raise refusal_of(refusal)
        index = self._wrapper.subject_index(tenant, subject_id)
        subject = (await self._store.records.get_subjects(tenant, [index])).get(index)
        if subject is None:
            raise NotFound("subject_not_found", "no records for this subject", "subject_id")
        self._subjects.forget(tenant, subject_id)
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
#: again (``RecordService.ingest``) before they are refused as ``subject_busy``.
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

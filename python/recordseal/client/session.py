"""The async client: one ``httpx.AsyncClient``, bounded concurrency, retries with backoff."""

from __future__ import annotations

import asyncio
import hashlib
import random
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from recordseal.client.models import (
    BatchOut,
    Erasure,
    IngestIncomplete,
    Problem,
    Receipt,
    Record,
    RecordPage,
    RecordView,
    Refreshed,
    Refused,
    Stream,
    StreamPage,
    StreamRecord,
    Unavailable,
)
from recordseal.verify import (
    VerificationResult,
    load_key_directory,
    load_trust_store,
)
from recordseal.verify import (
    verify_bundle as _verify_bundle,
)
from recordseal.verify.refresh import CONSISTENCY_HEADER, check_refresh

T = TypeVar("T")

#: Answers after which the same request may succeed: the service was busy, restarting or
#: behind a proxy that timed out. Every other answer is final.
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
#: The service's batch limit (``POST /v1/records:batch``).
MAX_BATCH = 1000
#: The longest ``Idempotency-Key`` the service takes.
MAX_KEY = 255
#: Items per page of the listings, unless asked otherwise, and at most (the service's bound).
DEFAULT_PAGE = 100
MAX_PAGE = 1000


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt ``n`` waits up to
    ``min(max_delay, first_delay * 2**n)`` seconds (or the server's ``Retry-After``)."""

    attempts: int = 5
    first_delay: float = 0.1
    max_delay: float = 5.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.first_delay * 2**attempt))


class Client:
    """A client of one recordseal service, for one tenant's API token (None for the public
    calls only: :meth:`refresh`, :meth:`key_directory`, :meth:`trust_store`, :meth:`verify`).

    Use it as ``async with Client(url, token) as client: ...``. Ingest calls may run
    concurrently: at most ``concurrency`` requests are in flight at once.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        concurrency: int = 8,
        batch_size: int = 500,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be 1 to {MAX_BATCH}")
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"} if token is not None else None,
            timeout=timeout,
            transport=transport,
            limits=httpx.Limits(max_connections=concurrency),
        )
        self._slots = asyncio.Semaphore(concurrency)
        self._batch_size = batch_size
        self._retry = retry or RetryPolicy()
        self._timeout = timeout

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- ingest -------------------------------------------------------------------------

    async def ingest(
        self, record: Record, idempotency_key: str | None = None, *, derive_keys: bool = True
    ) -> Receipt:
        """Ingest one record; raises :class:`Refused` with the service's problem.

        Every attempt carries the same ``Idempotency-Key``, so a retry after a lost answer
        returns the first record instead of storing a second. Unless given, the key is
        derived from the record (:func:`derived_key`): running the same script again stores
        nothing twice (within the service's key retention, 24 hours by default). With
        ``derive_keys=False`` it is random: an identical record sent again is a new record.
        """
        body = msgspec.json.encode(record)
        key = idempotency_key or (derived_key(body) if derive_keys else uuid.uuid4().hex)
        response = await self._send("POST", "/v1/records", body, key)
        return _decode(response, Receipt, 201)

    async def ingest_many(
        self,
        records: Iterable[Record],
        idempotency_key: str | None = None,
        *,
        progress: Callable[[int], None] | None = None,
        derive_keys: bool = True,
    ) -> list[Receipt | Problem]:
        """Ingest many records in batches (``batch_size`` each, up to ``concurrency`` at a
        time); one result per record, in the order given: its receipt, or the problem that
        refused it. Records of different batches may be sequenced in any order.

        Safe to run again: unless ``idempotency_key`` is given (batch ``n`` is then keyed
        ``<idempotency_key>-<n>``), each batch's key is derived from the records
        (:func:`batch_key`), so the same records sent again, by a rerun of the same script,
        come back as replays instead of being stored twice (within the service's key
        retention, 24 hours by default); records appended after them are new. A call whose
        records differ from an earlier call's after the same first record gets those refused
        (422 ``idempotency_key_reused``): give such a call ``derive_keys=False``, which makes
        the keys random (identical records sent again are then new records).

        ``progress``, when given, is called as each batch has its outcome (answered or
        failed) with the number of records in it: the calls add up to the number of records.

        When batches fail as a whole (refused, unreachable through every retry, or answered
        with something unreadable), :class:`IngestIncomplete` is raised once every batch has
        its answer, from the first failure. It carries the results of the batches that were
        answered and the idempotency key to send the same records again with (the stored ones
        come back as replays): a receipt the service gave is never dropped because another
        batch failed. Only a cancellation (not an Exception) propagates as it is."""
        chunks = _chunks(list(records), self._batch_size)
        derived = derive_keys and idempotency_key is None
        prefix = idempotency_key or uuid.uuid4().hex
        if len(prefix) > MAX_KEY - len(f"-{len(chunks)}"):  # each batch's key is <prefix>-<n>
            raise ValueError(f"idempotency_key leaves no room for the batch number ({MAX_KEY})")

        # Every batch runs to its end before a failure is raised: none is left running (and
        # failing against a closed client) after the caller has its answer.
        async def batch(n: int, chunk: list[Record]) -> list[Receipt | Problem]:
            try:
                key = batch_key(chunks[0][0], n, chunk[0]) if derived else f"{prefix}-{n}"
                return await self.ingest_batch(chunk, key)
            finally:
                if progress is not None:
                    progress(len(chunk))

        outcomes = await asyncio.gather(
            *(batch(n, chunk) for n, chunk in enumerate(chunks)), return_exceptions=True
        )
        results: list[Receipt | Problem | None] = []
        errors: list[Exception] = []
        for chunk, outcome in zip(chunks, outcomes, strict=True):
            if isinstance(outcome, Exception):
                errors.append(outcome)
                results.extend([None] * len(chunk))
            elif isinstance(outcome, BaseException):
                raise outcome  # a cancellation: the caller is going away
            else:
                results.extend(outcome)
        if errors:
            raise IngestIncomplete(results, errors, None if derived else prefix) from errors[0]
        return [result for result in results if result is not None]

    async def ingest_batch(
        self, records: Sequence[Record | msgspec.Raw | None], idempotency_key: str
    ) -> list[Receipt | Problem]:
        """One ``POST /v1/records:batch`` (at most 1,000 records) under ``idempotency_key``:
        one result per record, in order. Item ``i`` is keyed ``<idempotency_key>#<i>`` by the
        service, so sending the same records again under the same key stores nothing twice.

        A ``msgspec.Raw`` is sent as it is: the exact bytes of a record's JSON object. A None
        holds a place: it is sent as ``null``, which the service refuses (400
        ``request_invalid``) storing nothing, so that the records after it keep their index
        and their key (``recordseal ingest`` holds the place of a line it could not send).
        Raises :class:`Refused` or :class:`Unavailable` when the batch fails as a whole."""
        # Encoded once it has a slot, so memory does not grow with the batches waiting: at
        # most `concurrency` bodies are in flight (a sent one is freed when the collector
        # breaks httpx's response cycles).
        response = await self._send(
            "POST",
            "/v1/records:batch",
            lambda: msgspec.json.encode({"records": records}),
            idempotency_key,
        )
        out = _decode(response, BatchOut, 200)
        results: list[Receipt | Problem] = []
        for item in out.results:
            if item.record is not None:
                results.append(item.record)
            else:
                assert item.problem is not None
                results.append(item.problem)
        return results

    # --- streams, records, subjects ------------------------------------------------------

    async def create_stream(
        self,
        name: str,
        declarations: dict[str, str] | None = None,
        strict: bool = False,
        *,
        exist_ok: bool = False,
    ) -> Stream:
        """Declare a stream (declarations map committed path patterns such as ``o:/amount``
        to kinds: docs/spec.md, section 6.1).

        With ``exist_ok``, a stream of that name with the same declarations and strictness
        is answered as it is (a script may run twice); one declared otherwise is still
        :class:`Refused` (409 ``stream_exists``, saying how it differs), since its records
        are committed under its own declarations. Without it, the call is not retried after
        an ambiguous failure: a second attempt would be refused as ``stream_exists``."""
        body = msgspec.json.encode({"name": name, "declarations": declarations, "strict": strict})
        response = await self._send(
            "POST", "/v1/streams", body, None, attempts=None if exist_ok else 1
        )
        if not exist_ok or response.status_code != 409:
            return _decode(response, Stream, 201)
        problem = _problem(response)
        if problem.code != "stream_exists":
            raise Refused(problem)
        existing = await self.stream(name)
        wanted = (declarations or {}, strict)
        if (existing.declarations, existing.strict) != wanted:
            raise Refused(
                msgspec.structs.replace(
                    problem,
                    detail=f"the stream {name!r} exists with declarations"
                    f" {existing.declarations} and strict={existing.strict}, not"
                    f" {wanted[0]} and strict={strict}",
                    field="declarations",
                )
            )
        return existing

    async def stream(self, name: str) -> Stream:
        """A stream as declared, with the sequence number its next record takes
        (``GET /v1/streams/{name}``); :class:`Refused` (404 ``stream_not_found``) if none."""
        return _decode(await self._send("GET", f"/v1/streams/{_segment(name)}"), Stream, 200)

    async def streams(self, *, page_size: int = DEFAULT_PAGE) -> AsyncIterator[Stream]:
        """Every stream of the token's tenant, by name (``GET /v1/streams``), each with its
        record count and next sequence number; pages of ``page_size`` (1 to 1,000) are
        asked for as the iteration reaches them, following each page's ``next``."""
        path: str | None = f"/v1/streams?limit={_page_size(page_size)}"
        while path is not None:
            page = _decode(await self._send("GET", path), StreamPage, 200)
            for stream in page.streams:
                yield stream
            path = page.next

    async def records(
        self, stream: str, from_seq: int = 1, *, page_size: int = DEFAULT_PAGE
    ) -> AsyncIterator[StreamRecord]:
        """The stream's records from ``from_seq`` on, by sequence number
        (``GET /v1/streams/{name}/records``): signed headers and seal status, gap headers
        included (``kind == "gap"``). Pages of ``page_size`` (1 to 1,000) are asked for as
        the iteration reaches them; records appended meanwhile are reached too."""
        size = _page_size(page_size)
        path: str | None = (
            f"/v1/streams/{_segment(stream)}/records?from_seq={from_seq}&limit={size}"
        )
        while path is not None:
            page = _decode(await self._send("GET", path), RecordPage, 200)
            for record in page.records:
                yield record
            path = page.next

    async def record(self, record_id: str) -> RecordView:
        return _decode(
            await self._send("GET", f"/v1/records/{_segment(record_id)}"), RecordView, 200
        )

    async def payload(self, record_id: str) -> dict[str, Any]:
        """The record's payload (RFC 8785 form); :class:`Refused` (410) once erased."""
        response = await self._send("GET", f"/v1/records/{_segment(record_id)}/payload")
        if response.status_code != 200:
            raise Refused(_problem(response))
        payload: dict[str, Any] = msgspec.json.decode(response.content)["payload"]
        return payload

    async def erase_subject(self, subject_id: str) -> Erasure:
        """Erase a subject (a repeat is a no-op, so retries are safe)."""
        # Quoted whole: a '/', '..', '?' or '#' in a subject id must not name another path
        # (httpx resolves "x/../bob" to bob's erasure).
        response = await self._send("POST", f"/v1/subjects/{_segment(subject_id)}/erase", b"")
        return _decode(response, Erasure, 200)

    # --- disclosure and verification ------------------------------------------------------

    async def disclose(
        self,
        record_id: str,
        fields: Sequence[str],
        coverage: tuple[int, int] | None = None,
        *,
        wait: float | None = None,
    ) -> bytes:
        """A disclosure bundle (docs/bundle.md) of ``fields``, optionally with the chain
        window ``coverage`` = (from_seq, to_seq); the bundle's bytes, to hand on as they are.

        ``wait`` (seconds, bounded by the service; 60 by default) lets the service wait for
        the record to be sealed and its checkpoint witnessed before answering, so a bundle
        asked right after ingest can verify in full."""
        request: dict[str, Any] = {"fields": list(fields)}
        if coverage is not None:
            request["coverage"] = {"from_seq": coverage[0], "to_seq": coverage[1]}
        path = f"/v1/records/{_segment(record_id)}/disclosure" + _wait_query(wait)
        response = await self._send(
            "POST", path, msgspec.json.encode(request), timeout=_timeout(self._timeout, wait)
        )
        if response.status_code != 200:
            raise Refused(_problem(response))
        return response.content

    async def refresh(self, bundle: bytes, *, wait: float | None = None) -> Refreshed:
        """The same bundle with the newest witnessed proof (``POST /v1/proofs:refresh``),
        checked offline against ``bundle``: same disclosure, same log entry, consistent
        checkpoints (:class:`BundleError` otherwise). Needs no token: anyone holding a bundle
        may refresh it."""
        response = await self._send(
            "POST",
            "/v1/proofs:refresh" + _wait_query(wait),
            bundle,
            timeout=_timeout(self._timeout, wait),
        )
        if response.status_code != 200:
            raise Refused(_problem(response))
        consistency = response.headers.get(CONSISTENCY_HEADER)
        checked = check_refresh(bundle, response.content, consistency)
        return Refreshed(response.content, checked.old_size, checked.new_size)

    async def key_directory(self) -> bytes:
        """The service's key directory (``GET /v1/keys``), for offline verification."""
        response = await self._send("GET", "/v1/keys")
        if response.status_code != 200:
            raise Refused(_problem(response))
        return response.content

    async def trust_store(self) -> bytes:
        """The trust store of the service's witnesses and time-stamping authorities
        (``GET /v1/trust``), for offline verification. It is the service's own word on whom
        it asks to vouch for its checkpoints; an auditor who does not take that word uses a
        trust store of its own (docs/bundle.md, section 2)."""
        response = await self._send("GET", "/v1/trust")
        if response.status_code != 200:
            raise Refused(_problem(response))
        return response.content

    @staticmethod
    def verify(
        bundle: bytes, key_directory: bytes | None = None, trust_store: bytes | None = None
    ) -> VerificationResult:
        """Verify a bundle offline (no request is made): the seven checks of the verifier."""
        keys = load_key_directory(key_directory) if key_directory is not None else None
        trust = load_trust_store(trust_store) if trust_store is not None else None
        return _verify_bundle(bundle, keys, trust)

    # --- transport ----------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        path: str,
        body: bytes | Callable[[], bytes] | None = None,
        idempotency_key: str | None = None,
        attempts: int | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """Send with retries: transport failures and the answers of RETRYABLE_STATUS are
        tried again after a backoff, with the same body and idempotency key. A callable
        ``body`` is called once the request has its slot (and once only)."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        tries = attempts or self._retry.attempts
        reason = ""
        async with self._slots:
            if callable(body):
                body = body()
            for attempt in range(tries):
                wait = self._retry.delay(attempt)
                try:
                    response = await self._http.request(
                        method,
                        path,
                        content=body,
                        headers=headers,
                        timeout=timeout or self._timeout,
                    )
                except httpx.TransportError as error:
                    reason = type(error).__name__
                else:
                    if response.status_code not in RETRYABLE_STATUS and not _busy(response):
                        return response
                    reason = f"HTTP {response.status_code}"
                    wait = max(wait, _retry_after(response))
                if attempt + 1 < tries:
                    await asyncio.sleep(wait)
        plural = "s" if tries > 1 else ""
        raise Unavailable(
            f"{method} {path}: no success in {tries} attempt{plural} ({reason})",
            attempts=tries,
            reason=reason,
        )


def _wait_query(wait: float | None) -> str:
    return "" if wait is None else f"?wait={wait:.6f}".rstrip("0").rstrip(".")


def _timeout(timeout: float, wait: float | None) -> float:
    """A request that may wait server-side gets that long on top of the usual timeout."""
    return timeout + (wait or 0.0)


def _busy(response: httpx.Response) -> bool:
    """409 ``subject_busy``: a new subject was being created by another request at the same
    moment; the same request succeeds when sent again."""
    return response.status_code == 409 and _problem(response).code == "subject_busy"


def _segment(value: str) -> str:
    """``value`` as one URL path segment: ``/``, ``..``, ``?``, ``#`` and ``%`` cannot change
    which resource is asked for."""
    return quote(value, safe="")


def _page_size(size: int) -> int:
    if not 1 <= size <= MAX_PAGE:
        raise ValueError(f"page_size must be 1 to {MAX_PAGE}")
    return size


#: What begins an idempotency key derived from what is sent (docs/client.md).
DERIVED_KEY_PREFIX = "rs-sha256-"


def derived_key(body: bytes) -> str:
    """The idempotency key of a request body: the same record, the same key."""
    return DERIVED_KEY_PREFIX + hashlib.sha256(body).hexdigest()


def batch_key(first: Record, n: int, head: Record) -> str:
    """The key of batch ``n`` of an ``ingest_many`` call whose first record is ``first`` and
    whose batch ``n`` begins with ``head``: like ``recordseal ingest``'s (the input's name and
    the batch's first line), it names a place in the input, so records appended after a run
    get keys of their own (items are keyed ``<key>#<i>`` by the service) while the ones sent
    before come back as replays."""
    place = b"\0".join((msgspec.json.encode(first), str(n).encode(), msgspec.json.encode(head)))
    return derived_key(place)


def _chunks(records: list[Record], size: int) -> list[list[Record]]:
    return [records[start : start + size] for start in range(0, len(records), size)]


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(float(response.headers.get("Retry-After", "0")), 60.0)
    except ValueError:
        return 0.0


def _problem(response: httpx.Response) -> Problem:
    try:
        return msgspec.json.decode(response.content, type=Problem)
    except msgspec.MsgspecError:
        return Problem(status=response.status_code, code="unexpected_response")


def _decode(response: httpx.Response, kind: type[T], expected: int) -> T:
    if response.status_code != expected:
        raise Refused(_problem(response))
    return msgspec.json.decode(response.content, type=kind)

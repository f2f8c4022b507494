"""The header-signing key a process signs with, as the store names it (docs/operations.md,
"Keys").

The store holds every header-signing key (``signing_keys``) with its validity; the active one
is the newest ``not_before`` with neither ``not_after`` nor ``revoked_at``. Its private half
is a file of the keys directory (``location``; the first key is ``header-signing.ed25519``)
or a key in a hardware module (``location`` is its ``pkcs11:`` URI, crypto/hsm.py).
Every process re-reads the store at most every ``REFRESH_SECONDS`` before it signs, so after
``recordseal keys rotate header`` each process signs with the new key within that time, and
the old key stays valid ``GRACE_SECONDS`` after the rotation, longer than any process can go
on using it: no header is ever signed by a key outside its validity, and no gap opens.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from recordseal.clock import utc_now
from recordseal.crypto.hsm import KeyLocationError, ModuleUri, is_module_uri
from recordseal.crypto.keyfiles import read_or_create_secret
from recordseal.crypto.signing import HeaderSigner
from recordseal.ledger.errors import RecordServiceError
from recordseal.services.errors import Unavailable
from recordseal.services.pipeline import NativePipeline, Pipeline
from recordseal.services.reference_pipeline import ReferencePipeline
from recordseal.storage.records import RecordStore
from recordseal.storage.rows import SigningKeyRow

log = logging.getLogger("recordseal.keys")

#: How often a process re-reads which header key is active, at most.
REFRESH_SECONDS = 2.0
#: How long a rotated-out key stays valid after the rotation (well above REFRESH_SECONDS).
GRACE_SECONDS = 10.0
#: The first header key's file, in the keys directory.
FIRST_KEY = "header-signing.ed25519"


class KeyUnavailable(RecordServiceError, RuntimeError):
    """The store's active header key cannot be used by this process (its file is missing or
    is another key); nothing was signed. ``key_id`` names the key when one is known."""

    def __init__(self, message: str, key_id: str | None = None) -> None:
        super().__init__(message)
        self.key_id = key_id


def key_file(keys_dir: Path, row: SigningKeyRow) -> Path:
    return keys_dir / (row.location or FIRST_KEY)


def active_key(rows: list[SigningKeyRow]) -> SigningKeyRow | None:
    """The key that signs now: the newest ``not_before`` still open."""
    live = [r for r in rows if r.not_after is None and r.revoked_at is None]
    return max(live, key=lambda r: (r.not_before, r.key_id), default=None)


@dataclass(frozen=True, slots=True)
class ActiveKey:
    row: SigningKeyRow
    signer: HeaderSigner
    pipeline: Pipeline

    def signs_at(self, instant: str) -> bool:
        """Whether a header ingested at ``instant`` is within this key's validity."""
        ends = [t for t in (self.row.not_after, self.row.revoked_at) if t is not None]
        return all(instant < end for end in ends)


class HeaderKeys:
    """The active header key of this process, re-read from the store every REFRESH_SECONDS."""

    def __init__(
        self,
        store: RecordStore | None,
        keys_dir: Path | None,
        active: ActiveKey,
        *,
        refresh: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._keys_dir = keys_dir
        self.active = active
        self._refresh = refresh
        self._clock = clock
        self._checked = clock()

    @classmethod
    def fixed(cls, signer: HeaderSigner, pipeline: Pipeline | None = None) -> HeaderKeys:
        """One key, never re-read (tests and tools that sign with a key they hold)."""
        row = SigningKeyRow(signer.key_id, "Ed25519", signer.public_key, "", None, None)
        return cls(None, None, ActiveKey(row, signer, pipeline or pipeline_for(signer)))

    @classmethod
    async def load(cls, store: RecordStore, keys_dir: Path) -> HeaderKeys:
        """The store's active key; on a store that has none yet, the first key (made now in
        ``keys_dir`` if it does not exist) registered as active. Raises KeyUnavailable when
        the store has keys but this keys directory lacks the active one (a data directory
        whose keys were not restored: a new key would silently start another identity)."""
        rows = await store.signing_keys()
        if not rows:
            signer = HeaderSigner.from_seed(read_or_create_secret(keys_dir / FIRST_KEY))
            first = SigningKeyRow(
                signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None
            )
            await store.register_signing_key(first)
            rows = await store.signing_keys()
        row = active_key(rows)
        if row is None:
            raise KeyUnavailable(
                "every header-signing key in the store is retired or revoked: run"
                " `recordseal keys rotate header`"
            )
        return cls(store, keys_dir, _load(keys_dir, row))

    async def current(self) -> ActiveKey:
        """The active key, re-read from the store when the last check is REFRESH_SECONDS old."""
        if self._store is None or self._clock() - self._checked < self._refresh:
            return self.active
        self._checked = self._clock()
        row = active_key(await self._store.signing_keys())
        if row is None or row == self.active.row:
            return self.active
        if row.key_id == self.active.row.key_id:
            self.active = ActiveKey(row, self.active.signer, self.active.pipeline)
            return self.active
        assert self._keys_dir is not None
        try:
            self.active = _load(self._keys_dir, row)
        except KeyUnavailable as missing:
            log.error(
                "keys.header_key_unavailable", extra={"key_id": row.key_id, "reason": str(missing)}
            )
            # The old key signs until its validity ends (``signing_at`` refuses after).
            stale = next(
                (r for r in await self._store.signing_keys() if r.key_id == self.active.row.key_id),
                self.active.row,
            )
            self.active = ActiveKey(stale, self.active.signer, self.active.pipeline)
            return self.active
        log.info("keys.header_key_switched", extra={"key_id": row.key_id})
        return self.active

    def signing_at(self, instant: str) -> ActiveKey:
        """The key to sign a header ingested at ``instant``; 503 when this process has no key
        valid then (it could not load the store's new key before the old one ended)."""
        key = self.active
        if not key.signs_at(instant):
            raise Unavailable(
                "signing_key_unavailable",
                "this process has no header-signing key valid now: the active key's file is"
                " missing from its keys directory (docs/operations.md, Keys)",
                None,
            )
        return key


def _in_use(row: SigningKeyRow) -> None:
    """Expose when the key came into use (``recordseal_key_created_timestamp_seconds``)."""
    # Not at import: the command line imports this module before serve sets up metrics.
    from recordseal import metrics

    with contextlib.suppress(ValueError):
        since = datetime.fromisoformat(row.not_before.replace("Z", "+00:00")).timestamp()
        metrics.KEY_CREATED.labels("header", row.key_id).set(since)


def load_signer(keys_dir: Path, row: SigningKeyRow) -> HeaderSigner:
    """The private half of ``row``: its file in ``keys_dir`` or its key in a module."""
    if row.location and is_module_uri(row.location):
        try:
            signer = HeaderSigner.in_module(ModuleUri.parse(row.location))
        except KeyLocationError as refused:
            raise KeyUnavailable(
                f"the store's header-signing key {row.key_id} cannot be used: {refused};"
                " nothing was signed",
                row.key_id,
            ) from None
        where = row.location
    else:
        path = key_file(keys_dir, row)
        try:
            seed = path.read_bytes()
        except FileNotFoundError:
            raise KeyUnavailable(
                f"the store's header-signing key {row.key_id} is not in {keys_dir}"
                f" ({path.name}): restore the keys directory from its backup; nothing was"
                " signed",
                row.key_id,
            ) from None
        signer = HeaderSigner.from_seed(seed)
        where = str(path)
    if signer.key_id != row.key_id:
        raise KeyUnavailable(f"{where} holds key {signer.key_id}, not {row.key_id}", row.key_id)
    return signer


def _load(keys_dir: Path, row: SigningKeyRow) -> ActiveKey:
    signer = load_signer(keys_dir, row)
    _in_use(row)
    return ActiveKey(row, signer, pipeline_for(signer))


def pipeline_for(signer: HeaderSigner) -> Pipeline:
    """The pipeline that signs with ``signer``'s key: the native one when the extension is
    built (the only one for a key in a hardware module), else the reference one."""
    if signer.native is not None:
        return NativePipeline(signer.native)
    if signer.seed is None:
        raise RuntimeError("a header key in a hardware module needs the native extension")
    return ReferencePipeline(signer.seed)


def pipeline_from_seed(seed: bytes) -> Pipeline:
    """The pipeline that signs with the file key ``seed``: the native one when the extension is
    built, else the reference one."""
    return pipeline_for(HeaderSigner.from_seed(seed))

"""``recordseal keys rotate header``, ``keys revoke`` and ``keys list`` (docs/operations.md,
"Keys"): what each does to the store and the keys directory. Run beside a live service: its
processes read the change from the store (``services.header_keys``)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from recordseal.clock import utc_now
from recordseal.crypto import keks
from recordseal.crypto.hsm import ED25519, ModuleUri, is_module_uri, read_reference
from recordseal.crypto.keyfiles import create_secret
from recordseal.crypto.signing import HeaderSigner
from recordseal.ledger import log_keys as log_keys_module
from recordseal.ledger.errors import RecordServiceError
from recordseal.ledger.log_keys import LogKey, log_keys
from recordseal.panel import cookie_keys
from recordseal.services.header_keys import GRACE_SECONDS, REFRESH_SECONDS, active_key, key_file
from recordseal.storage.records import RecordStore
from recordseal.storage.rows import SigningKeyRow


class KeyRefused(RecordServiceError, ValueError):
    """The command cannot be done as asked; nothing was changed. ``refused`` names what was
    refused (an option such as ``--hsm``, or the key, ``key <id>``), ``rule`` the rule it
    breaks, ``shown`` the value given where the message shows it. The message is
    ``refused [shown] rule`` unless a sentence of its own is given."""

    def __init__(
        self, refused: str, rule: str, shown: str | None = None, *, message: str | None = None
    ) -> None:
        if message is None:
            message = " ".join(part for part in (refused, shown, rule) if part is not None)
        super().__init__(message)
        self.refused = refused
        self.rule = rule
        self.shown = shown


#: The option of ``keys revoke`` a refused instant came from.
COMPROMISED_AT = "--compromised-at"


def _instant(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_instant(text: str) -> datetime:
    """An RFC 3339 date-time with an offset (``Z`` or ``+hh:mm``)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        rule = "is not an RFC 3339 date-time"
        raise KeyRefused(COMPROMISED_AT, rule, repr(text), message=f"{text!r} {rule}") from None
    if moment.tzinfo is None:
        rule = "has no offset: write Z or +hh:mm"
        raise KeyRefused(COMPROMISED_AT, rule, repr(text), message=f"{text!r} {rule}")
    return moment


async def rotate_header(
    store: RecordStore, keys_dir: Path, location: ModuleUri | None = None
) -> tuple[SigningKeyRow, SigningKeyRow]:
    """A new header key (a file, or generated in the module ``location`` names), active from
    now; the old one valid GRACE_SECONDS more (every process switches within
    ``header_keys.REFRESH_SECONDS``). Returns (old, new)."""
    now = datetime.now(UTC)
    old = active_key(await store.signing_keys())
    if old is None:
        raise KeyRefused(
            "header key",
            "rotates only an active key",
            message="the store has no active header key to rotate",
        )
    new = _new_key(keys_dir, _instant(now), location)
    if not await store.rotate_signing_key(new, old.key_id, _instant(now + _grace())):
        raise KeyRefused(
            f"key {old.key_id}", "stopped being active meanwhile: run the command again"
        )
    return old, new


async def revoke(
    store: RecordStore,
    keys_dir: Path,
    key_id: str,
    compromised_at: str,
    location: ModuleUri | None = None,
) -> tuple[SigningKeyRow, SigningKeyRow | None]:
    """Mark ``key_id`` revoked now and compromised from ``compromised_at``; when it is the
    active key, rotate to a new one first, in the same command. Returns (the revoked key as
    stored now, the new active key or None)."""
    compromised = parse_instant(compromised_at)
    now = datetime.now(UTC)
    if compromised > now:
        raise KeyRefused(COMPROMISED_AT, "is in the future", compromised_at)
    rows = {r.key_id: r for r in await store.signing_keys()}
    if key_id not in rows:
        raise KeyRefused(
            f"key {key_id}",
            "is not a header-signing key of the store",
            repr(key_id),
            message=f"no header-signing key {key_id!r} (see `recordseal keys list`)",
        )
    new = None
    active = active_key(list(rows.values()))
    if active is not None and active.key_id == key_id:
        _, new = await rotate_header(store, keys_dir, location)
        # Every process has switched to the new key before the old one is revoked, so no
        # header is signed by it after ``revoked_at``.
        await asyncio.sleep(REFRESH_SECONDS * 1.5)
    await store.revoke_signing_key(key_id, _instant(datetime.now(UTC)), _instant(compromised))
    revoked = {r.key_id: r for r in await store.signing_keys()}[key_id]
    return revoked, new


def revoke_log_key(
    keys_dir: Path, key_id: str, compromised_at: str, location: ModuleUri | None = None
) -> tuple[LogKey, LogKey | None] | None:
    """Mark the log key ``key_id`` compromised from ``compromised_at``; when it still signs,
    a new log key takes over at once and the compromised one is retired (a witness that knows
    only it stops cosigning until it is given the new key: what a compromise asks). None when
    no log key has this id."""
    found = next((k for k in log_keys(keys_dir) if k.key_id == key_id), None)
    if found is None:
        return None
    compromised = parse_instant(compromised_at)
    if compromised > datetime.now(UTC):
        raise KeyRefused(COMPROMISED_AT, "is in the future", compromised_at)
    new = None
    if not found.retired:
        new = log_keys_module.rotate(keys_dir, location)
        log_keys_module.complete(keys_dir)
    log_keys_module.mark_compromised(found, _instant(compromised))
    return found, new


def _new_key(keys_dir: Path, not_before: str, location: ModuleUri | None) -> SigningKeyRow:
    if location is not None:
        location.generate(ED25519)
        signer = HeaderSigner.in_module(location)
        return SigningKeyRow(
            signer.key_id,
            "Ed25519",
            signer.public_key,
            not_before,
            None,
            None,
            None,
            str(location),
        )
    staging = keys_dir / f".header-signing-new-{utc_now().replace(':', '')}.ed25519"
    seed = create_secret(staging)
    signer = HeaderSigner.from_seed(seed)
    name = f"header-signing-{signer.key_id}.ed25519"
    staging.rename(keys_dir / name)
    return SigningKeyRow(
        signer.key_id, "Ed25519", signer.public_key, not_before, None, None, None, name
    )


def _grace() -> timedelta:
    return timedelta(seconds=GRACE_SECONDS)


@dataclass(frozen=True, slots=True)
class KeyListing:
    """One key as ``recordseal keys list`` shows it; never its secret."""

    key_id: str
    purpose: str  # header, log, kek, cookie
    location: str
    created: str | None
    not_before: str | None = None
    not_after: str | None = None
    revoked_at: str | None = None
    compromised_at: str | None = None
    active: bool = True
    #: ``Ed25519`` or ``ML-DSA-44`` for a signing key (header, log); None for the others
    algorithm: str | None = None


async def listing(store: RecordStore, keys_dir: Path) -> list[KeyListing]:
    """Every key: the header keys from the store, then the key files (``file_keys``)."""
    rows = await store.signing_keys()
    active = active_key(rows)
    keys = [
        KeyListing(
            r.key_id,
            "header",
            r.location if r.location and is_module_uri(r.location) else str(key_file(keys_dir, r)),
            r.not_before,
            r.not_before,
            r.not_after,
            r.revoked_at,
            r.compromised_at,
            active is not None and r.key_id == active.key_id,
            r.algorithm,
        )
        for r in rows
    ]
    return keys + file_keys(keys_dir)


def file_keys(keys_dir: Path) -> list[KeyListing]:
    """The cookie keys, log keys and KEK files that exist. A cookie key's id is the one its
    cookies carry (``panel-<generation>``); a log key's (Ed25519 or ML-DSA-44) is the first 16
    hex digits of SHA-256 of its public key (as a header key's); the KEK's the first 16 of
    SHA-256 of a label and the key, naming it without revealing it."""
    found = []
    cookies = cookie_keys.key_files(keys_dir)
    for generation, path in cookies:  # ids as the cookies name them
        created = _instant(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        active = generation == cookies[-1][0]
        found.append(KeyListing(f"panel-{generation}", "cookie", str(path), created, active=active))
    for key in log_keys(keys_dir) if log_keys_module.has_log_key(keys_dir) else []:
        created = _instant(datetime.fromtimestamp(key.path.stat().st_mtime, UTC))
        found.append(
            KeyListing(
                key.key_id,
                "log",
                key.where,
                created,
                compromised_at=key.compromised_at,
                active=not key.retired,
                algorithm=key.algorithm,
            )
        )
    kek_files = keks.kek_files(keys_dir)
    for generation, path in sorted(kek_files.items()):
        # A file KEK's id hashes the key, a module KEK's its URI: either names it, neither
        # reveals it.
        where = str(read_reference(path)) if keks.in_module(path) else str(path)
        named = where.encode() if keks.in_module(path) else path.read_bytes()
        ident = hashlib.sha256(b"recordseal key id\x00" + named).hexdigest()[:16]
        created = _instant(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        newest = generation == max(kek_files)
        found.append(KeyListing(ident, "kek", where, created, active=newest))
    return found


def expose_file_keys(keys_dir: Path) -> None:
    """``recordseal_key_created_timestamp_seconds`` of the key files (their write time)."""
    # Not at import: the command line imports this module before serve sets up metrics.
    from recordseal import metrics

    for key in file_keys(keys_dir):
        assert key.created is not None
        since = datetime.fromisoformat(key.created.replace("Z", "+00:00")).timestamp()
        metrics.KEY_CREATED.labels(key.purpose, key.key_id).set(since)

"""Keys in a hardware module: ``recordseal keys init header|log|kek --hsm URI`` and the
settings ``RECORDSEAL_HEADER_KEY``, ``RECORDSEAL_LOG_KEY`` and ``RECORDSEAL_KEK``
(docs/operations.md, "Keys in a hardware module").

``init`` generates the key inside the module and records where it is: a header key as a row of
the store's key directory (its ``location`` is the URI), a log key as ``log-signing.pkcs11``,
a KEK as ``kek.pkcs11`` with its subject index and panel secret keys beside it. A setting names
a key made that way: at start, a deployment with no key of that purpose yet records it (the
module must hold it); one whose keys of that purpose include it goes on (after a rotation the
setting names an older key); one whose keys do not include it is refused, naming both, since
signing with another key than the recorded ones would start another identity.
"""

from __future__ import annotations

from pathlib import Path

from recordseal.clock import utc_now
from recordseal.crypto import keks
from recordseal.crypto.hsm import (
    ED25519,
    KeyLocationError,
    ModuleUri,
    read_reference,
    reference_text,
)
from recordseal.crypto.keyfiles import create_file
from recordseal.crypto.signing import HeaderSigner
from recordseal.ledger import log_keys
from recordseal.services.header_keys import FIRST_KEY, KeyUnavailable
from recordseal.settings import Settings
from recordseal.storage.records import RecordStore
from recordseal.storage.rows import SigningKeyRow

PURPOSES = ("header", "log", "kek")


async def init_key(purpose: str, location: ModuleUri, keys_dir: Path, store: RecordStore) -> str:
    """Generate the first key of ``purpose`` in the module and record it; what was recorded.
    KeyLocationError when the deployment has such a key already or the module refuses."""
    if purpose == "header":
        if await store.signing_keys():
            raise KeyLocationError(
                "this deployment has a header key already: `recordseal keys rotate header"
                " --hsm URI` moves it into the module"
            )
        location.generate(ED25519)
        row = await _register_header(store, location)
        return f"header key {row.key_id} in {location}"
    if purpose == "log":
        try:
            key = log_keys.init_in_module(keys_dir, location)
        except ValueError as refused:
            raise KeyLocationError(str(refused)) from None
        return f"log key {key.key_id} in {location} ({key.path.name})"
    try:
        written = keks.init_in_module(keys_dir, location)
    except ValueError as refused:
        raise KeyLocationError(str(refused)) from None
    return f"key-encryption key in {location} ({', '.join(written)})"


async def _register_header(store: RecordStore, location: ModuleUri) -> SigningKeyRow:
    signer = HeaderSigner.in_module(location)
    row = SigningKeyRow(
        signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None, None, str(location)
    )
    await store.register_signing_key(row)
    return row


async def adopt_configured(settings: Settings, store: RecordStore) -> None:
    """Record the keys the settings name in a module, where the deployment has none of that
    purpose yet; KeyUnavailable when a setting names a key the deployment does not use."""
    keys_dir = settings.data_dir / "keys"
    for name, value in (
        ("RECORDSEAL_HEADER_KEY", settings.header_key),
        ("RECORDSEAL_LOG_KEY", settings.log_key),
        ("RECORDSEAL_KEK", settings.kek),
    ):
        if value is None:
            continue
        try:
            location = ModuleUri.parse(value)
            if name == "RECORDSEAL_HEADER_KEY":
                await _adopt_header(store, location)
            elif name == "RECORDSEAL_LOG_KEY":
                _adopt_log(keys_dir, location)
            else:
                _adopt_kek(keys_dir, location)
        except KeyLocationError as refused:
            raise KeyUnavailable(f"{name}: {refused}") from None


async def _adopt_header(store: RecordStore, location: ModuleUri) -> None:
    rows = await store.signing_keys()
    if not rows:
        await _register_header(store, location)
        return
    if not any(r.location == str(location) for r in rows):
        raise KeyLocationError(
            f"names {location}, but the store's header keys are {_where(rows)}: unset it, or"
            " move the key with `recordseal keys rotate header --hsm URI`"
        )


def _where(rows: list[SigningKeyRow]) -> str:
    return ", ".join(f"{r.key_id} ({r.location or FIRST_KEY})" for r in rows)


def _adopt_log(keys_dir: Path, location: ModuleUri) -> None:
    if not log_keys.has_log_key(keys_dir):
        public = location.key(ED25519).public_key  # the module must hold it
        _record(keys_dir / log_keys.FIRST_IN_MODULE, location, public)
        return
    known = [k.where for k in log_keys.log_keys(keys_dir)]
    if str(location) not in known:
        raise KeyLocationError(
            f"names {location}, but the log keys are {', '.join(known)}: unset it, or move the"
            " key with `recordseal keys rotate log --hsm URI`"
        )


def _adopt_kek(keys_dir: Path, location: ModuleUri) -> None:
    files = keks.kek_files(keys_dir)
    if not files:
        made = keks.module_keys(location)
        for label, kind, _ in made:
            location.with_object(label).key(kind)  # the module must hold all three
        # The KEK's own file last: it is what marks the directory as having a KEK, so another
        # worker of this start that sees it finds the subject index and panel keys beside it.
        for label, _, name in reversed(made):
            _record(keys_dir / name, location.with_object(label))
        return
    known = [str(read_reference(p)) for p in files.values() if keks.in_module(p)]
    if str(location) not in known:
        raise KeyLocationError(
            f"names {location}, but the keys directory's KEKs are"
            f" {', '.join(p.name for p in files.values())}: unset it, or move the KEK with"
            " `recordseal keys rotate kek --hsm URI`"
        )


def _record(path: Path, location: ModuleUri, public: bytes | None = None) -> None:
    """Write the reference, or find the same one there (another process of this start)."""
    if not create_file(path, reference_text(location, public)) and read_reference(path) != location:
        raise KeyLocationError(f"{path} names another key than {location}")

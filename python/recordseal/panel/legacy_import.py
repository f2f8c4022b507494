"""Import of the panel state that earlier versions kept in files (docs/panel.md, "Upgrading").

Earlier versions kept the panel's state beside the records, in files of the data directory:

| file | what | imported as |
|---|---|---|
| ``panel.sqlite3`` | passkeys and roles, registration links, WebAuthn ceremonies | the same rows |
| ``panel-sso.sqlite3`` | pending sso sign-ins | the same rows (stash still sealed) |
| ``panel-signout-epoch`` | the one sign-out epoch | the epoch of every session's scope |
| ``audit.jsonl`` | fleet audit events, one JSON object a line | audit entries, in file order |
| ``RECORDSEAL_PANEL_PROVIDER_STORE_PATH`` | providers registered through the panel | providers |

``import_panel_files`` runs at every start of the service and in ``recordseal migrate``, under
an exclusive lock of ``<data_dir>/panel-import.lock`` (so the workers of one ``serve`` import
once). Each data-directory file is renamed to ``<name>.imported`` once its rows are committed
and is never read again (it stays, as a backup); a start interrupted between the two imports
it again, which adds nothing twice (rows are keyed, audit lines by their text and position).
The provider file is the operator's: it is not renamed but read at every start, and only
providers whose id the database never held are added, so one removed through the panel stays
removed. Hosts with their own data directories each import their own files into the shared
database: passkeys, links and pending sign-ins merge; the epoch taken is the highest.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from recordseal.panel.sso.provider_store import SecretBox, read_provider_file, to_row
from recordseal.storage.panel import ALL_TENANTS, AuditEntry, PanelStore
from recordseal.storage.panel_files import read_passkey_file, read_pending_file

log = logging.getLogger("recordseal.panel")

PASSKEY_FILE = "panel.sqlite3"
PENDING_FILE = "panel-sso.sqlite3"
EPOCH_FILE = "panel-signout-epoch"
AUDIT_FILE = "audit.jsonl"
LOCK_FILE = "panel-import.lock"
IMPORTED = ".imported"


class _AuditLine(msgspec.Struct):
    """What an ``audit.jsonl`` line must hold (``fleet/audit.py``'s ``AuditEvent``)."""

    event: str
    fleet: str
    at: str
    tenant: str | None = None


@dataclass
class ImportReport:
    """What one run imported (files renamed, rows added)."""

    files: list[str] = field(default_factory=list)
    passkeys: int = 0
    links: int = 0
    ceremonies: int = 0
    pending_logins: int = 0
    signout_epoch: int | None = None
    audit_events: int = 0
    providers: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.providers)


async def import_panel_files(
    store: PanelStore,
    data_dir: Path,
    box: SecretBox,
    provider_file: Path | None = None,
    now: float | None = None,
) -> ImportReport:
    """Import the files of earlier versions found in ``data_dir`` (and ``provider_file``)."""
    report = ImportReport()
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        await _import_passkeys(store, data_dir / PASSKEY_FILE, report)
        await _import_pending(store, data_dir / PENDING_FILE, report)
        await _import_epoch(store, data_dir / EPOCH_FILE, report)
        await _import_audit(store, data_dir / AUDIT_FILE, report)
    if provider_file is not None:
        registered_at = time.time() if now is None else now
        for config in read_provider_file(provider_file):
            if await store.import_provider(to_row(config, box, registered_at)):
                report.providers.append(config.id)
    if report:
        log.warning(
            "panel.imported",
            extra={
                "files": ",".join(report.files) or "-",
                "passkeys": report.passkeys,
                "links": report.links,
                "ceremonies": report.ceremonies,
                "pending_logins": report.pending_logins,
                "signout_epoch": report.signout_epoch,
                "audit_events": report.audit_events,
                "providers": ",".join(report.providers) or "-",
            },
        )
    return report


def _retire(path: Path, report: ImportReport) -> None:
    """Rename an imported file (and a SQLite file's companions) to ``<name>.imported``."""
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(part.with_name(part.name + IMPORTED))
    report.files.append(path.name)


async def _import_passkeys(store: PanelStore, path: Path, report: ImportReport) -> None:
    if not path.is_file():
        return
    content = read_passkey_file(path)
    report.passkeys = await store.add_passkeys(content.passkeys)
    for link in content.links:
        await store.add_link(link)
    report.links = len(content.links)
    now = time.time()
    for state_id, ceremony in content.ceremonies:
        if now < ceremony.expires_at:
            await store.put_ceremony(state_id, ceremony, now)
            report.ceremonies += 1
    _retire(path, report)


async def _import_pending(store: PanelStore, path: Path, report: ImportReport) -> None:
    if not path.is_file():
        return
    now = time.time()
    for nonce_hash, login in read_pending_file(path):
        if now < login.expires_at:
            await store.put_pending_login(nonce_hash, login, now)
            report.pending_logins += 1
    _retire(path, report)


async def _import_epoch(store: PanelStore, path: Path, report: ImportReport) -> None:
    if not path.is_file():
        return
    text = path.read_text().strip() or "0"
    epoch = int(text) if text.isdigit() else None
    if epoch is None:
        log.error(
            "panel.import_refused",
            extra={"file": str(path), "reason": "not an epoch", "kept": "in place"},
        )
        return
    await store.adopt_signout_epoch(ALL_TENANTS, epoch)
    report.signout_epoch = epoch
    _retire(path, report)


async def _import_audit(store: PanelStore, path: Path, report: ImportReport) -> None:
    if not path.is_file():
        return
    entries = []
    seen: Counter[str] = Counter()
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            event = msgspec.json.decode(line, type=_AuditLine)
        except msgspec.MsgspecError:
            log.warning(
                "panel.import_line_skipped",
                extra={"file": str(path), "line_number": number, "reason": "not an audit event"},
            )
            continue
        seen[line] += 1
        digest = hashlib.sha256(line.encode("utf-8")).hexdigest()
        key = f"imported/{digest}/{seen[line]}"
        entries.append(AuditEntry(event.event, event.fleet, event.tenant, event.at, line, key))
    report.audit_events = len(await store.record_audit(entries))
    _retire(path, report)

"""Manifest reloads (docs/fleets.md, "Reloads"): each change is classified, and a reload that would
rebind a fleet to another tenant is refused as a whole until the process restarts.

Classes of change, per fleet id:

- ``added`` / ``removed`` / ``unchanged``;
- ``updated``: ``seed_path`` or ``preset`` changed (applied);
- ``unsupported_change``: ``tenant_id`` changed (set, cleared or replaced) for a fleet that is
  running, or for a fleet id that was bound to another tenant earlier in this process (removed
  and added back). Its log, genesis and transparency path belong to the first tenant.

A reload is atomic: with any ``unsupported_change``, or a manifest that does not load, the
running manifest stays in force and nothing is applied.

Every worker and host reloads the manifest on its own; their audit events are recorded once,
by whichever process first moves the shared manifest head (``fleet/audit.py``): ``bind`` at
start (``fleet.bound`` for each fleet, unless the head already is this manifest), each applied
reload (from the manifest the process ran) and each refused one.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec

from recordseal.audit import AuditEvent, FleetAudit, FleetScope
from recordseal.fleet.manifest import FleetBinding, FleetManifest, ManifestError, load_manifest
from recordseal.storage.panel import ManifestStep

log = logging.getLogger("recordseal.fleet")

ChangeKind = Literal["added", "removed", "updated", "unchanged", "unsupported_change"]


@dataclass(frozen=True, slots=True)
class Change:
    fleet: str
    kind: ChangeKind
    old: FleetBinding | None
    new: FleetBinding | None
    fields: tuple[str, ...] = ()  # the keys that differ


def classify(
    old: FleetManifest, new: FleetManifest, bound: dict[str, str | None] | None = None
) -> list[Change]:
    """The change of every fleet id in either manifest, in the new manifest's order then the
    removed ones. ``bound`` maps fleet ids bound earlier in this process to their tenant."""
    bound = bound or {}
    changes: list[Change] = []
    for fleet in new.fleets:
        before = old.fleet(fleet.id)
        if before is None:
            if fleet.id in bound and bound[fleet.id] != fleet.tenant_id:
                changes.append(Change(fleet.id, "unsupported_change", None, fleet, ("tenant_id",)))
            else:
                changes.append(Change(fleet.id, "added", None, fleet))
            continue
        differ = tuple(
            key
            for key in ("tenant_id", "seed_path", "preset")
            if getattr(before, key) != getattr(fleet, key)
        )
        kind: ChangeKind = (
            "unsupported_change" if "tenant_id" in differ else "updated" if differ else "unchanged"
        )
        changes.append(Change(fleet.id, kind, before, fleet, differ))
    changes += [
        Change(fleet.id, "removed", fleet, None)
        for fleet in old.fleets
        if new.fleet(fleet.id) is None
    ]
    return changes


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    applied: bool
    changes: list[Change] = field(default_factory=list)
    error: str | None = None

    @property
    def refused(self) -> list[Change]:
        return [change for change in self.changes if change.kind == "unsupported_change"]


def manifest_digest(manifest: FleetManifest) -> str:
    """What identifies a manifest's content for the shared head: its fleets' parameters (so
    comments, order and layout do not count), as SHA-256 hex."""
    fleets = sorted((f.id, f.tenant_id, f.preset, f.seed_path) for f in manifest.fleets)
    return hashlib.sha256(msgspec.json.encode(fleets)).hexdigest()


class FleetRegistry:
    """The manifest in force, and every fleet's tenant since the process started."""

    def __init__(self, manifest: FleetManifest, audit: FleetAudit | None = None) -> None:
        self.manifest = manifest
        self._audit = audit or FleetAudit()
        self._bound: dict[str, str | None] = {f.id: f.tenant_id for f in manifest.fleets}

    async def bind(self) -> list[AuditEvent]:
        """Audit the start: ``fleet.bound`` for each fleet, recorded by the first process to
        run this manifest (none when the shared head already is it)."""
        events = [
            (self._audit.stamp(scope_of(fleet), "fleet.bound", preset=fleet.preset), None)
            for fleet in self.manifest.fleets
        ]
        step = ManifestStep("start", manifest_digest(self.manifest))
        return await self._audit.record(events, step)

    async def reload(self, path: Path | None = None) -> ReloadOutcome:
        """Read the manifest again (``path`` or the one loaded) and apply it if allowed."""
        path = path or self.manifest.path
        if path is None:
            return ReloadOutcome(False, error="the manifest has no file to reload from")
        try:
            new = load_manifest(path)
        except ManifestError as error:
            log.error("fleet.reload_refused", extra={"error": str(error), "running": "unchanged"})
            return ReloadOutcome(False, error=str(error))
        changes = classify(self.manifest, new, self._bound)
        outcome = ReloadOutcome(not any(c.kind == "unsupported_change" for c in changes), changes)
        running = manifest_digest(self.manifest)
        refusals = []
        for change in outcome.refused:
            assert change.new is not None
            log.warning(
                "fleet.reload_refused",
                extra={
                    "error": "unsupported_change",
                    "fleet": change.fleet,
                    "from_tenant": self._bound.get(change.fleet),
                    "to_tenant": change.new.tenant_id,
                    "fix": "restart the service to rebind it",
                },
            )
            scope = scope_of(
                change.old or FleetBinding(change.fleet, self._bound.get(change.fleet))
            )
            refusals.append(
                self._audit.stamp(
                    scope, "fleet.rebind_refused", requested_tenant=change.new.tenant_id
                )
            )
        if not outcome.applied:
            step = ManifestStep("refused", manifest_digest(new), running)
            await self._audit.record([(event, None) for event in refusals], step)
            return outcome
        # The whole new state first, then the events: an audit sink that fails part-way
        # never leaves the manifest and the bound tenants out of step.
        self.manifest = new
        self._bound.update({f.id: f.tenant_id for f in new.fleets})
        events = []
        for change in changes:
            if change.kind == "unchanged":
                continue
            binding = change.new or change.old
            assert binding is not None
            log.info("fleet.reloaded", extra={"fleet": change.fleet, "change": change.kind})
            fields = ",".join(change.fields) or None
            events.append(
                self._audit.stamp(scope_of(binding), f"fleet.{change.kind}", changed=fields)
            )
        step = ManifestStep("applied", manifest_digest(new), running)
        await self._audit.record([(event, None) for event in events], step)
        return outcome


def scope_of(fleet: FleetBinding) -> FleetScope:
    return FleetScope(fleet.id, fleet.tenant_id)


async def watch_manifest(
    registry: FleetRegistry,
    interval: float,
    on_applied: Callable[[ReloadOutcome], Awaitable[None]] | None = None,
) -> None:
    """Reload whenever the manifest file changes (checked every ``interval`` seconds)."""
    path = registry.manifest.path
    if path is None:
        return
    seen = _version(path)
    while True:
        await asyncio.sleep(interval)
        current = _version(path)
        if current == seen:
            continue
        seen = current
        try:
            outcome = await registry.reload()
            if outcome.applied and on_applied is not None:
                await on_applied(outcome)
        # Outermost boundary of one reload in a background task (web/background.py): a failed
        # reload is logged and the watcher goes on (the registry keeps its manifest).
        except Exception:
            log.exception("fleet.reload_failed")


def _version(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

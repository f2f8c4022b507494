"""Audit events of proxy fleets (docs/fleets.md, "Audit events"): every event of a fleet that
has a tenant carries that tenant scope, and each event is recorded once however many workers
and hosts run.

An event is stamped from the fleet's scope (its id and tenant), never by the caller, so no
event of a tenant's fleet can leave without its tenant. Events are one JSON object each,
appended to the audit stream in the database (``fleet_audit``, through the panel's part of the
store: ``AuditJournal``) and logged on the logger ``recordseal.audit`` (INFO) by the process
that recorded it (``audit.<event>`` with its fields). Two rules make each event one line,
for every worker and host:

- an event with a natural identity carries a key (``anchor.sealed``: its log and size); the
  stream keeps a key once;
- the events of a manifest change (``fleet.bound`` at start, ``fleet.added`` / ``updated`` /
  ``removed`` and ``fleet.rebind_refused`` on reload) are recorded together with a move of the
  manifest head that every process shares (``ManifestStep``): only the first process to see
  a change moves the head, and only it records the change's events.

A fleet with no tenant emits events without ``tenant``. Events hold identifiers, sizes and
hashes only: no record value, key or token. Without a journal (tools, tests) every event is
logged only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from recordseal.clock import utc_now
from recordseal.storage.panel import AuditEntry, ManifestStep

audit_log = logging.getLogger("recordseal.audit")

Detail = str | int | None


@dataclass(frozen=True, slots=True)
class FleetScope:
    """Who an event is about: a fleet, and its tenant (None for a legacy fleet)."""

    fleet_id: str
    tenant_id: str | None


class AuditEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    """``tenant`` is the tenant scope; absent for a fleet with no tenant."""

    event: str
    fleet: str
    at: str
    tenant: str | None = None
    details: dict[str, Detail] = msgspec.field(default_factory=dict)


class AuditJournal(Protocol):
    """Where events are recorded: the panel's part of the store (``storage/panel.py``)."""

    async def record_audit(
        self, entries: Sequence[AuditEntry], step: ManifestStep | None = None
    ) -> list[AuditEntry]: ...


def log_sink(event: AuditEvent) -> None:
    """Log a recorded event on ``recordseal.audit``: its name and fields."""
    fields: dict[str, Detail] = {"fleet": event.fleet, "at": event.at}
    if event.tenant is not None:
        fields["tenant"] = event.tenant
    fields.update(event.details)
    audit_log.info(f"audit.{event.event}", extra=fields)


def encode_event(event: AuditEvent) -> str:
    return msgspec.json.encode(event).decode()


class FleetAudit:
    """Stamps fleet events and records each once (see the module docstring)."""

    def __init__(
        self, journal: AuditJournal | None = None, clock: Callable[[], str] = utc_now
    ) -> None:
        self._journal = journal
        self._clock = clock

    def stamp(self, scope: FleetScope, event: str, **details: Detail) -> AuditEvent:
        """The event, stamped with its fleet's tenant and the time."""
        return AuditEvent(event, scope.fleet_id, self._clock(), scope.tenant_id, details)

    async def emit(
        self, scope: FleetScope, event: str, *, key: str | None = None, **details: Detail
    ) -> AuditEvent | None:
        """Record one event; None when its ``key`` was recorded before."""
        stamped = self.stamp(scope, event, **details)
        recorded = await self.record([(stamped, key)])
        return recorded[0] if recorded else None

    async def record(
        self,
        events: Sequence[tuple[AuditEvent, str | None]],
        step: ManifestStep | None = None,
    ) -> list[AuditEvent]:
        """Record events (each with its key or None) and, with ``step``, move the manifest
        head in the same transaction; answers those recorded now (none when another process
        made the step first), after logging each."""
        lines = [encode_event(event) for event, _ in events]
        if self._journal is None:
            recorded = list(range(len(events)))
        else:
            entries = [
                AuditEntry(e.event, e.fleet, e.tenant, e.at, line, key)
                for (e, key), line in zip(events, lines, strict=True)
            ]
            written = {id(entry) for entry in await self._journal.record_audit(entries, step)}
            recorded = [i for i, entry in enumerate(entries) if id(entry) in written]
        for i in recorded:
            log_sink(events[i][0])
        return [events[i][0] for i in recorded]

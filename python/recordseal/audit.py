"""Audit events of proxy fleets (docs/fleets.md, "Audit events"): every event of a fleet that has a
tenant
carries that tenant scope.

An event is stamped from the fleet's scope (its id and tenant), never by the caller, so no
event of a tenant's fleet can leave without its tenant. Events are delivered as one JSON
object per line: appended to the audit file (the service's ``<data_dir>/audit.jsonl``, one
``O_APPEND`` write per event, so worker processes never interleave) and logged on the logger
``recordseal.audit`` (INFO). A fleet with no tenant emits events without ``tenant``. Events
hold identifiers, sizes and hashes only: no record value, key or token.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from recordseal.clock import utc_now

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


AuditSink = Callable[[AuditEvent], None]


def log_sink(event: AuditEvent) -> None:
    fields: dict[str, Detail] = {"fleet": event.fleet, "at": event.at}
    if event.tenant is not None:
        fields["tenant"] = event.tenant
    fields.update(event.details)
    audit_log.info(f"audit.{event.event}", extra=fields)


class FileSink:
    """Appends each event as one JSON line to ``path`` (and logs it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, event: AuditEvent) -> None:
        line = msgspec.json.encode(event) + b"\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
        log_sink(event)


class FleetAudit:
    """Emits fleet events to ``sink`` (the audit logger by default)."""

    def __init__(self, sink: AuditSink = log_sink, clock: Callable[[], str] = utc_now) -> None:
        self._sink = sink
        self._clock = clock

    def emit(self, scope: FleetScope, event: str, **details: Detail) -> AuditEvent:
        stamped = AuditEvent(event, scope.fleet_id, self._clock(), scope.tenant_id, details)
        self._sink(stamped)
        return stamped

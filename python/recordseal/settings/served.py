"""The settings of the service that started in the data directory, as a layer under the
shell's: ``recordseal serve`` records its witnesses, time-stamping authorities, quorum, host
and port in ``DATA_DIR/service.json`` at start (``datadir.ServiceRecord``); ``config show`` and
``doctor`` take them from there for each of those settings this shell leaves at its default,
and say so (source ``service.json``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec

from recordseal import datadir
from recordseal.settings.layers import Resolved
from recordseal.settings.values import AuthoritySetting, WitnessSetting


def recorded_trust(
    record: datadir.ServiceRecord,
) -> tuple[tuple[WitnessSetting, ...], tuple[AuthoritySetting, ...], int]:
    """The witnesses, authorities and quorum a service recorded at its start."""
    return (
        msgspec.convert(record.witnesses, tuple[WitnessSetting, ...]),
        msgspec.convert(record.timestamp_authorities, tuple[AuthoritySetting, ...]),
        record.quorum,
    )


def _recorded(record: datadir.ServiceRecord) -> dict[str, Any]:
    """The settings a service record holds, by field name."""
    witnesses, authorities, quorum = recorded_trust(record)
    recorded: dict[str, Any] = {
        "witnesses": witnesses,
        "timestamp_authorities": authorities,
        "witness_quorum": quorum,
    }
    if record.host is not None:
        recorded["host"] = record.host
    if record.port is not None:
        recorded["port"] = record.port
    return recorded


def with_service_record(resolved: Resolved) -> tuple[Resolved, datadir.ServiceRecord | None]:
    """``resolved`` with what the data directory's service recorded in place of the settings
    left at their default here; and that record (None when no service started there)."""
    record = datadir.read_service_record(resolved.settings.data_dir)
    if record is None:
        return resolved, None
    taken = {
        name: value
        for name, value in _recorded(record).items()
        if resolved.sources[name] == "default"
    }
    if not taken:
        return resolved, record
    settings = msgspec.structs.replace(resolved.settings, **taken)
    sources = {**resolved.sources, **dict.fromkeys(taken, "service.json")}
    return replace(resolved, settings=settings, sources=sources), record  # type: ignore[arg-type]

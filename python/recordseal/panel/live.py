"""The live view's figures (docs/panel.md, "Live view"), computed from the store's activity
rows (``storage/activity.py``) and the time now: ingest rates, sealing lag, ages, and the
per-minute series of the last hour that the charts draw.

- **Ingest rate, last minute**: the sliding-window estimate over the per-minute counters, the
  current minute's records plus the previous minute's weighted by the part of it still inside
  the last 60 seconds (counters are kept per UTC minute, not per record).
- **Ingest rate, last hour**: the records of the 60 minutes ending with the current one.
- **Sealing lag** of a log: its records not yet under a checkpoint, and the time since the
  minute its oldest such record arrived (minute resolution: "at most this old").
- **Lag over the hour**, per minute: the records appended by the end of that minute (the log's
  next position less the records of later minutes) less the size its checkpoints had reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recordseal.storage.activity import (
    WINDOW_MINUTES,
    LogActivity,
    TenantActivity,
    TenantSummary,
)


@dataclass(frozen=True, slots=True)
class Series:
    """One value per minute of the window, oldest first; ``first_minute`` is the first."""

    first_minute: int
    values: list[int]

    def to_json(self) -> dict[str, Any]:
        return {"first_minute": self.first_minute, "values": self.values}


def window_start(now: float) -> int:
    """The first UTC minute of the window that ends with the minute of ``now``."""
    return int(now) // 60 - (WINDOW_MINUTES - 1)


def seconds_since(stamp: str | None, now: float) -> float | None:
    """Seconds from an RFC 3339 time the store wrote to ``now`` (None for none)."""
    if stamp is None:
        return None
    try:
        return max(0.0, now - datetime.fromisoformat(stamp).timestamp())
    except ValueError:
        return None


def ingest_series(logs: list[LogActivity], first_minute: int) -> Series:
    values = [0] * WINDOW_MINUTES
    for log in logs:
        for minute, records in log.minutes:
            if first_minute <= minute < first_minute + WINDOW_MINUTES:
                values[minute - first_minute] += records
    return Series(first_minute, values)


def lag_series(log: LogActivity, first_minute: int) -> Series:
    """Records of ``log`` appended but not sealed at the end of each minute of the window."""
    later = sum(records for _, records in log.minutes)  # records of minutes in the window
    counts = dict(log.minutes)
    checkpoints = sorted(log.checkpoints)
    sealed = log.sealed_before
    values = []
    i = 0
    for offset in range(WINDOW_MINUTES):
        minute = first_minute + offset
        later -= counts.get(minute, 0)
        appended = log.next_index - later  # every position handed out by this minute's end
        end = (minute + 1) * 60
        while i < len(checkpoints) and _epoch(checkpoints[i][0]) < end:
            sealed = max(sealed, checkpoints[i][1])
            i += 1
        values.append(max(0, appended - max(sealed, 1)))
    return Series(first_minute, values)


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def rate_last_minute(series: Series, now: float) -> float:
    current, previous = series.values[-1], series.values[-2]
    elapsed = (now % 60) / 60
    return round(current + previous * (1 - elapsed), 1)


def tenant_view(activity: TenantActivity, now: float) -> dict[str, Any]:
    """The page's data (and the JSON answer's, as is): built from the rows only."""
    first = activity.since_minute
    ingest = ingest_series(activity.logs, first)
    lags = [lag_series(log, first) for log in activity.logs]
    total_lag = Series(
        first,
        [sum(values) for values in zip(*(s.values for s in lags), strict=True)]
        if lags
        else [0] * WINDOW_MINUTES,
    )
    logs: list[dict[str, Any]] = []
    for log, lag in zip(activity.logs, lags, strict=True):
        oldest = log.oldest_unsealed_minute
        logs.append(
            {
                "origin": log.origin,
                "fleet": log.fleet,
                "size": log.sealed_size,
                "appended": max(0, log.next_index - 1),
                "checkpoint": {
                    "size": log.checkpoint_size,
                    "at": log.checkpoint_at,
                    "age_seconds": seconds_since(log.checkpoint_at, now),
                },
                "sealing_lag": {
                    "records": log.unsealed,
                    "oldest_unsealed_minute": oldest,
                    "seconds": None if oldest is None else max(0.0, now - oldest * 60),
                },
                "lag_series": lag.to_json(),
                "witnesses": [
                    {
                        "witness": w.witness,
                        "cosigned_size": w.cosigned_size,
                        "cosigned_at": w.cosigned_at,
                        "cosigned_age_seconds": seconds_since(w.cosigned_at, now),
                        "failing": w.code is not None,
                        "failures": w.failures,
                        "code": w.code,
                        "reason": w.reason,
                        "two_roots": w.two_roots,
                        "failed_at": w.failed_at,
                    }
                    for w in log.witnesses
                ],
            }
        )
    return {
        "tenant_id": activity.tenant,
        "streams": [
            {
                "name": s.name,
                "fleet": s.fleet,
                "record_count": s.record_count,
                "last_seq": s.last_seq,
                "last_ingest_at": s.last_ingest_at,
            }
            for s in activity.streams
        ],
        "ingest_rate": {
            "last_minute": rate_last_minute(ingest, now),
            "last_hour": sum(ingest.values),
        },
        "ingest_series": ingest.to_json(),
        "lag_series": total_lag.to_json(),
        "logs": logs,
        "two_roots": [
            {"origin": log.origin, "witness": w.witness}
            for log in activity.logs
            for w in log.witnesses
            if w.two_roots
        ],
        "erasures": {"count": activity.erasures, "last_at": activity.last_erasure_at},
        "tokens": {"count": activity.tokens, "last_used_at": activity.token_last_used_at},
    }


def service_view(summaries: list[TenantSummary]) -> dict[str, Any]:
    return {
        "tenants": [
            {
                "tenant_id": s.tenant,
                "display_name": s.display_name,
                "active": s.active,
                "streams": s.streams,
                "records": s.records,
                "last_ingest_at": s.last_ingest_at,
                "unsealed": s.unsealed,
                "ingested_last_hour": s.ingested_in_window,
                "failing_witnesses": s.failing_witnesses,
                "two_roots": s.two_roots,
            }
            for s in summaries
        ],
        "totals": {
            "tenants": len(summaries),
            "records": sum(s.records for s in summaries),
            "unsealed": sum(s.unsealed for s in summaries),
            "ingested_last_hour": sum(s.ingested_in_window for s in summaries),
            "failing_witnesses": sum(s.failing_witnesses for s in summaries),
            "two_roots": sum(s.two_roots for s in summaries),
        },
    }

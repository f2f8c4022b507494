"""Housekeeping: idempotency keys are kept for a retention period, then forgotten."""

from __future__ import annotations

import asyncio
import logging
import time

from recordseal.storage.records import RecordStore

log = logging.getLogger("recordseal.retention")


def cutoff(retention_seconds: float, now: float | None = None) -> str:
    """The RFC 3339 instant ``retention_seconds`` ago (keys created before it are dropped)."""
    instant = (time.time() if now is None else now) - retention_seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(instant))


async def purge_loop(store: RecordStore, retention_seconds: float, interval: float = 300.0) -> None:
    """Every ``interval`` seconds, forget idempotency keys older than the retention period.
    Any number of processes may run it: the delete is by age, the same in each."""
    while True:
        try:
            dropped = await store.purge_idempotency_keys(cutoff(retention_seconds))
            if dropped:
                log.info("retention.idempotency_keys_forgotten", extra={"count": dropped})
        # Outermost boundary of one round of a background task (web/background.py): a failed
        # purge is logged and tried again; housekeeping never stops the service.
        except Exception:
            log.exception("retention.purge_failed")
        await asyncio.sleep(interval)

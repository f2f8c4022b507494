"""The daily transparency log job (docs/fleets.md, "Transparency log files"): one file per
(tenant, fleet) log per day.

Layout under the root (``RECORDSEAL_TRANSPARENCY_DIR``, default ``<data_dir>/transparency``):

- a fleet with no tenant (legacy or single-tenant): ``<root>/YYYY-MM-DD/<fleet>.log``;
- a tenant's fleet: ``<root>/YYYY-MM-DD/<tenant>/<fleet>.log``.

A log gets a file for every UTC day from the day its first anchor was sealed, also for a day
without new anchors (the file then holds the header alone, whose ``previous`` still proves
the latest anchor back to genesis): a missing file never means "nothing happened". The format
and its replay are ``recordseal.verify.transparency``. Files are written atomically (temporary
file, fsync, rename).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path

import msgspec

from recordseal.clock import utc_datetime
from recordseal.ledger.witnessed import with_cosignatures
from recordseal.merkle import tree
from recordseal.storage.logs import LogStore
from recordseal.storage.rows import AnchorLog
from recordseal.verify.transparency import (
    FORMAT,
    AnchorLine,
    Header,
    Predecessor,
    PreviousAnchor,
    b64,
)

log = logging.getLogger("recordseal.transparency")


def encode_log_file(header: Header, anchors: Sequence[AnchorLine]) -> bytes:
    """A day's file: the header line, then one line per anchor (``verify.transparency``
    reads it)."""
    return b"".join(msgspec.json.encode(item) + b"\n" for item in (header, *anchors))


def log_file_path(root: Path, day: date, tenant: str | None, fleet: str) -> Path:
    folder = root / day.isoformat()
    return folder / f"{fleet}.log" if tenant is None else folder / tenant / f"{fleet}.log"


async def consistency(store: LogStore, origin: str, old_size: int, new_size: int) -> list[bytes]:
    def compute(node: tree.NodeReader) -> list[bytes]:
        return tree.consistency_path(old_size, new_size, node)

    nodes = await store.log_nodes(origin, tree.nodes_needed(compute))
    return compute(lambda level, index: nodes[(level, index)])


async def day_file(store: LogStore, scope: AnchorLog, day: date) -> bytes | None:
    """The file of ``scope`` for ``day``, or None when the log had no anchor by its end."""
    start, end = day.isoformat(), (day + timedelta(days=1)).isoformat()
    before = await store.latest_anchor(scope.tenant, scope.fleet, created_before=start)
    today = await store.anchors(scope.tenant, scope.fleet, created_from=start, created_before=end)
    if before is None and not today:
        return None
    previous = None
    size = 1
    if before is not None:
        proof = await consistency(store, scope.origin, 1, before.size)
        previous = PreviousAnchor(
            before.size, b64(before.root), before.created_at, [*map(b64, proof)]
        )
        size = before.size
    lines = []
    for anchor in today:
        proof = await consistency(store, scope.origin, size, anchor.size)
        lines.append(
            AnchorLine(
                anchor.size,
                b64(anchor.root),
                anchor.created_at,
                [*map(b64, proof)],
                await with_cosignatures(store, anchor.origin, anchor.size, anchor.note),
            )
        )
        size = anchor.size
    header = Header(
        FORMAT, start, scope.origin, scope.tenant, scope.fleet, b64(scope.leaf_0()), previous
    )
    if scope.predecessor is not None:
        origin, size, root = scope.predecessor
        header.predecessor = Predecessor(origin, size, b64(root))
    return encode_log_file(header, lines)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


async def write_day(store: LogStore, root: Path, day: date, *, replace: bool = True) -> list[Path]:
    """Write the files of ``day`` for every log; with ``replace`` False, existing files are
    kept (the in-service job), else rewritten (the CLI). Returns the paths written."""
    written = []
    tenants = {scope.tenant for scope in await store.anchor_logs() if scope.tenant is not None}
    for scope in await store.anchor_logs():
        path = log_file_path(root, day, scope.tenant, scope.fleet)
        if scope.tenant is None and path.name in tenants:
            # a legacy fleet "x" and a tenant "x.log" would share one path: never mix them
            log.error("transparency.path_collision", extra={"path": str(path), "written": False})
            continue
        if not replace and path.exists():
            continue
        data = await day_file(store, scope, day)
        if data is None:
            continue
        _write_atomically(path, data)
        written.append(path)
    return written


#: How long after 00:00 UTC the job waits before writing the day that ended: an anchor stamped
#: 23:59:59 may still be committing at midnight, and a file, once written, is kept.
SETTLE = timedelta(minutes=5)


async def run_daily(
    store: LogStore,
    root: Path,
    is_leader: Callable[[], Awaitable[bool]],
    interval: float = 60.0,
    now: Callable[[], datetime] = utc_datetime,
    settle: timedelta = SETTLE,
) -> None:
    """The in-service job: every ``interval`` seconds, the leader writes the files of the day
    that ended at least ``settle`` ago and do not exist yet (so each day is written once,
    soon after 00:00 UTC, with every anchor of that day)."""
    while True:
        try:
            if await is_leader():
                day = (now() - settle).date() - timedelta(days=1)
                written = await write_day(store, root, day, replace=False)
                if written:
                    log.info("transparency.written", extra={"files": len(written)})
        # Outermost boundary of one round of a background task (web/background.py): a failed
        # round is logged and retried on the next one.
        except Exception:
            log.exception("transparency.round_failed")
        await asyncio.sleep(interval)

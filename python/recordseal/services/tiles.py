"""Every log as c2sp.org/tlog-tiles (docs/tlog.md, "Tiles"): who may read which log, and its
checkpoint, hash tiles and entry bundles, read from what the store keeps.

The store keeps every complete subtree's hash (``merkle.tree``), so the hashes of tile ``N`` at
level ``L`` are the stored nodes ``(8L, 256N)`` ... ``(8L, 256N + W - 1)``: one range read,
whatever the size of the log, nothing recomputed. A log's entries are what its leaves hash:
entry 0 is leaf 0's preimage (the genesis root, or a successor log's commitment to its
predecessor), every further entry a sealed record's (or gap's) signed header in RFC 8785 bytes,
whose RFC 6962 leaf hash is the record's chain leaf. No payload, salt or value is in a log.

The aggregate log's entries are the 32-byte hashes that commit to the tenant logs'
checkpoints (``merkle.aggregate``): no tenant name is in them.

Reading: the aggregate log (the service's own origin) by anyone; a tenant's logs
(``<service>/<tenant>/<fleet>``, and their successors) by that tenant only; logs of no tenant
(legacy fleets) by the operator only. Another tenant's log is
refused 403 before anything is looked up, so the answer tells nothing of which logs exist.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

from recordseal.ledger.witnessed import with_cosignatures
from recordseal.services.errors import Forbidden, NotFound
from recordseal.storage.logs import LogStore
from recordseal.storage.rows import LogRow
from recordseal.tlog.tiles import TILE_HEIGHT, Tile, entry_bundle, exists

log = logging.getLogger("recordseal.tiles")


@dataclass(frozen=True, slots=True)
class Reader:
    """Who asks for a log: the tenant of an API token or of a tenant-scoped panel session,
    or (``tenant`` None) the operator, whose legacy panel session reads every log."""

    tenant: str | None


OPERATOR = Reader(None)


class TileService:
    def __init__(self, logs: LogStore, service_origin: str, public: Collection[str] = ()) -> None:
        """``public``: the origins anyone may read (the deployment's aggregate log)."""
        self._logs = logs
        self._service = service_origin
        self._public = frozenset(public)

    def is_public(self, origin: str) -> bool:
        return origin in self._public

    def tenant_named(self, origin: str) -> str | None:
        """The tenant a tenant log's origin names (its first segment after the service's
        origin), or None for an origin outside this service."""
        rest = origin.removeprefix(self._service + "/")
        return None if rest == origin else rest.split("/", 1)[0]

    def check_reader(self, origin: str, reader: Reader) -> None:
        """403 ``forbidden_tenant`` when a tenant asks for a log its origin does not place
        under that tenant: decided on the name alone, before any store lookup."""
        if reader.tenant is None:
            return
        named = self.tenant_named(origin)
        if named is not None and named != reader.tenant:
            log.info(
                "tiles.denied",
                extra={"reason": "cross_tenant", "tenant": reader.tenant, "requested": named},
            )
            raise Forbidden("forbidden_tenant", "this log belongs to another tenant")

    async def log(self, origin: str, reader: Reader) -> LogRow:
        """The log ``reader`` asked for: 403 for another tenant's, 404 when there is no such
        log of the reader's (a legacy fleet's log is the operator's alone)."""
        self.check_reader(origin, reader)
        found = await self._logs.log_of(origin)
        if found is None or (reader.tenant is not None and found.log.tenant != reader.tenant):
            raise NotFound("log_not_found", "no log of this origin")
        return found

    async def checkpoint(self, found: LogRow) -> str:
        """The newest checkpoint, with every stored witness cosignature appended."""
        origin = found.log.origin
        newest = await self._logs.newest_checkpoint(origin)
        if newest is None:  # a log's row is named by the seal that writes its first checkpoint
            raise NotFound("log_not_found", "the log has no checkpoint yet")
        return await with_cosignatures(self._logs, origin, newest.size, newest.note)

    async def tile(self, found: LogRow, tile: Tile) -> bytes:
        """A hash tile or entry bundle of the log; 404 ``tile_not_found`` unless every hash or
        entry it holds is in the log's newest checkpoint."""
        if not exists(tile, found.size):
            raise NotFound(
                "tile_not_found",
                f"the log's newest checkpoint (size {found.size}) has no {tile.path()}",
            )
        if tile.level is None:
            return await self._entries(found, tile)
        hashes = await self._logs.tile_hashes(
            found.log.origin, TILE_HEIGHT * tile.level, tile.start, tile.width
        )
        if len(hashes) != tile.width:
            raise _lost(found, tile)
        return b"".join(hashes)

    async def _entries(self, found: LogRow, tile: Tile) -> bytes:
        start, end = tile.start, tile.start + tile.width
        if found.log.is_aggregate:  # its entries are hashes of tenant checkpoints
            rows = await self._logs.aggregate_entries(start, tile.width)
            if [index for index, _ in rows] != list(range(start, end)):
                raise _lost(found, tile)
            return entry_bundle(entry for _, entry in rows)
        entries = [found.log.leaf_0()] if start == 0 else []
        rows = await self._logs.log_entries(found.log.origin, max(start, 1), end - max(start, 1))
        if [index for index, _ in rows] != list(range(max(start, 1), end)):
            raise _lost(found, tile)
        return entry_bundle([*entries, *(header for _, header in rows)])


def _lost(found: LogRow, tile: Tile) -> NotFound:
    """A tile of the log's size the store does not hold: the aggregate's entries a restore
    of the store lost (``recordseal recover`` takes it up again past them, docs/tlog.md)."""
    log.warning("tiles.lost", extra={"origin": found.log.origin, "tile": tile.path()})
    return NotFound("tile_lost", f"{tile.path()} was lost in a restore of the store")

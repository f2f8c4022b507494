"""Every log as c2sp.org/tlog-tiles under ``/logs/<origin>/`` (docs/tlog.md, "Tiles"):
``TileController``.

- ``GET /logs/<origin>/checkpoint``: the newest checkpoint with its cosignatures,
  ``text/plain; charset=utf-8``, cacheable for a second at most;
- ``GET /logs/<origin>/tile/<L>/<N>[.p/<W>]`` and ``…/tile/entries/<N>[.p/<W>]``: hash tiles
  and entry bundles, ``application/octet-stream``, immutable (cacheable for a year); entry
  bundles (and tiles) gzip-compressed for a client that accepts it.

A tenant's log is read with one of the tenant's API tokens (``Authorization: Bearer``) or
with a panel session (a tenant-scoped session its own tenant's, a legacy one every log):
401 without either, 403 ``forbidden_tenant`` for another tenant's log before anything is
looked up, 404 for a log or a tile that does not exist. Answers for a tenant's log are
``private`` (no shared cache keeps them). Not in the OpenAPI document: these are C2SP's
static resources, not JSON.
"""

from __future__ import annotations

from typing import Any

from litestar import MediaType, Request, Response, get
from litestar.config.compression import CompressionConfig
from litestar.di import NamedDependency, Provide
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.compression import CompressionMiddleware
from litestar.params import FromPath

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import TenantSession
from recordseal.services.errors import NotFound, Unauthenticated
from recordseal.services.tiles import OPERATOR, Reader, TileService
from recordseal.tlog import TlogError
from recordseal.tlog.tiles import split_resource
from recordseal.web.controller import DomainController
from recordseal.web.ingest import authenticate
from recordseal.web.observe import note_tenant
from recordseal.web.panel.context import panel_context
from recordseal.web.state import provide_tiles

#: ``text/plain; charset=utf-8`` (Litestar adds the charset of a text type).
CHECKPOINT_TYPE = MediaType.TEXT
TILE_TYPE = "application/octet-stream"
#: A year: tiles never change once they exist (tlog-tiles: "long-lived").
IMMUTABLE = "max-age=31536000, immutable"
#: Entry bundles compress well (tlog-tiles: they SHOULD be compressed), for clients that
#: accept it; level 6 costs a third of level 9's time for nearly its size.
GZIP = CompressionConfig(backend="gzip", gzip_compress_level=6)
#: The checkpoint changes with every seal: "no caching beyond a few seconds".
MUTABLE = "max-age=1"


async def reader_of(request: Request[Any, Any, Any]) -> Reader:
    """Who asks: the tenant of a bearer token (401, and the failed-token rate limit, for a
    bad one), else of the panel session cookie, else 401."""
    if request.headers.get("authorization") is not None:
        return Reader(await authenticate(request))
    cookie = request.cookies.get(COOKIE_NAME)
    session = await panel_context(request).verify(cookie) if cookie else None
    if session is None:
        raise Unauthenticated(
            "unauthenticated", "a tenant's log is read with its API token or a panel session"
        )
    if isinstance(session, TenantSession):
        note_tenant(request.scope, session.tenant_id)
        return Reader(session.tenant_id)
    return OPERATOR


def _cache(reader: Reader | None, lifetime: str) -> dict[str, str]:
    if reader is None:
        return {"Cache-Control": f"public, {lifetime}"}
    return {"Cache-Control": f"private, {lifetime}", "Vary": "Authorization, Cookie"}


class TileController(DomainController):
    """The tiles of every log (docs/tlog.md, "Tiles")."""

    dependencies = {"tiles": Provide(provide_tiles, sync_to_thread=False)}  # noqa: RUF012

    @get(
        "/logs/{resource:path}",
        include_in_schema=False,
        middleware=[DefineMiddleware(CompressionMiddleware, config=GZIP)],
    )
    async def log_resource(
        self,
        request: Request[Any, Any, Any],
        tiles: NamedDependency[TileService],
        resource: FromPath[str],
    ) -> Response[bytes]:
        """A log's checkpoint, hash tile or entry bundle (C2SP tlog-tiles)."""
        try:
            origin, tile = split_resource(resource.lstrip("/"))
        except TlogError as error:
            raise NotFound("not_found", str(error)) from None
        reader: Reader | None = None
        if not tiles.is_public(origin):
            reader = await reader_of(request)
        found = await tiles.log(origin, reader or OPERATOR)
        if tile is None:
            body = (await tiles.checkpoint(found)).encode()
            return Response(body, media_type=CHECKPOINT_TYPE, headers=_cache(reader, MUTABLE))
        body = await tiles.tile(found, tile)
        return Response(body, media_type=TILE_TYPE, headers=_cache(reader, IMMUTABLE))

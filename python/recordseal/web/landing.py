"""``GET /``: where a person or a program starts (docs/api.md, "The index").

A browser (``Accept`` preferring ``text/html``) gets a small page linking to the verify page,
the operator panel, the API documentation and the documents verifiers fetch, with the
version; any other client gets the same as JSON (:class:`ServiceIndex`). Public: it names
no tenant and nothing stored. ``/favicon.ico`` is the icon browsers ask every site for.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.response import Template

from recordseal.web.controller import DomainController
from recordseal.web.openapi import api_version, documented
from recordseal.web.schemas import Attestation

#: Both answers differ by the request's Accept: caches must keep them apart.
VARY = {"Vary": "Accept"}
#: The icon browsers ask every origin for (``/favicon.ico``): a seal with a check mark.
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    b'<circle cx="16" cy="16" r="14" fill="#1f5fbf"/><path d="M10 16.5l4 4 8-9" fill="none"'
    b' stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>'
)


class IndexLinks(msgspec.Struct):
    """Where things are, as paths of this service."""

    verify: str = "/verify-record"
    panel: str = "/tenants"
    api_docs: str = "/schema"
    openapi: str = "/schema/openapi.json"
    streams: str = "/v1/streams"
    keys: str = "/v1/keys"
    trust: str = "/v1/trust"
    health: str = "/health"


class ServiceIndex(msgspec.Struct):
    """``GET /`` for programs: the service, its version and where things are."""

    service: str
    #: The installed package's version, as the OpenAPI document's ``info.version``.
    version: str
    links: IndexLinks
    attestation: Attestation = "hosted-ingest"


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    """HTML only when the client prefers it to JSON (``*/*`` and no Accept get JSON)."""
    choice = request.accept.best_match(["application/json", "text/html"], default=None)
    return choice == "text/html"


class LandingController(DomainController):
    """``GET /`` for browsers and programs, and the site's icon; no authentication."""

    @get(
        "/",
        tags=["service"],
        **documented(
            summary="Read the service's index: its version and where things are",
            description="A browser (`Accept` preferring `text/html`) gets a page with the same"
            " links instead.",
            answers={200: (ServiceIndex, "the service, its version and its main paths")},
        ),
    )
    async def index(self, request: Request[Any, Any, Any]) -> Response[Any]:
        """The landing page for people, the index for programs."""
        index = ServiceIndex(service="recordseal", version=api_version(), links=IndexLinks())
        if _wants_html(request):
            return Template(
                template_name="panel/landing.html",
                context={"index": index, "principal": None, "current": "/"},
                headers=VARY,
            )
        return Response(msgspec.json.encode(index), media_type="application/json", headers=VARY)

    @get("/favicon.ico", include_in_schema=False)
    async def favicon(self) -> Response[bytes]:
        """The site's icon: a browser asks for it on its first page of the service."""
        headers = {"Cache-Control": "public, max-age=86400"}
        return Response(FAVICON, media_type="image/svg+xml", headers=headers)

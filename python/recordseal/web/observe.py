"""The access log and the request metrics, around every HTTP request (docs/operations.md).

:class:`RequestObserver` wraps the application's ASGI handler (as Litestar's OpenTelemetry
plugin does), so it also sees requests no route matched. Per request it logs one
``request`` line and updates the request counter and latency histogram. A line holds the
method, the route *template* (never the path, whose segments may be subject ids), the
status, the duration, the tenant and the problem code when there is one, and the client
address: never a header, a token, a query string or a body. Probes (``/health``,
``/readyz``, ``/metrics``) are logged at DEBUG, everything else at INFO.

Handlers note what the observer cannot see from outside with :func:`note_tenant` and
:func:`note_problem`; the notes live in the ASGI scope of the request.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from recordseal import metrics

log = logging.getLogger("recordseal.access")

_NOTES = "recordseal.notes"
PROBES = frozenset({"/health", "/readyz", "/metrics"})
#: The route of a request no route matched (its path is not logged: it may hold anything).
UNMATCHED = "(unmatched)"
#: The ingest route whose refusals count as refused records.
INGEST = ("POST", "/v1/records")


def note_tenant(scope: Any, tenant: str | None) -> None:
    """Record the request's tenant (from its token or its panel session)."""
    notes = scope.get(_NOTES)
    if notes is not None and tenant is not None:
        notes["tenant"] = tenant


def note_problem(scope: Any, code: str) -> None:
    """Record the code of the problem the request is answered with."""
    notes = scope.get(_NOTES)
    if notes is not None:
        notes["code"] = code


class RequestObserver:
    """ASGI middleware: access log and request metrics for each HTTP request."""

    def __init__(self, app: ASGIApp, *, access_log: bool = True) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        notes: dict[str, Any] = {}
        scope[_NOTES] = notes  # type: ignore[literal-required]
        status = 0

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            self._observe(scope, notes, status, time.perf_counter() - started)

    def _observe(self, scope: Scope, notes: dict[str, Any], status: int, seconds: float) -> None:
        method = scope["method"]  # type: ignore[typeddict-item]
        route = scope.get("path_template") or UNMATCHED
        shown = str(status) if status else "none"  # none: the client left before an answer
        metrics.REQUESTS.labels(method, route, shown).inc()
        metrics.REQUEST_SECONDS.labels(method, route).observe(seconds)
        if (method, route) == INGEST and status >= 400:
            metrics.RECORDS_REFUSED.labels(notes.get("code", f"http_{status}")).inc()
        if not self.access_log:
            return
        level = logging.DEBUG if route in PROBES else logging.INFO
        if not log.isEnabledFor(level):
            return
        client = scope.get("client")
        fields: dict[str, Any] = {
            "method": method,
            "route": route,
            "status": status or None,
            "duration_ms": round(seconds * 1000, 3),
        }
        if "tenant" in notes:
            fields["tenant"] = notes["tenant"]
        if "code" in notes:
            fields["code"] = notes["code"]
        if client:
            fields["client"] = client[0]
        log.log(level, "request", extra=fields)

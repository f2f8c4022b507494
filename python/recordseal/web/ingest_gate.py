"""The two ingest routes served ahead of the framework (docs/records.md, "The ingest routes'
HTTP layer").

``POST /v1/records`` and ``POST /v1/records:batch`` carry nearly every request a busy service
answers, and the framework's layers (routing, the request object, the exception middleware,
the response object, the ``before_send`` hooks) cost more than the work of a record. The gate
is an ASGI application in front of the Litestar application: it serves exactly these two
method and path pairs and hands every other request, other methods on the same paths
included, to Litestar. Litestar still holds the two routes (``web/ingest.py``): the OpenAPI
document describes them from the same msgspec types, and both answer through the same
functions (``record_answer``, ``batch_answer``), so the contract is written once.

Per request, in the order the framework's routes take the same steps:

1. the bearer token (``TokenService``'s cache): 401 ``unauthenticated`` with
   ``WWW-Authenticate: Bearer``, counted by the failed-authentication rate limit (429
   ``rate_limited`` with ``Retry-After`` past it);
2. the body's size, before it is parsed: a ``Content-Length`` over the route's limit is 413
   ``request_too_large`` before anything is read, and a body that streams past the limit is
   cut off with the same answer; a body the client stops sending is 400
   ``request_incomplete``;
3. the media type: 415 ``unsupported_media_type`` unless JSON (``web/bodies.py``);
4. the read stage and the store; every refusal and failure is answered as the framework's
   exception handlers answer it (``problems.failure_answer``).

The access log, the request metrics and the tenant and problem notes are the observer's
(``web/observe.py``), which wraps the gate; every answer carries
``X-Content-Type-Options: nosniff``, as the framework's ``before_send`` hook adds it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Litestar
from litestar._multipart import parse_content_header  # the framework's own parser
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from recordseal.services.errors import Malformed, TooLarge
from recordseal.web.bodies import require_json_type
from recordseal.web.headers import EVERY_ANSWER
from recordseal.web.ingest import (
    JSON,
    MAX_BATCH_BYTES,
    batch_answer,
    bearer_tenant,
    record_answer,
)
from recordseal.web.observe import note_problem
from recordseal.web.problems import MEDIA_TYPE, failure_answer, problem_headers
from recordseal.web.state import services_in

log = logging.getLogger("recordseal.web")

_encode = msgspec.json.Encoder().encode
#: Headers every answer of the gate carries besides its type and length.
_ALWAYS = list(EVERY_ANSWER.items())


@dataclass(frozen=True, slots=True)
class _Route:
    path: str
    batch: bool
    limit: int  # the largest body accepted, in bytes


class IngestGate:
    """ASGI: the ingest routes (module docstring), everything else to ``app``."""

    def __init__(self, app: ASGIApp, litestar: Litestar, max_body_bytes: int) -> None:
        self._app = app
        self._state = litestar.state
        self._routes = {
            route.path: route
            for route in (
                _Route("/v1/records", False, max_body_bytes),
                _Route("/v1/records:batch", True, MAX_BATCH_BYTES),
            )
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope["method"] == "POST":
            route = self._routes.get(scope["path"])
            if route is not None:
                await self._serve(route, scope, receive, send)
                return
        await self._app(scope, receive, send)

    async def _serve(self, route: _Route, scope: Any, receive: Receive, send: Send) -> None:
        scope["path_template"] = route.path  # the observer's route label
        try:
            answer = await self._answer(route, scope, receive)
        except Exception as error:  # the request's outermost boundary: every error answered
            problem, headers = failure_answer(error)
            note_problem(scope, problem.code)
            extra = [
                (name.lower().encode(), value.encode())
                for name, value in problem_headers(problem.status, headers).items()
            ]
            await _respond(send, problem.status, MEDIA_TYPE, _encode(problem), extra)
            return
        await _respond(send, 200 if route.batch else 201, JSON, answer, [])

    async def _answer(self, route: _Route, scope: Any, receive: Receive) -> bytes:
        headers = _headers(scope)
        tenant = await bearer_tenant(self._state, scope, headers.get("authorization"))
        body = await _body(receive, headers.get("content-length"), route.limit)
        require_json_type(parse_content_header(headers.get("content-type", "")))
        key = headers.get("idempotency-key")
        records = services_in(self._state).records
        if route.batch:
            return await batch_answer(records, tenant, body, key)
        return await record_answer(records, tenant, body, key)


def _headers(scope: Any) -> dict[str, str]:
    """The request's headers by lower-case name, the first of each name (as the framework
    reads a single-valued header), decoded as Latin-1."""
    found: dict[str, str] = {}
    for name, value in scope["headers"]:
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found


async def _body(receive: Receive, announced: str | None, limit: int) -> bytes:
    """The request body, refused with 413 once it is known to exceed ``limit``: from its
    ``Content-Length`` before anything is read, or as it streams."""
    if announced is not None and announced.strip().isdigit() and int(announced) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            log.info("request.incomplete_body")
            raise Malformed("request_incomplete", "the request body is incomplete")
        chunk: bytes = message.get("body", b"")  # type: ignore[assignment]
        if chunk:
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(limit: int) -> TooLarge:
    return TooLarge(
        "request_too_large", f"the request body is larger than this route's {limit} bytes"
    )


async def _respond(
    send: Send, status: int, media_type: str, body: bytes, extra: list[tuple[bytes, bytes]]
) -> None:
    headers = [
        (b"content-type", media_type.encode()),
        (b"content-length", str(len(body)).encode()),
        *_ALWAYS,
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})

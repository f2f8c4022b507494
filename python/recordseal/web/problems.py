"""One mapper from the surfaces' errors to RFC 9457 problem+json responses.

Every problem answer is derived here from the error that carries its evidence:
:func:`answer_of` maps the service's refusals (``services.errors.ServiceError``, under the
root ``RecordServiceError``: the status by kind, the code, the message, the field) and the
panel's (``panel.errors.PanelRefusal``, a sign-on registration refused, an unknown
provider: under the root ``PanelError``) to status, code, detail and field;
:func:`problem_answer` makes the response. The application's exception handlers
(:data:`EXCEPTION_HANDLERS`) and the panel's (``web/panel/session.py``, which renders a page
for a browser instead) answer through it. Errors of the request itself (msgspec's, Litestar's)
are mapped below too; anything else is the outermost boundary's 500 ``internal_error``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException

from recordseal.panel.errors import PanelRefusal
from recordseal.panel.sso.discovery import DiscoveryError
from recordseal.panel.sso.errors import DuplicateProvider, RegistrationError
from recordseal.panel.sso.login import UnknownProvider
from recordseal.services.errors import ServiceError, TooManyRequests
from recordseal.services.reading import schema_refusal
from recordseal.storage.backends import unavailable_errors
from recordseal.storage.journal import JournalError
from recordseal.web.observe import note_problem
from recordseal.web.schemas import Problem

log = logging.getLogger("recordseal.web")

PROBLEM_TYPE = "https://recordseal.dev/problems/"
MEDIA_TYPE = "application/problem+json"

STATUS = {
    "malformed": 400,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "gone": 410,
    "too_large": 413,
    "invalid": 422,
    "unsupported_media_type": 415,
    "too_many_requests": 429,
    "unavailable": 503,
}
#: Refusals of the payload as a whole: the core names no path, the problem names the member
#: (docs/records.md, "Errors": a refusal names the offending field).
PAYLOAD_LEVEL = frozenset(
    {"payload_not_object", "payload_empty", "payload_too_large", "too_many_fields"}
)
TITLES = {
    400: "Malformed request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
    500: "Internal server error",
}


def problem(status: int, code: str, detail: str | None = None, field: str | None = None) -> Problem:
    return Problem(
        type=PROBLEM_TYPE + code,
        title=TITLES.get(status, "Error"),
        status=status,
        code=code,
        attestation="hosted-ingest",
        detail=detail,
        field=field,
    )


def _field_of(error: ServiceError) -> str | None:
    if error.field is None and error.code in PAYLOAD_LEVEL:
        return "payload"
    return error.field


def service_problem(error: ServiceError) -> Problem:
    """The problem body of a refusal (one item of a batch answers it in a list)."""
    return problem(*answer_of(error))


def problem_response(
    status: int,
    code: str,
    detail: str | None = None,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response[bytes]:
    return response_of(problem(status, code, detail, field), headers)


def response_of(body: Problem, headers: dict[str, str] | None = None) -> Response[bytes]:
    """The framework's answer of a problem, with ``headers`` (:func:`problem_headers`)."""
    return Response(
        msgspec.json.encode(body),
        status_code=body.status,
        media_type=MEDIA_TYPE,
        headers=problem_headers(body.status, headers) or None,
    )


def problem_headers(status: int, headers: dict[str, str] | None = None) -> dict[str, str]:
    """The headers of a problem answer besides its type: ``headers``, and for 401 the
    ``WWW-Authenticate`` challenge (RFC 9110 section 11.6.1)."""
    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return headers


#: What a refusal answers: status, code, detail and the field it names.
Answer = tuple[int, str, str | None, str | None]

#: Sign-on provider registrations refused (docs/sso.md), by status.
REGISTRATION_CODES = {409: "provider_duplicate", 502: "discovery_unreachable"}


def answer_of(
    error: ServiceError | PanelRefusal | RegistrationError | DiscoveryError | UnknownProvider,
) -> Answer:
    """The problem an error of the service's or the panel's surface answers."""
    if isinstance(error, ServiceError):
        return STATUS[error.kind], error.code, str(error), _field_of(error)
    if isinstance(error, PanelRefusal):
        return error.status, error.code, error.detail, error.field
    if isinstance(error, UnknownProvider):
        return 404, "provider_not_found", "no such sign-on provider", None
    if isinstance(error, DiscoveryError):  # the issuer's discovery, at a registration
        status = 502 if error.network else 422
        detail = f"discovery failed: {error.reason}"
        return status, REGISTRATION_CODES.get(status, "registration_invalid"), detail, "issuer"
    status = 409 if isinstance(error, DuplicateProvider) else 422
    code = REGISTRATION_CODES.get(status, "registration_invalid")
    return status, code, error.message, error.field


def problem_answer(
    error: ServiceError | PanelRefusal | RegistrationError | DiscoveryError | UnknownProvider,
    headers: dict[str, str] | None = None,
) -> Response[bytes]:
    """The problem+json response of an error (:func:`answer_of`)."""
    status, code, detail, field = answer_of(error)
    return problem_response(status, code, detail, field, headers=headers)


def validation_problem(error: msgspec.ValidationError) -> Problem:
    """msgspec names the member (``- at `$.stream```); keep the rule, never the value."""
    rule, field = schema_refusal(error)
    return problem(400, "request_invalid", rule, field)


def _respond(request: Request, body: Problem) -> Response[bytes]:  # type: ignore[type-arg]
    note_problem(request.scope, body.code)
    return Response(msgspec.json.encode(body), status_code=body.status, media_type=MEDIA_TYPE)


def validation_error_handler(request: Request, error: msgspec.ValidationError) -> Response[bytes]:  # type: ignore[type-arg]
    return _respond(request, validation_problem(error))


def decode_error_handler(request: Request, error: msgspec.DecodeError) -> Response[bytes]:  # type: ignore[type-arg]
    return _respond(request, problem(400, "request_not_json", "the request body is not valid JSON"))


def unreadable_handler(request: Request, error: Exception) -> Response[bytes]:  # type: ignore[type-arg]
    """What msgspec raises for invalid UTF-8 (``UnicodeDecodeError``) or absurd nesting
    (``RecursionError``) in a body the gate (``web/bodies.py``) did not see first: a
    malformed request, never a 500."""
    log.info("request.unreadable", extra={"error": type(error).__name__})
    return _respond(request, problem(400, "request_not_json", "the request body is not valid JSON"))


#: Litestar's words when the server reports the client gone while the body was read: the
#: body's framing was broken (bad chunk sizes, a connection closed mid-body), not the server.
CLIENT_GONE = "client disconnected prematurely"


def http_error_handler(request: Request, error: HTTPException) -> Response[bytes]:  # type: ignore[type-arg]
    status = error.status_code
    if status == 500 and error.detail == CLIENT_GONE:
        log.info("request.incomplete_body")
        note_problem(request.scope, "request_incomplete")
        return problem_response(400, "request_incomplete", "the request body is incomplete")
    code = {
        400: "request_invalid",
        401: "unauthenticated",
        404: "not_found",
        405: "method_not_allowed",
        413: "request_too_large",
        415: "unsupported_media_type",
        429: "too_many_requests",
    }.get(status, "error")
    detail = error.detail if status < 500 else None
    note_problem(request.scope, code)
    return problem_response(status, code, detail)


#: Seconds a client waits before sending a request the store or the journal could not take.
UNAVAILABLE_RETRY = 1

#: Details of the two 503 answers.
STORE_UNAVAILABLE = (
    "the store does not answer now; send the request again (with the same"
    " Idempotency-Key) after Retry-After seconds"
)
JOURNAL_UNAVAILABLE = (
    "the continuity journal does not answer now; anything stored is answered once it"
    " does: send the request again (with the same Idempotency-Key) after Retry-After"
    " seconds"
)


def failure_answer(error: Exception) -> tuple[Problem, dict[str, str]]:
    """The problem and headers of an error a request's work raised: a refusal of the service
    (its own status; ``Retry-After`` when rate-limited; ``problem_headers`` adds the 401
    challenge), the store or the journal unavailable (503 and ``Retry-After``: nothing
    was acknowledged, the same request with the same ``Idempotency-Key`` is safe to send
    again, and anything the store committed is answered once the journal takes it,
    docs/continuity.md), or anything else: the outermost boundary's 500 ``internal_error``
    (its class logged, never its message, which may quote customer data)."""
    if isinstance(error, ServiceError):
        headers = {}
        if isinstance(error, TooManyRequests):
            headers["Retry-After"] = str(error.retry_after)
        return service_problem(error), headers
    retry = {"Retry-After": str(UNAVAILABLE_RETRY)}
    if isinstance(error, JournalError):
        log.error("request.journal_unavailable", extra={"error": type(error).__name__})
        return problem(503, "journal_unavailable", JOURNAL_UNAVAILABLE), retry
    if isinstance(error, unavailable_errors()):
        log.warning("request.store_unavailable", extra={"error": type(error).__name__})
        return problem(503, "store_unavailable", STORE_UNAVAILABLE), retry
    log.error("request.internal_error", extra={"error": type(error).__name__})
    return problem(500, "internal_error"), {}


def failure_handler(request: Request, error: Exception) -> Response[bytes]:  # type: ignore[type-arg]
    """The exception handler of :func:`failure_answer`'s errors."""
    body, headers = failure_answer(error)
    note_problem(request.scope, body.code)
    return response_of(body, headers)


#: The application's exception handlers (``create_app``): every refusal as problem+json.
EXCEPTION_HANDLERS: dict[
    int | type[Exception], Callable[[Request[Any, Any, Any], Any], Response[Any]]
] = {
    ServiceError: failure_handler,
    msgspec.ValidationError: validation_error_handler,
    msgspec.DecodeError: decode_error_handler,
    HTTPException: http_error_handler,
    UnicodeDecodeError: unreadable_handler,
    RecursionError: unreadable_handler,
    JournalError: failure_handler,
    **dict.fromkeys(unavailable_errors(), failure_handler),
    Exception: failure_handler,
}

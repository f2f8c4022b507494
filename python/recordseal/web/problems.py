"""One mapper from domain errors to RFC 9457 problem+json responses."""

from __future__ import annotations

import logging
import re

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException

from recordseal.services.errors import ServiceError
from recordseal.web.schemas import Problem

log = logging.getLogger("recordseal.web")

PROBLEM_TYPE = "https://recordseal.dev/problems/"
MEDIA_TYPE = "application/problem+json"

STATUS = {
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "gone": 410,
    "too_large": 413,
    "invalid": 422,
}
TITLES = {
    400: "Malformed request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Content too large",
    422: "Unprocessable content",
    500: "Internal server error",
}


def problem(status: int, code: str, detail: str | None = None, field: str | None = None) -> Problem:
    return Problem(
        type=PROBLEM_TYPE + code,
        title=TITLES.get(status, "Error"),
        status=status,
        code=code,
        detail=detail,
        field=field,
    )


def service_problem(error: ServiceError) -> Problem:
    return problem(STATUS[error.kind], error.code, str(error), error.field)


def problem_response(
    status: int, code: str, detail: str | None = None, field: str | None = None
) -> Response[bytes]:
    body = problem(status, code, detail, field)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return Response(
        msgspec.json.encode(body), status_code=status, media_type=MEDIA_TYPE, headers=headers
    )


def service_error_handler(_: Request, error: ServiceError) -> Response[bytes]:  # type: ignore[type-arg]
    return problem_response(STATUS[error.kind], error.code, str(error), error.field)


_AT_PATH = re.compile(r" - at `\$\.?([^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]*)`")


def validation_problem(error: msgspec.ValidationError) -> Problem:
    """msgspec names the member (``- at `$.stream```); keep the rule, never the value."""
    message = str(error)
    match = _AT_PATH.search(message)
    field = match.group(1) if match else None
    if missing := _MISSING.search(message):
        field = ".".join(part for part in (field, missing.group(1)) if part)
    rule = _AT_PATH.sub("", message)
    return problem(400, "request_invalid", rule, field)


def _respond(body: Problem) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=body.status, media_type=MEDIA_TYPE)


def validation_error_handler(_: Request, error: msgspec.ValidationError) -> Response[bytes]:  # type: ignore[type-arg]
    return _respond(validation_problem(error))


def decode_error_handler(_: Request, error: msgspec.DecodeError) -> Response[bytes]:  # type: ignore[type-arg]
    return problem_response(400, "request_not_json", "the request body is not valid JSON")


def http_error_handler(_: Request, error: HTTPException) -> Response[bytes]:  # type: ignore[type-arg]
    status = error.status_code
    code = {
        400: "request_invalid",
        401: "unauthenticated",
        404: "not_found",
        405: "method_not_allowed",
        413: "request_too_large",
    }.get(status, "error")
    detail = error.detail if status < 500 else None
    return problem_response(status, code, detail)


def internal_error_handler(_: Request, error: Exception) -> Response[bytes]:  # type: ignore[type-arg]
    # The log names the error class only: messages may quote customer data.
    log.error("internal error: %s", type(error).__name__, exc_info=False)
    return problem_response(500, "internal_error")

"""Reading JSON request bodies: media type, the core's RFC 8259 reader, strict decoding.

Every route that takes a JSON body reads it here, in three steps (``POST /v1/verify`` only in
the first: its body is a bundle, and a bundle that is not JSON text is malformed, a verdict,
not a refusal; ``web/verify.py``). The two ingest routes take the first step here and give the
body to the service's read stage, which takes the other two in one native pass
(``services/reading.py``, ``web/ingest.py``) with the same refusals:

1. ``Content-Type`` must be ``application/json`` or ``application/<something>+json``, with no
   ``charset`` or ``charset=utf-8`` (RFC 8259 section 8.1: JSON exchanged between systems is
   UTF-8); anything else, a missing header included, is 415 ``unsupported_media_type``.
2. The body goes through the core's JSON reader (``recordseal.core.canonicalize``, the parser
   that reads payloads) before anything else looks at it. It refuses, without recursing past
   its limit, what msgspec would let through or choke on: invalid UTF-8, a member name
   repeated in any object (RFC 8259 leaves the meaning open; a service that commits what it
   received refuses the ambiguity), nesting deeper than 125 levels counted from the body's
   outermost value, lone surrogates, numbers beyond the double range.
3. msgspec decodes the body into its struct with ``strict=True``: no string-to-number or
   string-to-bool coercion; unknown members are refused by the structs themselves.

A fault inside a record's payload is reported as the core reports it for a payload: 422 with
its code and the committed path *within the payload* (``o:/a``); faults elsewhere are 400
naming the member of the request.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request

from recordseal.core import CommitError, canonicalize
from recordseal.services.errors import Invalid, Malformed, UnsupportedMediaType
from recordseal.web.problems import validation_problem

T = TypeVar("T")

#: Faults of the JSON text itself, before any rule of the service: the body is not JSON.
_SYNTAX = "request_not_json"


def is_json_media_type(content_type: tuple[str, dict[str, str]]) -> bool:
    """``application/json`` or ``application/*+json``; a ``charset`` only if UTF-8."""
    media, parameters = content_type
    media = media.strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        return False
    charset = {key.lower(): value for key, value in parameters.items()}.get("charset")
    return charset is None or charset.strip().strip('"').lower() in ("utf-8", "utf8")


def require_json(request: Request[Any, Any, Any]) -> None:
    """415 unless the request declares a JSON body (see the module docstring)."""
    require_json_type(request.content_type)


def require_json_type(content_type: tuple[str, dict[str, str]]) -> None:
    """415 unless ``content_type`` (the parsed ``Content-Type``) is JSON's."""
    if not is_json_media_type(content_type):
        raise UnsupportedMediaType(
            "unsupported_media_type",
            "send the body as application/json (UTF-8)",
            "Content-Type",
        )


def check_json_text(raw: bytes, payload_steps: int | None = None) -> None:
    """Refuse a body the core's JSON reader refuses (see the module docstring).

    ``payload_steps``: how many steps of a fault's path lead to a record's payload (1 for
    ``/payload`` of a single record, 3 for ``/records/<i>/payload`` of a batch). A fault below
    them is the payload's and is reported with its path inside the payload.
    """
    try:
        canonicalize(raw)
    except CommitError as error:
        raise body_refusal(error, payload_steps) from None


def body_refusal(error: CommitError, payload_steps: int | None) -> Malformed | Invalid:
    """The refusal of a body whose JSON text the core's reader refused with ``error`` (the
    ingest routes' read stage reports the same faults: ``web/ingest.py``)."""
    steps = _steps(error.field)
    if (
        payload_steps is not None
        and len(steps) > payload_steps
        and _leads_to_payload(steps[:payload_steps])
    ):
        vector = (error.field or "").partition(":")[0][payload_steps:]
        inner = vector + ":" + "".join("/" + step for step in steps[payload_steps:])
        if payload_steps == 1:
            return Invalid(error.code, str(error), inner)
        # A batch: the item is named; the rest of the body is unread, so the batch as a whole
        # is refused.
        return Invalid(error.code, f"{error} (at {inner})", _member(steps[:payload_steps]))
    if error.code in ("duplicate_member", "depth_exceeded"):
        return Malformed(error.code, str(error), _member(steps) or None)
    return Malformed(_SYNTAX, f"the request body is not valid JSON ({error.code})")


def _steps(field: str | None) -> list[str]:
    """The pointer steps of a committed path, still escaped (``oao:/a/0/b`` -> a, 0, b)."""
    if not field:
        return []
    return field.partition(":")[2].split("/")[1:]


def _leads_to_payload(steps: list[str]) -> bool:
    """``/payload`` of a record, or ``/records/<i>/payload`` of a batch."""
    return steps == ["payload"] or (
        len(steps) == 3 and steps[0] == "records" and steps[1].isdigit() and steps[2] == "payload"
    )


def _member(steps: list[str]) -> str:
    """The request member as msgspec names it in its errors: ``records[3].payload``."""
    text = ""
    for escaped in steps:
        step = escaped.replace("~1", "/").replace("~0", "~")
        text += f"[{step}]" if step.isdigit() and text else ("." if text else "") + step
    return text


def decode_strict(raw: bytes, decoder: msgspec.json.Decoder[T]) -> T:
    """The struct of an already checked body; a wrong shape or type is 400 naming the member."""
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as error:
        problem = validation_problem(error)
        raise Malformed(problem.code, problem.detail or "", problem.field) from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise Malformed(_SYNTAX, "the request body is not valid JSON") from None


def read_json(
    request: Request[Any, Any, Any],
    raw: bytes,
    decoder: msgspec.json.Decoder[T],
    payload_steps: int | None = None,
) -> T:
    """The three steps of the module docstring on a body already read."""
    require_json(request)
    check_json_text(raw, payload_steps)
    return decode_strict(raw, decoder)


def strict_decoder(kind: type[T]) -> msgspec.json.Decoder[T]:
    return msgspec.json.Decoder(kind, strict=True)

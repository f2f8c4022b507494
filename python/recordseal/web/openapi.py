"""How each route describes itself in the OpenAPI document (docs/api.md).

A route of the JSON API passes ``**documented(...)`` to its Litestar decorator. From a few
facts about the route it declares, in the document:

- ``summary=`` (required): what the operation does, in words (Litestar would otherwise show
  the handler's name, such as ``PostRecord``); ``description=`` for more;
- ``bearer=True``: the ``bearer`` security scheme, and the refusals every bearer route can
  answer: 401 ``unauthenticated`` (with ``WWW-Authenticate: Bearer``) and 429
  ``rate_limited`` (with ``Retry-After``);
- ``body=``: the JSON request body (a msgspec struct or a ready schema) with ``examples=``,
  each a request the route accepts, and the refusals of every body read through
  ``web/bodies.py``: 400, 413, 415 (``body_refusals=`` :data:`BUNDLE_REFUSALS` for a bundle
  to verify, which is never refused for its content);
- ``answers=``: the success answers whose schema Litestar cannot see (a handler that returns
  ``Response[bytes]``): status, struct and description;
- ``refusals=``: the route's own refusals, each a :class:`Refusal` naming its problem codes;
- ``answer_headers=``: headers a success answer may carry (name to description), such as a
  listing's ``Link``;
- always: 503 ``store_unavailable`` and ``journal_unavailable`` (with ``Retry-After``), and
  500 ``internal_error``.

Every refusal is ``application/problem+json`` with the :class:`~recordseal.web.schemas.Problem`
schema; its codes are the keys of the media type's ``examples``, one example problem each.
``tests/web/test_openapi.py`` checks the document against these rules and real answers of
a running service against the document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec
from litestar.openapi import OpenAPIConfig
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    Components,
    Example,
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    RequestBody,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.schema import SchemaDataContainer
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from recordseal.web.apidocs import docs_plugins
from recordseal.web.problems import MEDIA_TYPE as PROBLEM_JSON
from recordseal.web.problems import problem
from recordseal.web.schemas import DocumentedAs, Problem

JSON = "application/json"
STRING = OpenAPIType.STRING
#: The name of the security scheme of the record API's bearer tokens.
BEARER = "bearer"
BEARER_SCHEME = SecurityScheme(
    type="http",
    scheme="bearer",
    description=(
        "An API token of one tenant (`recordseal token create`), sent as"
        " `Authorization: Bearer <token>`; every query is scoped to its tenant (docs/records.md)"
    ),
)
#: Marks a refusal whose codes are not all listed: they include the record core's rules.
CORE_RULES = (
    " `code` may also be any rule of the record core (a field kind, a limit, strict mode:"
    " docs/records.md), with `field` the committed path."
)


@dataclass(frozen=True)
class Refusal:
    """One documented error answer: its HTTP status, when it happens, the problem codes it
    carries, and whether the record core's rule codes come on top (``core_rules``)."""

    status: int
    description: str
    codes: tuple[str, ...]
    core_rules: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    #: headers only some of the merged refusals of this status carry (not required)
    optional: frozenset[str] = frozenset()


def refusal(status: int, description: str, *codes: str, core_rules: bool = False) -> Refusal:
    """A refusal of ``status`` with ``codes`` (see :class:`Refusal`)."""
    return Refusal(status, description, codes, core_rules)


BEARER_REFUSALS = (
    Refusal(
        401,
        "no valid bearer token: missing, malformed, unknown or revoked (the answer does not"
        " say which)",
        ("unauthenticated",),
        headers={"WWW-Authenticate": "`Bearer`: the scheme the route takes"},
    ),
    Refusal(
        429,
        "this client address sent too many invalid tokens; valid tokens are always served",
        ("rate_limited",),
        headers={"Retry-After": "seconds until the address may try again"},
    ),
)
BODY_REFUSALS = (
    refusal(
        400,
        "the body is not JSON text, is cut short, repeats a member name, nests too deep, or"
        " has the wrong shape (`field` names the member)",
        "request_not_json",
        "request_incomplete",
        "duplicate_member",
        "depth_exceeded",
        "request_invalid",
    ),
    refusal(413, "the body is larger than this route takes", "request_too_large"),
    refusal(
        415,
        "the body is not declared as JSON (`Content-Type: application/json`, UTF-8)",
        "unsupported_media_type",
    ),
)
#: ``POST /v1/verify``: every body of the JSON media type and within the limit is a bundle to
#: verify (200, a malformed one ``FAILED``: docs/bundle.md), so 400 is only framing.
BUNDLE_REFUSALS = (
    refusal(
        400, "the body is cut short (chunked framing the server rejects)", "request_incomplete"
    ),
    *BODY_REFUSALS[1:],
)
ALWAYS = (
    Refusal(
        503,
        "the store or the continuity journal does not answer now (a database failover, a"
        " restart): nothing was acknowledged; send the same request again, with the same"
        " `Idempotency-Key`, after `Retry-After` seconds",
        ("store_unavailable", "journal_unavailable"),
        headers={
            "Retry-After": "seconds after which the request may be sent again"
            " (`store_unavailable`, `journal_unavailable`)"
        },
    ),
    refusal(500, "an internal error; its details stay in the server's log", "internal_error"),
)


def documented(
    *,
    summary: str,
    description: str | None = None,
    bearer: bool = False,
    body: type | Mapping[str, Any] | None = None,
    body_description: str | None = None,
    examples: Mapping[str, Any] | None = None,
    body_refusals: Iterable[Refusal] = BODY_REFUSALS,
    answers: Mapping[int, tuple[Any, str]] | None = None,
    refusals: Iterable[Refusal] = (),
    parameters: Sequence[Parameter] = (),
    answer_headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for a route decorator: ``security``, ``responses`` and an
    ``operation_class`` that adds the request body, ``parameters`` and the refusals' codes
    and headers (see the module docstring)."""
    merged = _merge(
        [*(BEARER_REFUSALS if bearer else ()), *(body_refusals if body else ()), *refusals, *ALWAYS]
    )
    responses: dict[int, ResponseSpec] = {
        status: ResponseSpec(kind, description=description, generate_examples=False)
        for status, (kind, description) in (answers or {}).items()
    }
    for status, declared in merged.items():
        responses[status] = ResponseSpec(
            Problem,
            description=declared.description + (CORE_RULES if declared.core_rules else ""),
            media_type=PROBLEM_JSON,
            generate_examples=False,
        )
    request_body = None
    if body is not None:
        schema: Any = dict(body) if isinstance(body, Mapping) else inline_schema(body)
        request_body = RequestBody(
            content={
                JSON: OpenAPIMediaType(
                    schema=schema,
                    examples={
                        name: Example(summary=name, value=value)
                        for name, value in (examples or {}).items()
                    }
                    or None,
                )
            },
            required=True,
            description=body_description,
        )
    extra_parameters = list(parameters)

    @dataclass
    class DocumentedOperation(Operation):
        def __post_init__(self) -> None:
            if request_body is not None:
                self.request_body = request_body
            if extra_parameters:
                self.parameters = [*(self.parameters or []), *extra_parameters]
            # Litestar adds a 400 of its own exception shape to routes with parameters: the
            # service never answers it (web/problems.py maps every error to a problem).
            self.responses = {
                status: answer
                for status, answer in (self.responses or {}).items()
                if int(status) < 400 or int(status) in merged
            }
            for code, success in self.responses.items():
                if int(code) < 400 and answer_headers and isinstance(success, OpenAPIResponse):
                    success.headers = {
                        name: OpenAPIHeader(description=text, schema=Schema(type=STRING))
                        for name, text in answer_headers.items()
                    }
            for status, declared in merged.items():
                answer = self.responses[str(status)]
                assert isinstance(answer, OpenAPIResponse)  # made from the ResponseSpec above
                media = (answer.content or {})[PROBLEM_JSON]
                media.examples = {code: _example(status, code) for code in declared.codes}
                answer.headers = {
                    name: OpenAPIHeader(
                        description=text,
                        schema=Schema(type=STRING),
                        required=name not in declared.optional,
                    )
                    for name, text in declared.headers.items()
                } or None

    kwargs: dict[str, Any] = {
        "summary": summary,
        "description": description,
        "responses": responses,
        "operation_class": DocumentedOperation,
    }
    if bearer:
        kwargs["security"] = [{BEARER: []}]
    return kwargs


def _merge(refusals: Iterable[Refusal]) -> dict[int, Refusal]:
    """One refusal per status: descriptions joined, codes and headers united."""
    merged: dict[int, Refusal] = {}
    for item in refusals:
        seen = merged.get(item.status)
        if seen is None:
            merged[item.status] = item
            continue
        merged[item.status] = Refusal(
            item.status,
            f"{seen.description}; or {item.description}",
            (*seen.codes, *(code for code in item.codes if code not in seen.codes)),
            seen.core_rules or item.core_rules,
            {**seen.headers, **item.headers},
            seen.optional | item.optional | (set(seen.headers) ^ set(item.headers)),
        )
    return dict(sorted(merged.items()))


def _example(status: int, code: str) -> Example:
    body = msgspec.to_builtins(problem(status, code))
    return Example(summary=code, value=body)


def inline_schema(struct: Any) -> Any:
    """msgspec's JSON schema of ``struct`` with its ``$defs`` inlined (for request bodies,
    which the handlers decode themselves; they do not recurse)."""
    generated = msgspec.json.schema(struct)
    definitions = generated.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(generated)


# --- fields documented as another type ----------------------------------------------------


class DocumentedAsPlugin(OpenAPISchemaPlugin):
    """Documents a field marked :class:`DocumentedAs` with the schema of its ``kind``."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return any(isinstance(item, DocumentedAs) for item in field_definition.metadata)

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        kind = next(m for m in field_definition.metadata if isinstance(m, DocumentedAs)).kind
        return SchemaDataContainer(data_container=kind)


class JsonSchemaFormatPlugin(OpenAPISchemaPlugin):
    """Carries the ``format`` of a string's ``msgspec.Meta(extra_json_schema=...)`` into the
    document (Litestar reads only its title, description and examples): a
    :data:`~recordseal.verify.encoding.Timestamp` is ``format: date-time`` in both msgspec's
    schema of a request body and Litestar's components."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return field_definition.annotation is str and _format_of(field_definition) is not None

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        return Schema(type=OpenAPIType.STRING, format=OpenAPIFormat(_format_of(field_definition)))


def _format_of(field_definition: FieldDefinition) -> str | None:
    for item in field_definition.metadata:
        if isinstance(item, msgspec.Meta) and item.extra_json_schema:
            return item.extra_json_schema.get("format")
    return None


# --- the document ----------------------------------------------------------------------------


def api_version() -> str:
    """The package's version (``info.version`` of the document)."""
    try:
        return version("recordseal")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0+unknown"


def openapi_config() -> OpenAPIConfig:
    """The document's title, version, security scheme and render plugins."""
    return OpenAPIConfig(
        title="recordseal",
        version=api_version(),
        description=(
            "The record API of recordseal (docs/records.md). Every refusal is RFC 9457"
            " `application/problem+json` with a stable `code`; the codes of each answer are"
            " the keys of its examples."
        ),
        components=Components(security_schemes={BEARER: BEARER_SCHEME}),
        render_plugins=docs_plugins(),
    )

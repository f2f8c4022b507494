"""Checks real answers of the service against its OpenAPI document (docs/api.md).

:class:`AnswerChecker` validates each answer with ``openapi-core`` against a *closed* copy of
the document: every object schema that lists its members gets ``additionalProperties:
false``, so a member the service sends but the document does not name fails the check (the
published document stays open, so that adding a member does not break generated clients).
On top of the schema it checks what the schema cannot say: a refusal's ``status`` member is
the HTTP status, and its ``code`` is one of the codes the answer documents (the keys of its
examples) unless the answer says the record core's rules may come on top.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse

from recordseal.web.openapi import CORE_RULES
from recordseal.web.problems import MEDIA_TYPE as PROBLEM_JSON

METHODS = ("get", "put", "post", "delete", "patch")


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every operation of the document by (METHOD, path template)."""
    return {
        (method.upper(), path): item[method]
        for path, item in document["paths"].items()
        for method in METHODS
        if method in item
    }


def closed(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` whose object schemas with ``properties`` refuse other members."""
    document = copy.deepcopy(document)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for item in node:
                close(item)

    close(document["components"]["schemas"])
    for operation in operations(document).values():
        close(operation.get("responses", {}))
    return document


def _template(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")


@dataclass
class AnswerChecker:
    document: dict[str, Any]
    #: (METHOD, path template, status) of every answer checked.
    seen: set[tuple[str, str, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        # openapi-core reads application/json only; a problem is JSON too (RFC 9457).
        config = Config(extra_media_type_deserializers={PROBLEM_JSON: json.loads})
        self._openapi = OpenAPI.from_dict(closed(self.document), config=config)
        self._operations = operations(self.document)
        self._templates = [(_template(path), path) for path in self.document["paths"]]

    def operation_of(self, method: str, path: str) -> tuple[str, str] | None:
        for pattern, template in self._templates:
            if pattern.match(path) and (method, template) in self._operations:
                return method, template
        return None

    def check(self, response: httpx.Response) -> None:
        """Validate ``response`` against the document; fail naming the call otherwise."""
        response.read()
        request = response.request
        method, path = request.method, request.url.raw_path.decode().partition("?")[0]
        call = f"{method} {path} -> {response.status_code}"
        key = self.operation_of(method, path)
        if key is None:  # not a documented route: it must still answer a problem
            if response.status_code >= 400:
                self._check_problem(call, response, None)
            return
        content_type = response.headers.get("content-type", "").split(";")[0].strip()
        parts = urlsplit(str(request.url))
        mock_request = MockRequest(
            f"{parts.scheme}://{parts.netloc}",
            method,
            path,
            headers=dict(request.headers),
            data=request.content,
            content_type=request.headers.get("content-type", ""),
        )
        mock_response = MockResponse(
            response.content,
            status_code=response.status_code,
            headers=dict(response.headers),
            content_type=content_type,
        )
        try:
            self._openapi.validate_response(mock_request, mock_response)
        except Exception as error:  # openapi-core's errors carry the schema errors as causes
            causes = getattr(error, "schema_errors", None) or [error.__cause__]
            raise AssertionError(f"{call}: {error!r} {causes!r}\n{response.text[:2000]}") from None
        if response.status_code >= 400:
            self._check_problem(call, response, self._operations[key])
        self.seen.add((*key, response.status_code))

    def _check_problem(
        self, call: str, response: httpx.Response, operation: dict[str, Any] | None
    ) -> None:
        assert response.headers["content-type"] == PROBLEM_JSON, call
        body = response.json()
        assert body["status"] == response.status_code, (call, body)
        assert body["attestation"] == "hosted-ingest", (call, body)
        if operation is None:
            return
        answer = operation["responses"][str(response.status_code)]
        codes = answer["content"][PROBLEM_JSON].get("examples", {})
        if CORE_RULES not in answer["description"]:
            assert body["code"] in codes, f"{call}: code {body['code']!r} is not in {list(codes)}"

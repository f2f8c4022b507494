"""The OpenAPI document (docs/api.md): valid, honest about refusals, and matched by the real
answers of a running service (``recordseal serve``: granian, SQLite).

The checks walk every operation of the document, so a route added later is covered without
editing this file, except for one thing: its successful call goes into :data:`HAPPY`, and
the test says so when an operation has none.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate

from recordseal.web.openapi import BEARER
from recordseal.web.problems import MEDIA_TYPE as PROBLEM_JSON
from tests.servers import create_token, free_port, kill_service, start_service
from tests.web.openapi_checker import AnswerChecker, operations

MANIFEST = 'version = 1\n[[fleet]]\nid = "theirs"\ntenant_id = "globex"\n'
#: Larger than the largest body any route takes (a batch: 32 MiB).
OVERSIZE = 33 * 1024 * 1024
#: The refusals the service answers, each provoked below for real.
REFUSALS = {400, 401, 403, 404, 409, 410, 413, 415, 422, 429}


@dataclass
class Live:
    """A running service, its document, and a client whose every answer is checked."""

    document: dict[str, Any]
    checker: AnswerChecker
    client: httpx.Client
    auth: dict[str, str]
    state: dict[str, Any] = field(default_factory=dict)

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, path, **kwargs)

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.post(path, json=body, headers=self.auth if headers is None else headers)


@contextmanager
def live_service(data_dir: Path, env: dict[str, str]) -> Iterator[Live]:
    data_dir.mkdir(parents=True, exist_ok=True)
    token = create_token(data_dir, "acme")
    port = free_port()
    server = start_service(data_dir, port, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        document = httpx.get(f"{url}/schema/openapi.json").json()
        checker = AnswerChecker(document)
        hooks = {"response": [checker.check]}
        with httpx.Client(base_url=url, event_hooks=hooks, timeout=60) as client:
            yield Live(document, checker, client, {"Authorization": f"Bearer {token}"})
    finally:
        kill_service(server)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    folder = tmp_path_factory.mktemp("openapi")
    (folder / "fleets.toml").write_text(MANIFEST)
    env = {
        "RECORDSEAL_RATE_LIMIT_FAILED_TOKENS": "off",
        "RECORDSEAL_PANEL_FLEET_MANIFEST": str(folder / "fleets.toml"),
        "RECORDSEAL_SEAL_INTERVAL": "0.2",
    }
    with live_service(folder / "data", env) as service:
        yield service


# --- the document ---------------------------------------------------------------------------


def test_the_document_is_valid_openapi_with_the_package_version(live: Live) -> None:
    validate(live.document)
    assert live.document["info"]["version"] == version("recordseal")
    scheme = live.document["components"]["securitySchemes"][BEARER]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")


def test_every_operation_documents_its_refusals_as_problems(live: Live) -> None:
    for (method, path), operation in operations(live.document).items():
        where = f"{method} {path}"
        responses = operation["responses"]
        refusals = {int(status) for status in responses if int(status) >= 400}
        assert 500 in refusals, f"{where}: no 500 (use web/openapi.py documented())"
        # A store or journal that does not answer now: 503 with Retry-After, never a 500.
        unavailable = responses["503"]["content"][PROBLEM_JSON]["examples"]
        assert {"store_unavailable", "journal_unavailable"} <= set(unavailable), where
        retry = responses["503"]["headers"]["Retry-After"]
        assert retry["required"] == (
            set(unavailable) <= {"store_unavailable", "journal_unavailable"}
        ), where
        for status in refusals:
            content = responses[str(status)]["content"]
            assert list(content) == [PROBLEM_JSON], f"{where} {status}: {list(content)}"
            media = content[PROBLEM_JSON]
            assert media["schema"] == {"$ref": "#/components/schemas/Problem"}, where
            assert media["examples"], f"{where} {status}: no code documented"
            for code, example in media["examples"].items():
                assert (example["value"]["code"], example["value"]["status"]) == (code, status)
        secured = operation.get("security") == [{BEARER: []}]
        assert secured == (401 in refusals), f"{where}: the scheme and 401 go together"
        if secured:
            assert {401, 429} <= refusals, where
            assert "WWW-Authenticate" in responses["401"]["headers"], where
            assert "Retry-After" in responses["429"]["headers"], where
        if "requestBody" in operation:
            assert {400, 413, 415} <= refusals, where
        for status, answer in responses.items():
            if int(status) < 400:
                for media_type, media in (answer.get("content") or {}).items():
                    if media_type.startswith("text/plain"):
                        continue  # text by nature: the Prometheus exposition of /metrics
                    assert media["schema"] != {"type": "string"}, f"{where} {status}: untyped"


def test_every_operation_is_summarised_in_words(live: Live) -> None:
    """Not the handler's name (``PostRecord``, Litestar's default): a sentence of words."""
    for (method, path), operation in operations(live.document).items():
        summary = operation.get("summary", "")
        words = summary.split()
        assert len(words) >= 2, f"{method} {path}: summary {summary!r} is not words"
        assert not any(re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+", w) for w in words), (
            f"{method} {path}: summary {summary!r} holds a CamelCase name"
        )


def _properties(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every member of every object schema in the document (components and inline bodies)."""
    if isinstance(node, dict):
        yield from (node.get("properties") or {}).items()
        for value in node.values():
            yield from _properties(value)
    elif isinstance(node, list):
        for item in node:
            yield from _properties(item)


def _arms(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema, or the arms of its ``oneOf``/``anyOf`` that are not null."""
    arms = schema.get("oneOf") or schema.get("anyOf") or [schema]
    return [arm for arm in arms if arm.get("type") != "null"]


def test_timestamps_are_date_times(live: Live) -> None:
    timestamps = [
        (name, schema)
        for name, schema in _properties(live.document)
        if name.endswith("_at") or name in {"not_before", "not_after"}
    ]
    names = {name for name, _ in timestamps}
    assert {"occurred_at", "ingested_at", "created_at", "erased_at", "not_before"} <= names
    for name, schema in timestamps:
        for arm in _arms(schema):
            assert (arm.get("type"), arm.get("format")) == ("string", "date-time"), (name, schema)


def test_a_payload_is_any_json_object(live: Live) -> None:
    payloads = [schema for name, schema in _properties(live.document) if name == "payload"]
    # RecordOut's answer (PayloadOut), and the bodies of /v1/records and /v1/records:batch
    assert len(payloads) >= 3, payloads
    for schema in payloads:
        assert schema.get("type") == "object", schema
        assert schema.get("additionalProperties", True) in (True, {}), schema
        assert "properties" not in schema, schema
        assert "any JSON object" in schema.get("description", ""), schema


def test_the_docs_page_shows_schemas_with_their_references_resolved(live: Live) -> None:
    page = live.call("GET", "/schema")
    assert page.status_code == 200
    assert "$ref" not in page.text
    sections = page.text.split('<section class="card" id="')
    (ingest,) = [part for part in sections if part.startswith('post-/v1/records">')]
    # the answer's schema (RecordOut) and the refusals' (Problem) in the operation itself
    assert "chain_leaf" in ingest
    assert "the rule that refused the request" in ingest
    assert "Ingest a record" in ingest
    # and its example request, whole
    assert "Example: an order" in ingest and "order.placed" in ingest


def test_litestars_own_error_shape_is_gone(live: Live) -> None:
    def shapes(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            yield node
            for value in node.values():
                yield from shapes(value)
        elif isinstance(node, list):
            for item in node:
                yield from shapes(item)

    for schema in shapes(live.document):
        assert not {"status_code", "extra"} <= set(schema.get("properties", {})), schema


# --- real answers -----------------------------------------------------------------------------

RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 1250, "currency": "EUR", "note": "first"},
}


def _stream(live: Live) -> httpx.Response:
    return live.post("/v1/streams", {"name": "orders", "declarations": {"o:/amount": "money"}})


def _record(live: Live) -> httpx.Response:
    answer = live.post("/v1/records", RECORD, headers={**live.auth, "Idempotency-Key": "k-1"})
    live.state["record_id"] = answer.json()["record_id"]
    return answer


def _sealed_view(live: Live) -> httpx.Response:
    path = f"/v1/records/{live.state['record_id']}"
    deadline = time.monotonic() + 30
    answer = live.call("GET", path, headers=live.auth)
    while answer.json()["seal"] is None and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = live.call("GET", path, headers=live.auth)
    assert answer.json()["seal"] is not None, "the record was not sealed within 30 s"
    return answer


def _disclosure(live: Live) -> httpx.Response:
    path = f"/v1/records/{live.state['record_id']}/disclosure"
    answer = live.post(path, {"fields": ["o:/amount"], "coverage": {"from_seq": 1, "to_seq": 1}})
    live.state["bundle"] = answer.content
    return answer


def _listed_records(live: Live) -> httpx.Response:
    """A first page with a next one (its Link), then the next page: sealed and pending seals."""
    first = live.call("GET", "/v1/streams/orders/records?limit=1", headers=live.auth)
    assert first.links["next"]["url"] == first.json()["next"]
    return live.call("GET", first.json()["next"], headers=live.auth)


#: A successful call of every operation, in this order (each may use what an earlier one
#: left in ``live.state``). A new route adds its call here.
HAPPY: dict[tuple[str, str], Callable[[Live], httpx.Response]] = {
    ("GET", "/"): lambda live: live.call("GET", "/", headers={"Accept": "application/json"}),
    ("GET", "/health"): lambda live: live.call("GET", "/health"),
    ("GET", "/readyz"): lambda live: live.call("GET", "/readyz"),
    ("GET", "/metrics"): lambda live: live.call("GET", "/metrics"),
    ("POST", "/v1/streams"): _stream,
    ("GET", "/v1/streams"): lambda live: live.call("GET", "/v1/streams", headers=live.auth),
    ("GET", "/v1/streams/{name}"): lambda live: live.call(
        "GET", "/v1/streams/orders", headers=live.auth
    ),
    ("POST", "/v1/records"): _record,
    ("POST", "/v1/records:batch"): lambda live: live.post(
        "/v1/records:batch",
        {"records": [{**RECORD, "subject_id": "c-2"}, {**RECORD, "payload": {"amount": 1.5}}]},
    ),
    ("GET", "/v1/records/{record_id}"): _sealed_view,
    ("GET", "/v1/streams/{name}/records"): _listed_records,
    ("GET", "/v1/records/{record_id}/payload"): lambda live: live.call(
        "GET", f"/v1/records/{live.state['record_id']}/payload", headers=live.auth
    ),
    ("POST", "/v1/records/{record_id}/disclosure"): _disclosure,
    ("GET", "/v1/keys"): lambda live: live.call("GET", "/v1/keys"),
    ("GET", "/v1/trust"): lambda live: live.call("GET", "/v1/trust"),
    ("POST", "/v1/verify"): lambda live: live.call(
        "POST",
        "/v1/verify",
        content=live.state["bundle"],
        headers={"Content-Type": "application/json"},
    ),
    ("POST", "/v1/proofs:refresh"): lambda live: live.call(
        "POST",
        "/v1/proofs:refresh",
        content=live.state["bundle"],
        headers={"Content-Type": "application/json"},
    ),
    ("POST", "/v1/subjects/{subject_id}/erase"): lambda live: live.post(
        "/v1/subjects/customer-1/erase", None
    ),
}


def _concrete(path: str) -> str:
    """A path of the template, with an id that names nothing."""
    return path.replace("{", "unknown-").replace("}", "")


def _probe_every_operation(live: Live) -> None:
    """What every bearer route and every body route answers, whatever it does."""
    for (method, path), operation in operations(live.document).items():
        target = _concrete(path)
        secured = operation.get("security") == [{BEARER: []}]
        if secured:
            for headers in ({}, {"Authorization": "Bearer not-a-token"}):
                answer = live.call(method, target, headers=headers, json={})
                assert answer.status_code == 401, (method, path, answer.text)
                assert answer.headers["www-authenticate"] == "Bearer"
        if "requestBody" not in operation:
            continue
        auth = live.auth if secured else {}
        # A bundle to verify is never refused for its content: not JSON, it is FAILED (200).
        not_json = 200 if (method, path) == ("POST", "/v1/verify") else 400
        for body, content_type, status in (
            (b"{}", "text/plain", 415),
            (b'{"fields": ', "application/json", not_json),
            (b'{"a": 1, "a": 2}', "application/json", not_json),
            (b'"' + b"x" * OVERSIZE + b'"', "application/json", 413),
        ):
            headers = {**auth, "Content-Type": content_type}
            answer = live.call(method, target, content=body, headers=headers)
            assert answer.status_code == status, (method, path, status, answer.text[:300])


def _provoke_refusals(live: Live) -> None:
    """Each kind of refusal, as the service really answers it."""
    record = f"/v1/records/{live.state['record_id']}"
    alive = {**RECORD, "subject_id": "c-4"}
    keyed = {**live.auth, "Idempotency-Key": "k-1"}
    expected = [
        (live.post("/v1/streams", {"name": "orders"}), 409, "stream_exists"),
        (live.post("/v1/streams", {"name": "x", "fleet": "theirs"}), 403, "fleet_forbidden"),
        (live.post("/v1/streams", {"name": "bad name"}), 422, "stream_name_invalid"),
        (live.post("/v1/streams", {"name": "s", "strict": "yes"}), 400, "request_invalid"),
        (live.post("/v1/records", {**alive, "stream": "none"}), 404, "stream_not_found"),
        (live.call("GET", "/v1/streams/none", headers=live.auth), 404, "stream_not_found"),
        (
            live.call("GET", "/v1/streams/none/records", headers=live.auth),
            404,
            "stream_not_found",
        ),
        (live.call("GET", "/v1/streams?limit=1001", headers=live.auth), 422, "limit_invalid"),
        (live.call("GET", "/v1/streams?after=%20", headers=live.auth), 422, "after_invalid"),
        (
            live.call("GET", "/v1/streams/orders/records?from_seq=0", headers=live.auth),
            422,
            "from_seq_invalid",
        ),
        (
            live.call("GET", "/v1/streams/orders/records?limit=x", headers=live.auth),
            422,
            "limit_invalid",
        ),
        (live.post("/v1/records", {**alive, "payload": {"amount": "x"}}), 422, "value_type"),
        (
            live.post("/v1/records", {**alive, "payload": {"n": "x" * 300_000}}),
            413,
            "payload_too_large",
        ),
        (
            live.post("/v1/records", {**alive, "subject_id": "new"}, headers=keyed),
            422,
            "idempotency_key_reused",
        ),
        (live.post("/v1/records", {**alive, "record_type": ""}), 422, "record_type_invalid"),
        (live.post("/v1/records", RECORD), 410, "subject_erased"),
        (live.post("/v1/records:batch", {"records": []}), 422, "batch_size_invalid"),
        (live.call("GET", f"{record}/payload", headers=live.auth), 410, "subject_erased"),
        (live.post(f"{record}/disclosure", {"fields": ["o:/amount"]}), 410, "subject_erased"),
        (live.call("GET", "/v1/records/unknown", headers=live.auth), 404, "record_not_found"),
        (
            live.post("/v1/records/unknown/disclosure", {"fields": []}),
            404,
            "record_not_found",
        ),
        (live.post("/v1/subjects/nobody/erase", None), 404, "subject_not_found"),
        (live.call("GET", "/v1/nowhere", headers=live.auth), 404, "not_found"),
        (live.call("DELETE", "/v1/keys"), 405, "method_not_allowed"),
    ]
    for answer, status, code in expected:
        assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text


def _batch_refusal_in_results(live: Live) -> None:
    answer = live.post(
        "/v1/records:batch", {"records": [{**RECORD, "subject_id": "c-3", "stream": "none"}]}
    )
    (result,) = answer.json()["results"]
    assert (result["status"], result["problem"]["code"]) == (404, "stream_not_found")


def _unknown_field_of_a_live_record(live: Live) -> None:
    posted = live.post("/v1/records", {**RECORD, "subject_id": "c-9"}).json()
    path = f"/v1/records/{posted['record_id']}/disclosure"
    answer = live.post(path, {"fields": ["o:/nothing"]})
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_field")


def test_real_answers_match_the_document(live: Live) -> None:
    documented = set(operations(live.document))
    missing = documented - set(HAPPY)
    assert not missing, f"add a successful call of {sorted(missing)} to HAPPY"
    _probe_every_operation(live)
    for key, call in HAPPY.items():
        if key in documented:
            answer = call(live)
            assert answer.status_code < 300, (key, answer.text)
    _unknown_field_of_a_live_record(live)
    _batch_refusal_in_results(live)
    _provoke_refusals(live)
    failed = live.call("POST", "/v1/verify", json={"not": "a bundle"})
    assert failed.json()["verdict"] == "FAILED"
    seen = live.checker.seen
    answered = {(method, path) for method, path, status in seen if status < 300}
    assert answered == documented, documented - answered
    assert REFUSALS - {429} <= {status for _, _, status in seen}


#: The answer to an example other than success: a bundle made by another service's keys
#: names no record here. Every other example is accepted (2xx).
EXAMPLE_REFUSED = {("POST", "/v1/proofs:refresh"): (404, "record_not_found")}


def test_every_request_body_has_an_example_the_route_accepts(tmp_path: Path) -> None:
    """Posted in the document's order to a fresh tenant: the stream example makes the stream
    the record example goes into, whose record the disclosure example discloses."""
    with live_service(tmp_path / "data", {"RECORDSEAL_SEAL_INTERVAL": "0.2"}) as service:
        record_id = None
        posted = 0
        for (method, path), operation in operations(service.document).items():
            if "requestBody" not in operation:
                continue
            media = operation["requestBody"]["content"]["application/json"]
            assert media.get("examples"), f"{method} {path}: no example request"
            target = path.replace("{record_id}", str(record_id))
            secured = operation.get("security") == [{BEARER: []}]
            for name, example in media["examples"].items():
                headers = service.auth if secured else {}
                answer = service.call(method, target, json=example["value"], headers=headers)
                refused = EXAMPLE_REFUSED.get((method, path))
                if refused is None:
                    assert answer.status_code < 300, (method, path, name, answer.text[:300])
                else:
                    assert (answer.status_code, answer.json()["code"]) == refused, answer.text
                if path == "/v1/records":
                    record_id = answer.json()["record_id"]
                posted += 1
        assert record_id is not None and posted >= 6
        # every answer was also checked against the document (the client's hook)
        assert {(m, p) for m, p, _ in service.checker.seen} >= {
            key for key, op in operations(service.document).items() if "requestBody" in op
        }


def test_rate_limited_answers_match_the_document(tmp_path: Path) -> None:
    env = {"RECORDSEAL_RATE_LIMIT_FAILED_TOKENS": "2/3600"}
    with live_service(tmp_path / "data", env) as service:
        bearer = [
            key
            for key, operation in operations(service.document).items()
            if operation.get("security") == [{BEARER: []}]
        ]
        wrong = {"Authorization": "Bearer not-a-token"}
        for _ in range(2):
            assert service.call("GET", "/v1/records/x", headers=wrong).status_code == 401
        for method, path in bearer:
            answer = service.call(method, _concrete(path), headers=wrong, json={})
            assert answer.status_code == 429, (method, path)
            assert int(answer.headers["retry-after"]) > 0
        assert {(*key, 429) for key in bearer} <= service.checker.seen


def test_the_checker_refuses_answers_the_document_does_not_describe(live: Live) -> None:
    """The check above is not vacuous: a member, a status or a code the document does not
    name fails it."""
    answer = live.client.get("/health")
    undocumented_member = copy.deepcopy(live.document)
    del undocumented_member["components"]["schemas"]["Health"]["properties"]["status"]
    with pytest.raises(AssertionError, match="GET /health -> 200"):
        AnswerChecker(undocumented_member).check(answer)
    refused = live.client.get("/v1/records/x", headers={"Authorization": "Bearer nope"})
    unknown_code = copy.deepcopy(live.document)
    examples = unknown_code["paths"]["/v1/records/{record_id}"]["get"]["responses"]["401"]
    examples["content"][PROBLEM_JSON]["examples"] = {"other": {"value": {}}}
    with pytest.raises(AssertionError, match="code 'unauthenticated' is not in"):
        AnswerChecker(unknown_code).check(refused)
    undeclared_status = copy.deepcopy(live.document)
    del undeclared_status["paths"]["/v1/records/{record_id}"]["get"]["responses"]["401"]
    with pytest.raises(AssertionError, match="-> 401"):
        AnswerChecker(undeclared_status).check(refused)

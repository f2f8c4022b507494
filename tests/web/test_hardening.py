"""Issue 15 in process: strict bodies, the spec's ``attestation``, safe pages, rate limits.

(The same service as a real process, under hostile input, is ``test_hostile_server.py``.)
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.ops.tokens import create_token
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession
from recordseal.settings import Rate, Settings
from recordseal.web.app import create_app
from recordseal.web.ratelimit import RateLimiter
from tests.panel_support import grant_in

ENVELOPE = (
    '{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
    '"subject_id":"s","payload":{"amount":1}}'
)
JSON = {"Content-Type": "application/json"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def from_address(app: Litestar) -> Any:
    """The app, with the client address taken from ``X-Test-Client`` (several clients)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"x-test-client")
            if host is not None:
                scope = {**scope, "client": (host.decode(), 50000)}
        await app(scope, receive, send)

    return wrapped


class Service:
    def __init__(self, app: Litestar, client: TestClient[Any], settings: Settings) -> None:
        self.app, self.client, self.settings = app, client, settings
        self.token = asyncio.run(create_token(settings, "acme", "t"))
        self.auth = {"Authorization": f"Bearer {self.token}", **JSON}
        self.clock = Clock()
        app.state.rate_limiter = RateLimiter(
            {"bearer": Rate(3, 60), "login": Rate(2, 60), "sso": Rate(2, 60)},
            settings.data_dir / "ratelimit.sqlite3",
            clock=self.clock,
        )

    def post(self, path: str, body: str | bytes, **headers: str) -> Any:
        return self.client.post(path, content=body, headers={**self.auth, **headers})

    def panel_cookie(self) -> dict[str, str]:
        panel = self.app.state.panel
        grant_in(self.client, "op-1", store=panel.store)
        token = panel.keyring.issue(LegacySession("op-1", int(time.time()) + 600))
        return {"Cookie": f"{COOKIE_NAME}={token}"}


@pytest.fixture
def service(tmp_path) -> Iterator[Service]:
    settings = Settings(data_dir=tmp_path, seal_interval=0)
    app = create_app(settings)
    with TestClient(from_address(app)) as client:
        service = Service(app, client, settings)
        assert service.post("/v1/streams", '{"name":"orders"}').status_code == 201
        yield service


# --- strict bodies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"name":"s2","declarations":{"o:/a":"money"},"strict":1}', "strict"),
        ('{"name":"s2","declarations":{"o:/a":"money"},"strict":"true"}', "strict"),
        ('{"name":2}', "name"),
        ('{"name":"s2","declarations":{"o:/a":1}}', "declarations[...]"),
    ],
)
def test_stream_bodies_are_decoded_without_coercion(service: Service, body: str, field: str):
    response = service.post("/v1/streams", body)
    assert response.status_code == 400, response.text
    assert (response.json()["code"], response.json()["field"]) == (
        "request_invalid",
        field,
    )  # msgspec writes map keys as [...]


def test_coverage_numbers_are_not_read_from_strings(service: Service) -> None:
    record_id = service.post("/v1/records", ENVELOPE).json()["record_id"]
    body = '{"fields":["o:/amount"],"coverage":{"from_seq":"1","to_seq":1}}'
    response = service.post(f"/v1/records/{record_id}/disclosure", body)
    assert response.status_code == 400
    assert response.json()["field"] == "coverage.from_seq"


@pytest.mark.parametrize("member", ["stream", "subject_id", "payload", "record_type"])
def test_an_envelope_with_a_repeated_member_is_refused(service: Service, member: str) -> None:
    repeated = ENVELOPE[:-1] + f',"{member}":' + ('{"b":2}}' if member == "payload" else '"x"}')
    response = service.post("/v1/records", repeated)
    assert response.status_code == 400, response.text
    assert (response.json()["code"], response.json()["field"]) == ("duplicate_member", member)
    assert service.post("/v1/records", ENVELOPE).json()["seq"] == 1  # nothing was stored


def test_repeated_members_are_refused_in_every_json_body(service: Service) -> None:
    record_id = service.post("/v1/records", ENVELOPE).json()["record_id"]
    bodies = {
        "/v1/streams": '{"name":"s3","declarations":{"o:/a":"money","o:/a":"text"}}',
        "/v1/records:batch": '{"records":[],"records":[' + ENVELOPE + "]}",
        f"/v1/records/{record_id}/disclosure": '{"fields":["o:/amount"],"fields":[]}',
    }
    for path, body in bodies.items():
        response = service.post(path, body)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["code"] == "duplicate_member"
    # A bundle to verify is the exception: it is malformed (docs/bundle.md, rule M1), as
    # `recordseal verify` reports it, not a refused request.
    response = service.post("/v1/verify", '{"format":"recordseal/bundle/v1","format":"x"}')
    assert response.status_code == 200, response.text
    assert response.json()["verdict"] == "FAILED"
    assert "duplicate_member" in response.json()["checks"][0]["detail"]


def test_a_repeated_payload_member_in_a_batch_names_the_item(service: Service) -> None:
    item = ENVELOPE.replace('{"amount":1}', '{"amount":1,"amount":2}')
    response = service.post("/v1/records:batch", '{"records":[' + ENVELOPE + "," + item + "]}")
    assert response.status_code == 422
    assert (response.json()["code"], response.json()["field"]) == (
        "duplicate_member",
        "records[1].payload",
    )
    assert "o:/amount" in response.json()["detail"]


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
        "application/jsonx",
    ],
)
def test_bodies_not_declared_json_are_415(service: Service, content_type: str | None) -> None:
    headers = {"Authorization": service.auth["Authorization"]}
    if content_type:
        headers["Content-Type"] = content_type
    for path in ("/v1/records", "/v1/streams", "/v1/records:batch", "/v1/verify"):
        response = service.client.post(path, content=ENVELOPE, headers=headers)
        assert response.status_code == 415, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=UTF-8", 'application/json;charset="utf-8"']
)
def test_utf8_json_media_types_are_accepted(service: Service, content_type: str) -> None:
    assert (
        service.post("/v1/records", ENVELOPE, **{"Content-Type": content_type}).status_code == 201
    )


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_case_insensitive(service: Service, scheme: str) -> None:
    headers = {"Authorization": f"{scheme}  {service.token}"}
    assert service.post("/v1/records", ENVELOPE, **headers).status_code == 201


@pytest.mark.parametrize(
    "value",
    ["Basic abc", "Bearer", "Bearer a b", "Bearer t%", "Bearer" + "x" * 2000, "Bearerx"],
)
def test_malformed_authorization_is_401(service: Service, value: str) -> None:
    response = service.client.post(
        "/v1/records", content=ENVELOPE, headers={"Authorization": value, **JSON}
    )
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"


def test_invalid_utf8_and_absurd_depth_are_400_not_500(service: Service) -> None:
    assert (
        service.post("/v1/records", ENVELOPE.encode().replace(b'"s"', b'"\xff"')).status_code == 400
    )
    deep = ENVELOPE.replace('{"amount":1}', '{"a":' + "[" * 50_000)
    response = service.post("/v1/records", deep)
    assert response.status_code == 422
    assert response.json()["code"] == "depth_exceeded"
    declarations = '{"name":"d","declarations":' + '{"a":' * 20_000 + '"x"' + "}" * 20_001
    response = service.post("/v1/streams", declarations)
    assert (response.status_code, response.json()["code"]) == (400, "depth_exceeded")


# --- attestation ----------------------------------------------------------------------------


def test_every_record_api_answer_carries_attestation(service: Service) -> None:
    record = service.post("/v1/records", ENVELOPE).json()
    rid = record["record_id"]
    answers = [
        service.post("/v1/streams", '{"name":"other"}'),
        service.post("/v1/records:batch", '{"records":[' + ENVELOPE + "]}"),
        service.client.get(f"/v1/records/{rid}", headers=service.auth),
        service.client.get(f"/v1/records/{rid}/payload", headers=service.auth),
        service.post("/v1/records", "{"),  # 400
        service.post("/v1/records", ENVELOPE, Authorization="Bearer nope"),  # 401
        service.client.get("/v1/records/nope", headers=service.auth),  # 404
        service.post("/v1/streams", '{"name":"other"}'),  # 409
        service.post("/v1/records", ENVELOPE, **{"Content-Type": "text/plain"}),  # 415
        service.post("/v1/records", ENVELOPE.replace('{"amount":1}', "{}")),  # 422
    ]
    bundle = service.post(f"/v1/records/{rid}/disclosure", '{"fields":["o:/amount"]}')
    answers += [service.post("/v1/verify", bundle.content)]
    answers += [service.post("/v1/subjects/s/erase", b"", **{"Content-Type": "text/plain"})]
    answers += [service.client.get(f"/v1/records/{rid}/payload", headers=service.auth)]  # 410
    assert record["attestation"] == "hosted-ingest"
    for answer in answers:
        assert answer.json()["attestation"] == "hosted-ingest", answer.text
    # The bundle is the document the verifier reads; its signed header carries the member.
    assert bundle.json()["header"]["attestation"] == "hosted-ingest"
    assert [a.status_code for a in answers[4:10]] == [400, 401, 404, 409, 415, 422]


def test_the_openapi_schema_documents_attestation(service: Service) -> None:
    schema = service.client.get("/schema/openapi.json").json()
    text = str(schema)
    components = schema["components"]["schemas"]
    for name in ("StreamOut", "RecordView", "PayloadOut", "ErasureOut", "RecordOut", "Problem"):
        assert "hosted-ingest" in str(components.get(name, text)), name
    verify = schema["paths"]["/v1/verify"]["post"]["responses"]["200"]["content"]
    reference = verify["application/json"]["schema"]["$ref"]
    assert "attestation" in components[reference.rsplit("/", 1)[-1]]["properties"]


# --- safe pages -----------------------------------------------------------------------------

PAGES = ["/login", "/login/register?token=bad", "/verify-record", "/schema", "/schema/swagger"]
PAGES += ["/schema/redoc", "/tenants", "/tenants/nope"]


def page(service: Service, path: str) -> Any:
    headers = service.panel_cookie() if path.startswith("/tenants") else {}
    response = service.client.get(path, headers=headers)
    assert response.headers["content-type"].startswith("text/html"), path
    return response


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_the_security_headers(service: Service, path: str) -> None:
    headers = page(service, path).headers
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert "'self'" in policy or "default-src 'none'" in policy
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] in ("same-origin", "no-referrer")
    assert headers["cache-control"] == "no-store"


@pytest.mark.parametrize("path", PAGES)
def test_no_page_loads_anything_from_elsewhere_or_inline(service: Service, path: str) -> None:
    html = page(service, path).text
    for reference in re.findall(r'\b(?:src|href|action)\s*=\s*"([^"]*)"', html):
        assert reference.startswith(("/", "#")), (path, reference)
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), path  # no inline script
    assert not re.search(r"\son[a-z]+\s*=", html), path  # no inline handler
    if path != "/verify-record":  # that page's own policy allows its one style by hash
        assert "<style" not in html and " style=" not in html, path


def test_the_docs_render_the_operations_without_script(service: Service) -> None:
    html = service.client.get("/schema").text
    assert "<script" not in html
    assert "POST /v1/records" in html and "hosted-ingest" in html
    assert "Authentication: <code>bearer</code> token." in html
    assert "Codes: <code>stream_exists</code>" in html
    assert service.client.get("/schema/openapi.json").status_code == 200


def test_the_panel_assets_are_served_by_the_app(service: Service) -> None:
    script = service.client.get("/static/panel/passkey.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    style = service.client.get("/static/panel/panel.css")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert script.headers["x-content-type-options"] == "nosniff"


def test_payloads_bundles_and_new_tokens_are_never_cached(service: Service) -> None:
    rid = service.post("/v1/records", ENVELOPE).json()["record_id"]
    payload = service.client.get(f"/v1/records/{rid}/payload", headers=service.auth)
    bundle = service.post(f"/v1/records/{rid}/disclosure", '{"fields":["o:/amount"]}')
    cookie = service.panel_cookie()
    csrf = service.client.get("/tenants", headers={**cookie, "Accept": "application/json"})
    assert csrf.status_code == 200
    token = service.client.post(
        "/tenants/acme/tokens",
        json={"label": "ci"},
        headers={**cookie, "Accept": "application/json", "X-CSRF-Token": "x"},
    )
    assert token.status_code in (403, 404)  # no such tenant in this panel; still never cached
    for answer in (payload, bundle, token, csrf):
        assert answer.headers["cache-control"] == "no-store"


# --- rate limits ----------------------------------------------------------------------------


def bad(service: Service, address: str = "10.0.0.1") -> Any:
    return service.post(
        "/v1/records", ENVELOPE, Authorization="Bearer wrong", **{"X-Test-Client": address}
    )


def test_failed_tokens_are_limited_per_address_and_the_limit_resets(service: Service) -> None:
    assert [bad(service).status_code for _ in range(3)] == [401, 401, 401]
    throttled = bad(service)
    assert throttled.status_code == 429
    assert throttled.headers["content-type"] == "application/problem+json"
    assert (throttled.json()["code"], throttled.json()["attestation"]) == (
        "rate_limited",
        "hosted-ingest",
    )
    assert 1 <= int(throttled.headers["retry-after"]) <= 60
    assert bad(service, "10.0.0.2").status_code == 401  # another address has its own count
    service.clock.now += int(throttled.headers["retry-after"])
    assert bad(service).status_code == 401  # a new window


def test_a_throttled_address_slows_no_ingest(service: Service) -> None:
    for _ in range(5):
        bad(service)
    assert bad(service).status_code == 429
    # Valid tokens are served from the throttled address and from any other.
    for address in ("10.0.0.1", "10.0.0.9"):
        for _ in range(5):
            response = service.post("/v1/records", ENVELOPE, **{"X-Test-Client": address})
            assert response.status_code == 201
    batch = service.post(
        "/v1/records:batch", '{"records":[' + ENVELOPE + "]}", **{"X-Test-Client": "10.0.0.1"}
    )
    assert batch.status_code == 200


def test_passkey_ceremonies_are_limited(service: Service) -> None:
    def start() -> int:
        response = service.client.post(
            "/login/authenticate/start",
            json={},
            headers={
                "Origin": "http://localhost",
                "Host": "localhost",
                "X-Test-Client": "10.1.1.1",
            },
        )
        return response.status_code

    statuses = [start() for _ in range(3)]
    assert statuses[2] == 429 and 429 not in statuses[:2]
    service.clock.now += 60
    assert start() != 429


def test_sso_start_and_callbacks_are_limited(service: Service) -> None:
    address = {"X-Test-Client": "10.2.2.2"}
    start = [service.client.get("/sso/nobody/start", headers=address) for _ in range(2)]
    assert [r.status_code for r in start] == [404, 404]
    assert service.client.get("/sso/nobody/callback?state=x", headers=address).status_code == 429
    posted = service.client.post("/sso/nobody/callback", json={}, headers=address)
    assert posted.status_code == 429
    assert posted.headers["retry-after"]
    assert (
        service.client.get("/sso/nobody/start", headers={"X-Test-Client": "10.2.2.3"}).status_code
        == 404
    )


def test_rate_settings_parse_and_refuse_nonsense() -> None:
    assert Rate.parse("20/60") == Rate(20, 60)
    assert Rate.parse("5") == Rate(5, 60)
    assert Rate.parse("off") is None and Rate.parse("0") is None
    for text in ("x/60", "-1/60", "5/0"):
        with pytest.raises(ValueError):
            Rate.parse(text)

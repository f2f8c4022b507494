"""The ingest routes served ahead of the framework (web/ingest_gate.py): the same answers as
the framework's routes, byte for byte where nothing differs by nature (record ids, times),
the same headers, and each route's body limit checked before the body is parsed."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal import metrics
from recordseal.ops.tokens import create_token
from recordseal.settings import Settings
from recordseal.web.app import create_app
from recordseal.web.ingest import MAX_BATCH_BYTES
from recordseal.web.observe import RequestObserver
from recordseal.web.plugin import RecordServicePlugin
from recordseal.web.unread_body import CloseUnreadBodies

JSON = {"Content-Type": "application/json"}


def record(subject: str = "customer-1", **changes: Any) -> dict[str, Any]:
    return {
        "stream": "orders",
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": subject,
        "payload": {"amount": "12.50"},
        **changes,
    }


def framework_app(settings: Settings) -> Litestar:
    """The application as it was before the gate, in the same outer layers: every request
    through Litestar's router."""
    app = Litestar(plugins=[RecordServicePlugin(settings)])
    outer = CloseUnreadBodies(app.asgi_handler)
    app.asgi_handler = RequestObserver(outer, access_log=settings.access_log)
    return app


@pytest.fixture
def settings(tmp_path: Any) -> Settings:
    return Settings(data_dir=tmp_path)


@pytest.fixture
def bearer(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"}


@pytest.fixture
def gated(settings: Settings, bearer: dict[str, str]) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/streams", json={"name": "orders"}, headers=bearer).is_success
        yield client


#: (route, headers besides the token's, body, whether the token is sent): one of each kind of
#: answer the two routes give.
CASES = {
    "record stored": ("/v1/records", JSON, json.dumps(record()).encode(), True),
    "no token": ("/v1/records", JSON, json.dumps(record()).encode(), False),
    "batch, no token": ("/v1/records:batch", JSON, b'{"records": []}', False),
    "not json media type": (
        "/v1/records", {"Content-Type": "text/plain"}, json.dumps(record()).encode(), True
    ),
    "not json text": ("/v1/records", JSON, b'{"stream": ', True),
    "envelope invalid": ("/v1/records", JSON, json.dumps(record(record_type="")).encode(), True),
    "stream unknown": ("/v1/records", JSON, json.dumps(record(stream="nope")).encode(), True),
    "payload too large": (
        "/v1/records", JSON,
        json.dumps(record(payload={"a": "x" * 300_000})).encode(), True,
    ),
    "idempotency key invalid": (
        "/v1/records", {**JSON, "Idempotency-Key": "no spaces"},
        json.dumps(record()).encode(), True,
    ),
    "batch stored and refused": (
        "/v1/records:batch", JSON,
        json.dumps({"records": [record("c-2"), record("c-3", stream="nope")]}).encode(), True,
    ),
    "batch empty": ("/v1/records:batch", JSON, b'{"records": []}', True),
}  # fmt: skip

#: Members of an answer that differ between two stores of the same record.
VARYING = {"record_id", "root", "chain_leaf", "header", "signature", "seq"}


def comparable(answer: Any) -> Any:
    if isinstance(answer, dict):
        return {k: comparable(v) for k, v in answer.items() if k not in VARYING}
    if isinstance(answer, list):
        return [comparable(v) for v in answer]
    return answer


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_gate_answers_as_the_framework_routes_did(
    case: str, settings: Settings, bearer: dict[str, str], gated: TestClient[Litestar]
) -> None:
    path, headers, body, with_token = CASES[case]
    headers = {**headers, **(bearer if with_token else {})}
    through_gate = gated.post(path, content=body, headers=headers)
    with TestClient(framework_app(settings)) as framework:
        through_framework = framework.post(path, content=body, headers=headers)
    assert through_gate.status_code == through_framework.status_code, case
    assert set(through_gate.headers) == set(through_framework.headers), case
    for name in ("content-type", "www-authenticate", "retry-after", "x-content-type-options"):
        assert through_gate.headers.get(name) == through_framework.headers.get(name), name
    assert comparable(through_gate.json()) == comparable(through_framework.json()), case


def records_of(client: TestClient[Litestar], bearer: dict[str, str]) -> int:
    answer = client.get("/v1/streams/orders", headers=bearer).json()
    return int(answer["record_count"])


def test_a_single_record_over_512_kib_is_refused_before_its_body_is_parsed(
    gated: TestClient[Litestar], bearer: dict[str, str]
) -> None:
    """Not JSON at all, and over the limit: the limit answers (nothing was parsed), and a
    valid record's body over the limit is refused the same way; nothing is stored."""
    for body in (b"x" * (512 * 1024 + 1), json.dumps(record(payload={"a": "x" * 600_000}))):
        answer = gated.post("/v1/records", content=body, headers={**JSON, **bearer})
        assert answer.status_code == 413
        assert answer.json()["code"] == "request_too_large"
        assert answer.headers["content-type"] == "application/problem+json"
    assert records_of(gated, bearer) == 0
    at_limit = json.dumps(record(payload={"a": "x" * 200_000})).encode()
    assert len(at_limit) < 512 * 1024
    assert (
        gated.post("/v1/records", content=at_limit, headers={**JSON, **bearer}).status_code == 201
    )


def test_a_body_streamed_past_the_limit_without_a_length_is_cut_off(
    gated: TestClient[Litestar], bearer: dict[str, str]
) -> None:
    """Chunked, with no Content-Length: the gate stops at the limit, not at the end."""
    sent: list[int] = []

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            sent.append(1)
            yield b"x" * 65_536

    answer = gated.post("/v1/records", content=chunks(), headers={**JSON, **bearer})
    assert answer.status_code == 413 and answer.json()["code"] == "request_too_large"
    assert records_of(gated, bearer) == 0


def test_a_batch_over_32_mib_is_refused_from_its_length(
    gated: TestClient[Litestar], bearer: dict[str, str]
) -> None:
    answer = gated.post(
        "/v1/records:batch", content=b" " * (MAX_BATCH_BYTES + 1), headers={**JSON, **bearer}
    )
    assert answer.status_code == 413 and answer.json()["code"] == "request_too_large"


def test_other_methods_on_the_ingest_paths_stay_with_the_framework(
    gated: TestClient[Litestar], bearer: dict[str, str]
) -> None:
    answer = gated.get("/v1/records", headers=bearer)
    assert answer.status_code == 405
    assert answer.json()["code"] == "method_not_allowed"


def test_requests_through_the_gate_are_counted_and_logged(
    gated: TestClient[Litestar], bearer: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    def counted(status: str) -> float:
        return float(metrics.REQUESTS.labels("POST", "/v1/records", status)._value.get())

    ingested = metrics.RECORDS_INGESTED._value.get()
    before = counted("201"), counted("401")
    with caplog.at_level(logging.INFO, logger="recordseal.access"):
        assert gated.post("/v1/records", json=record(), headers=bearer).status_code == 201
        assert gated.post("/v1/records", json=record()).status_code == 401
    assert (counted("201"), counted("401")) == (before[0] + 1, before[1] + 1)
    assert metrics.RECORDS_INGESTED._value.get() == ingested + 1
    lines = [r for r in caplog.records if r.name == "recordseal.access"]
    seen = [
        (r.route, r.status, getattr(r, "tenant", None), getattr(r, "code", None)) for r in lines
    ]  # type: ignore[attr-defined]
    assert seen == [
        ("/v1/records", 201, "acme", None),
        ("/v1/records", 401, None, "unauthenticated"),
    ]

"""Refusals that teach (issue 33, item 3), as a client reads them from a real service process:
a path written without its letters is answered with the committed path that was meant, and
money refused with the unit it is counted in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import create_token, free_port, kill_service, start_service

SYNTAX = (
    "a field is named by its committed path: one letter per step (o an object member, a an"
    " array element), a colon, then the JSON Pointer, as in o:/amount or oao:/items/0/sku"
)
PAYLOAD = {"amount": 1500, "note": "two books", "items": [{"sku": "b-1"}, {"sku": "b-2"}]}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data: Path = tmp_path_factory.mktemp("teaching")
    port = free_port()
    server = start_service(data, port)
    token = create_token(data, "acme")
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
        ) as client:
            created = client.post(
                "/v1/streams", json={"name": "orders", "declarations": {"o:/amount": "money"}}
            )
            assert created.status_code == 201, created.text
            yield client
    finally:
        kill_service(server)


def post(api: httpx.Client, payload: object) -> httpx.Response:
    record = {
        "stream": "orders",
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": "customer-17",
        "payload": payload,
    }
    return api.post("/v1/records", json=record)


@pytest.fixture(scope="module")
def record_id(api: httpx.Client) -> str:
    answer = post(api, PAYLOAD)
    assert answer.status_code == 201, answer.text
    record_id: str = answer.json()["record_id"]
    return record_id


def refusal(answer: httpx.Response) -> tuple[int, str, str, str]:
    assert answer.headers["content-type"].startswith("application/problem+json")
    problem = answer.json()
    return answer.status_code, problem["code"], problem["field"], problem["detail"]


NO_FIELD = "the record has no field at this path"
UNKNOWN_FIELDS = [
    ("note", f"{NO_FIELD}; did you mean o:/note? ({SYNTAX})"),
    ("/note", f"{NO_FIELD}; did you mean o:/note? ({SYNTAX})"),
    ("o:/items/0/sku", f"{NO_FIELD}; did you mean oao:/items/0/sku? ({SYNTAX})"),
    (
        "o:/items",
        f"{NO_FIELD}; it holds 2 fields, named by their own paths: oao:/items/0/sku,"
        " oao:/items/1/sku",
    ),
    ("o:/amout", f"{NO_FIELD}; did you mean o:/amount?"),
    ("o:/total", NO_FIELD),
    ("total", f"{NO_FIELD} ({SYNTAX})"),
]


@pytest.mark.parametrize(("path", "detail"), UNKNOWN_FIELDS, ids=[p for p, _ in UNKNOWN_FIELDS])
def test_an_unknown_field_is_answered_with_the_path_that_was_meant(
    api: httpx.Client, record_id: str, path: str, detail: str
) -> None:
    answer = api.post(f"/v1/records/{record_id}/disclosure", json={"fields": [path]})
    assert refusal(answer) == (422, "unknown_field", path, detail)


def test_the_suggested_path_discloses_the_field(api: httpx.Client, record_id: str) -> None:
    answer = api.post(f"/v1/records/{record_id}/disclosure", json={"fields": ["o:/note"]})
    assert answer.status_code == 200, answer.text
    assert [f["path"] for f in answer.json()["fields"]] == ["o:/note"]


@pytest.mark.parametrize(
    ("amount", "code", "detail"),
    [
        (12.5, "money_fraction", "money is a whole number of minor units (cents): 12.50 is sent"
         " as 1250"),
        ("12.50", "value_type", "the kind money takes a whole number of minor units (cents)"),
    ],
)  # fmt: skip
def test_money_is_refused_with_the_unit_it_is_counted_in(
    api: httpx.Client, amount: object, code: str, detail: str
) -> None:
    assert refusal(post(api, {"amount": amount})) == (422, code, "o:/amount", detail)
    batch = api.post("/v1/records:batch", json={"records": [
        {"stream": "orders", "record_type": "order.placed", "occurred_at": "2026-11-21T08:00:00Z",
         "subject_id": "customer-17", "payload": {"amount": amount}},
    ]})  # fmt: skip
    (item,) = batch.json()["results"]
    problem = item["problem"]
    assert (item["status"], problem["code"], problem["field"], problem["detail"]) == (
        422,
        code,
        "o:/amount",
        detail,
    )


@pytest.mark.parametrize(
    ("pattern", "meant"),
    [("amount", "o:/amount"), ("/amount", "o:/amount"), ("items/*/sku", "oao:/items/*/sku")],
)
def test_a_declaration_without_its_letters_is_answered_with_the_pattern_meant(
    api: httpx.Client, pattern: str, meant: str
) -> None:
    answer = api.post("/v1/streams", json={"name": "typo", "declarations": {pattern: "money"}})
    status, code, field, detail = refusal(answer)
    assert (status, code, field) == (422, "declaration_invalid", pattern)
    assert detail.endswith(f"; did you mean {meant}? ({SYNTAX})")

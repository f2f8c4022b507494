"""The record API through HTTP: every rule of spec sections 2-8 that issue 3 covers."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from urllib.parse import quote

import pytest

from recordseal import chain
from recordseal.crypto.signing import verify_header_signature
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from tests.backends import count, opened, query

ENVELOPE = ("stream", "record_type", "occurred_at", "subject_id", "payload")


def record_count(api) -> int:
    return count(api.settings, "records")


def stream_headers(api, tenant: str, stream: str) -> list[bytes]:
    async def read() -> list[bytes]:
        async with opened(open_store(api.settings)) as store:
            return [row.header for row in await store.records.stream_records(tenant, stream)]

    return asyncio.run(read())


@pytest.fixture
def orders(api):
    assert api.stream().status_code == 201
    return api


# --- accepted records ----------------------------------------------------------------------


def test_post_returns_seq_root_chain_leaf_signed_header_and_attestation(orders):
    response = orders.post({"amount": 100, "note": "hello"})
    assert response.status_code == 201
    body = response.json()
    assert body["attestation"] == "hosted-ingest"
    assert body["seq"] == 1
    assert len(bytes.fromhex(body["root"])) == 32
    header = body["header"]
    assert header["root"] == body["root"]
    assert header["seq"] == 1 and header["attestation"] == "hosted-ingest"
    assert header["prev"] == chain.stream_genesis("acme", "orders").hex()
    canonical = chain.canonical_header(header)
    assert chain.chain_leaf(canonical).hex() == body["chain_leaf"]
    keys = orders.get("/v1/keys", headers={}).json()["keys"]
    (key,) = [k for k in keys if k["key_id"] == body["key_id"]]
    assert verify_header_signature(
        bytes.fromhex(key["public_key"]), canonical, bytes.fromhex(body["signature"])
    )


def test_header_holds_no_customer_value(orders):
    body = orders.post({"secret": "s3cr3t-value"}, subject_id="alice@example.org").json()
    text = json.dumps(body["header"])
    assert "alice@example.org" not in text and "s3cr3t-value" not in text
    assert body["header"]["subject_ref"] != "alice@example.org"


def test_sequence_numbers_are_dense_and_chained(orders):
    for i in range(5):
        assert orders.post({"i": i}, subject_id=f"s{i % 2}").json()["seq"] == i + 1
    headers = stream_headers(orders, "acme", "orders")
    chain.verify_links("acme", "orders", headers)


def test_record_view_shows_header_signature_key_and_field_count(orders):
    posted = orders.post({"a": 1, "b": {"c": [1, 2]}}).json()
    view = orders.get(f"/v1/records/{posted['record_id']}")
    assert view.status_code == 200
    body = view.json()
    assert body["field_count"] == 3
    assert body["header"] == posted["header"]
    assert body["signature"] == posted["signature"]
    assert body["key_id"] == posted["key_id"]
    assert body["seal"] is None  # not sealed: sealing arrives with the proofs issue
    assert body["attestation"] == "hosted-ingest"


def test_payload_is_returned_decrypted_in_canonical_form(orders):
    posted = orders.post({"b": 1, "a": [1.0, "x"]}).json()
    body = orders.get(f"/v1/records/{posted['record_id']}/payload").json()
    assert body["payload"] == {"a": [1, "x"], "b": 1}
    assert body["seq"] == posted["seq"]


def test_payload_is_stored_encrypted(orders):
    orders.post({"marker": "plaintext-marker-123"})
    (sealed,) = query(orders.settings, "SELECT sealed FROM payloads")[0]
    assert len(sealed) > len(b"plaintext-marker-123")
    assert b"plaintext-marker-123" not in bytes(sealed)
    database = orders.settings.database_path
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            assert b"plaintext-marker-123" not in path.read_bytes()


def test_key_order_does_not_matter(orders):
    first = orders.post_raw(
        b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
        b'"subject_id":"s","payload":{"a":1,"b":{"x":true,"y":null}}}'
    ).json()
    second = orders.post_raw(
        b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
        b'"subject_id":"s","payload":{"b":{"y":null,"x":true},"a":1}}'
    ).json()
    payloads = [
        orders.get(f"/v1/records/{r['record_id']}/payload").content for r in (first, second)
    ]
    assert json.loads(payloads[0])["payload"] == json.loads(payloads[1])["payload"]
    assert first["field_count"] == second["field_count"] == 3


@pytest.mark.parametrize("spelling", [b"1", b"1.0", b"1e0", b"10e-1"])
def test_one_number_commits_identically_whatever_its_spelling(orders, spelling):
    body = (
        b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
        b'"subject_id":"s","payload":{"n":' + spelling + b"}}"
    )
    posted = orders.post_raw(body).json()
    payload = orders.get(f"/v1/records/{posted['record_id']}/payload").json()["payload"]
    assert json.dumps(payload) == '{"n": 1}'


def test_empty_containers_and_null_are_committed_facts(orders):
    assert orders.post({"a": 1}).json()["field_count"] == 1
    assert orders.post({"a": 1, "k": {}}).json()["field_count"] == 2
    assert orders.post({"a": 1, "k": []}).json()["field_count"] == 2
    assert orders.post({"a": 1, "k": None}).json()["field_count"] == 2


# --- refusals: the field is named, nothing is stored, no number is used -----------------------


@pytest.mark.parametrize("missing", ENVELOPE)
def test_every_record_member_is_required(orders, missing):
    body = {
        "stream": "orders",
        "record_type": "t",
        "occurred_at": "2026-01-01T00:00:00Z",
        "subject_id": "s",
        "payload": {"a": 1},
    }
    del body[missing]
    response = orders.client.post("/v1/records", json=body, headers=orders.headers)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == missing


def big_payload(size: int) -> dict:
    # {"s":"xxx"} is 8 bytes of JSON around the string
    return {"s": "x" * (size - 8)}


REFUSALS = [
    # payload, status, code, field
    ({"amount": 1.5}, 422, "money_fraction", "o:/amount"),
    ({"when": "yesterday"}, 422, "timestamp_invalid", "o:/when"),
    ({"n": 2**53}, 422, "integer_out_of_range", "o:/n"),
    ({"n": -(2**53)}, 422, "integer_out_of_range", "o:/n"),
    ({"a\u0007b": 1}, 422, "control_character", "o:/a\u0007b"),
    ({}, 422, "payload_empty", "payload"),  # spec 7.1: the payload is named
    ([1, 2], 422, "payload_not_object", "payload"),  # spec 7.1: the payload is named
    ("text", 422, "payload_not_object", "payload"),  # spec 7.1: the payload is named
    ({"k" * 600: 1}, 422, "path_too_long", "o:/" + "k" * 600),
    (
        {f"f{i}": i for i in range(4097)},
        422,
        "too_many_fields",
        "payload",
    ),  # spec 7.1: the payload is named
    (big_payload(262_145), 413, "payload_too_large", "payload"),  # spec 7.1: the payload is named
]


@pytest.mark.parametrize(("payload", "status", "code", "field"), REFUSALS)
def test_refusals_name_the_field_and_store_nothing(api, payload, status, code, field):
    api.stream(declarations={"o:/amount": "money", "o:/when": "timestamp"})
    assert api.post({"ok": 1}, subject_id="s").json()["seq"] == 1
    response = api.post(payload, subject_id="new-subject")
    assert response.status_code == status, response.text
    problem = response.json()
    assert problem["code"] == code
    assert problem.get("field") == field
    assert problem["type"].endswith(code)
    assert record_count(api) == 1
    # The refused post created no subject and used no sequence number.
    assert api.client.post("/v1/subjects/new-subject/erase", headers=api.headers).status_code == 404
    assert api.post({"ok": 2}, subject_id="s").json()["seq"] == 2


def test_limits_at_their_boundary_are_accepted(orders):
    assert orders.post(big_payload(262_144)).status_code == 201
    assert orders.post({f"f{i}": i for i in range(4096)}).json()["field_count"] == 4096
    assert orders.post({"n": 2**53 - 1, "m": -(2**53 - 1)}).status_code == 201
    assert orders.post({"k" * 509: 1}).status_code == 201  # "o:/" + 509 = 512 bytes


def nested(levels: int) -> bytes:
    return b'{"a":' * (levels - 1) + b'{"a":1}' + b"}" * (levels - 1)


def test_depth_120_is_accepted_and_127_refused_naming_the_field(orders):
    def post(payload: bytes):
        return orders.post_raw(
            b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
            b'"subject_id":"s","payload":' + payload + b"}"
        )

    assert post(nested(120)).status_code == 201
    refused = post(nested(127))
    assert refused.status_code in (400, 422), refused.text
    if refused.status_code == 422:  # the core saw it: it names the container
        assert refused.json()["code"] == "depth_exceeded"
        # The core reads the whole body first (web/bodies.py): the envelope is level 1, so the
        # container past the limit is the payload's 125th level, at 124 steps.
        assert refused.json()["field"] == "o" * 124 + ":" + "/a" * 124
    assert record_count(orders) == 1


def test_duplicate_member_names_are_refused(orders):
    response = orders.post_raw(
        b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
        b'"subject_id":"s","payload":{"a":1,"a":2}}'
    )
    assert response.status_code == 422
    assert (response.json()["code"], response.json()["field"]) == ("duplicate_member", "o:/a")


@pytest.mark.parametrize(
    ("member", "value", "field"),
    [
        ("occurred_at", "not a time", "occurred_at"),
        ("record_type", "", "record_type"),
        ("subject_id", "", "subject_id"),
        ("subject_id", "x" * 257, "subject_id"),
        ("stream", "no-such-stream", "stream"),
    ],
)
def test_envelope_rules(orders, member, value, field):
    response = orders.post({"a": 1}, **{member: value})
    assert response.status_code in (404, 422)
    assert response.json()["field"] == field
    assert record_count(orders) == 0


def test_error_bodies_never_echo_values(orders):
    response = orders.post({"amount": "SECRET-CARD-4111"}, subject_id="x")
    orders.stream("typed", declarations={"o:/amount": "money"})
    response = orders.post({"amount": "SECRET-CARD-4111"}, stream="typed")
    assert response.status_code == 422
    assert "SECRET-CARD-4111" not in response.text


# --- declarations, wildcards, strict --------------------------------------------------------


def test_declared_kinds_apply_through_array_wildcards(api):
    api.stream(declarations={"oao:/items/*/price": "money", "o:/currency": "currency"})
    ok = api.post({"items": [{"price": 100}, {"price": 250}], "currency": "eur"})
    assert ok.status_code == 201
    refused = api.post({"items": [{"price": 100}, {"price": 2.5}], "currency": "EUR"})
    assert refused.status_code == 422
    assert (refused.json()["code"], refused.json()["field"]) == (
        "money_fraction",
        "oao:/items/1/price",
    )


def test_strict_stream_refuses_undeclared_fields(api):
    api.stream("strict", declarations={"o:/amount": "money"}, strict=True)
    assert api.post({"amount": 5}, stream="strict").status_code == 201
    refused = api.post({"amount": 5, "extra": True}, stream="strict")
    assert refused.status_code == 422
    assert (refused.json()["code"], refused.json()["field"]) == ("undeclared_field", "o:/extra")


def test_stream_declarations_are_checked_at_creation(api):
    bad_kind = api.stream(declarations={"o:/a": "email"})
    assert bad_kind.status_code == 422
    assert (bad_kind.json()["code"], bad_kind.json()["field"]) == ("unknown_kind", "o:/a")
    bad_pattern = api.stream(declarations={"oa:/a/0": "money"})
    assert bad_pattern.status_code == 422
    assert bad_pattern.json()["code"] == "declaration_invalid"
    assert api.stream().status_code == 201
    assert api.stream().status_code == 409


# --- subjects and erasure (spec 3.1) ----------------------------------------------------------


def test_erasure_destroys_payloads_keeps_chain_and_refuses_new_records(orders):
    first = orders.post({"a": 1}, subject_id="alice").json()
    other = orders.post({"b": 2}, subject_id="bob").json()
    orders.post({"c": 3}, subject_id="alice")

    erased = orders.client.post("/v1/subjects/alice/erase", headers=orders.headers)
    assert erased.status_code == 200
    assert erased.json()["status"] == "erased"
    assert erased.json()["payloads_deleted"] == 2

    again = orders.client.post("/v1/subjects/alice/erase", headers=orders.headers)
    assert again.status_code == 200
    assert again.json()["status"] == "already_erased"
    assert again.json()["erased_at"] == erased.json()["erased_at"]

    gone = orders.get(f"/v1/records/{first['record_id']}/payload")
    assert (gone.status_code, gone.json()["code"]) == (410, "subject_erased")
    refused = orders.post({"a": 4}, subject_id="alice")
    assert (refused.status_code, refused.json()["code"]) == (410, "subject_erased")

    # The chain is untouched: the record is still there and still links and verifies.
    assert orders.get(f"/v1/records/{first['record_id']}").json()["header"] == first["header"]
    assert orders.get(f"/v1/records/{other['record_id']}/payload").status_code == 200
    assert orders.post({"d": 5}, subject_id="bob").json()["seq"] == 4
    chain.verify_links("acme", "orders", stream_headers(orders, "acme", "orders"))


@pytest.mark.parametrize("store_settings", ["sqlite"], indirect=True)
def test_erasure_leaves_no_ciphertext_in_sqlite_database_or_wal(orders):
    posted = orders.post({"a": "x" * 2000}, subject_id="alice").json()
    database = Settings(data_dir=orders.data_dir).database_path
    with sqlite3.connect(database) as conn:
        sealed = conn.execute(
            "SELECT sealed FROM payloads WHERE record_id = ?", (posted["record_id"],)
        ).fetchone()[0]
        wrapped = conn.execute("SELECT wrapped_key FROM subjects").fetchone()[0]
    assert orders.client.post("/v1/subjects/alice/erase", headers=orders.headers).status_code == 200
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            data = path.read_bytes()
            assert sealed[16:64] not in data
            assert wrapped not in data


@pytest.mark.parametrize("subject_id", ["tenant/alice", "a/b/c", "x/erase", "/lead", "trail/"])
def test_a_subject_id_with_a_slash_is_erased_through_its_encoded_path(orders, subject_id):
    kept = orders.post({"a": 1}, subject_id="alice").json()
    posted = orders.post({"a": 1}, subject_id=subject_id).json()
    path = f"/v1/subjects/{quote(subject_id, safe='')}/erase"
    erased = orders.client.post(path, headers=orders.headers)
    assert (erased.status_code, erased.json()["status"]) == (200, "erased")
    assert erased.json()["payloads_deleted"] == 1
    assert orders.get(f"/v1/records/{posted['record_id']}/payload").status_code == 410
    assert orders.get(f"/v1/records/{kept['record_id']}/payload").status_code == 200
    again = orders.client.post(path, headers=orders.headers)
    assert (again.status_code, again.json()["status"]) == (200, "already_erased")


@pytest.mark.parametrize(("subject_id", "neighbour"), [("/lead", "lead"), ("trail/", "trail")])
def test_erasing_a_slashed_subject_id_never_erases_the_id_without_the_slash(
    orders, subject_id, neighbour
):
    """Servers collapse the '//' of a decoded path: the id must come from the raw path."""
    target = orders.post({"a": 1}, subject_id=subject_id).json()
    other = orders.post({"a": 1}, subject_id=neighbour).json()
    path = f"/v1/subjects/{quote(subject_id, safe='')}/erase"
    assert orders.client.post(path, headers=orders.headers).json()["payloads_deleted"] == 1
    assert orders.get(f"/v1/records/{target['record_id']}/payload").status_code == 410
    assert orders.get(f"/v1/records/{other['record_id']}/payload").status_code == 200


def test_the_route_for_slashed_subject_ids_answers_only_erasure(orders):
    orders.post({"a": 1}, subject_id="a/b")
    orders.post({"a": 1}, subject_id="a")
    for path in (
        "/v1/subjects/a/b",
        "/v1/subjects/a/b/other",
        "/v1/subjects/a/erase/x",
        "/v1/subjects/a%2Ferase",  # decoded, this routes as the erasure of "a"
        "/v1/subjects/a%2Fb%2Ferase",
    ):
        response = orders.client.post(path, headers=orders.headers)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("application/problem+json")
    unknown = orders.client.post("/v1/subjects/a%2Fz/erase", headers=orders.headers)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "subject_not_found")
    other_tenant = orders.client.post(
        "/v1/subjects/a%2Fb/erase", headers={"Authorization": "Bearer wrong"}
    )
    assert other_tenant.status_code == 401
    assert (
        orders.get(
            "/v1/records/" + orders.post({"a": 2}, subject_id="a").json()["record_id"] + "/payload"
        ).status_code
        == 200
    )  # "a" was never erased
    paths = orders.get("/schema/openapi.json").json()["paths"]
    assert "/v1/subjects/{subject_id}/erase" in paths
    assert not any("subject_path" in path for path in paths)


def test_erasing_an_unknown_subject_is_404(orders):
    response = orders.client.post("/v1/subjects/nobody/erase", headers=orders.headers)
    assert (response.status_code, response.json()["code"]) == (404, "subject_not_found")


# --- authentication and tenancy ---------------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer rs_wrong"}, {"Authorization": "Basic abc"}]
)
def test_missing_or_wrong_token_is_401(orders, headers):
    posted = orders.post({"a": 1}).json()
    for response in (
        orders.client.post("/v1/streams", json={"name": "x"}, headers=headers),
        orders.post({"a": 1}, headers=headers or {"Authorization": ""}),
        orders.get(f"/v1/records/{posted['record_id']}", headers=headers),
        orders.get(f"/v1/records/{posted['record_id']}/payload", headers=headers),
        orders.client.post("/v1/subjects/customer-1/erase", headers=headers),
    ):
        assert response.status_code == 401
        assert response.json()["code"] == "unauthenticated"


def test_a_token_of_one_tenant_never_reaches_another(orders):
    posted = orders.post({"a": 1}, subject_id="alice").json()
    other = orders.token_headers("globex")
    assert orders.get(f"/v1/records/{posted['record_id']}", headers=other).status_code == 404
    assert (
        orders.get(f"/v1/records/{posted['record_id']}/payload", headers=other).status_code == 404
    )
    erase = orders.client.post("/v1/subjects/alice/erase", headers=other)
    assert erase.status_code == 404
    assert orders.post({"a": 2}, headers=other).json()["code"] == "stream_not_found"
    # Globex's own stream of the same name is a different chain.
    orders.client.post("/v1/streams", json={"name": "orders"}, headers=other)
    theirs = orders.post({"a": 3}, subject_id="alice", headers=other).json()
    assert theirs["seq"] == 1
    assert theirs["header"]["prev"] == chain.stream_genesis("globex", "orders").hex()
    # Acme's data is intact.
    assert orders.get(f"/v1/records/{posted['record_id']}/payload").status_code == 200


def test_key_directory_and_health_are_public(api):
    assert api.get("/health", headers={}).json() == {"status": "ok"}
    keys = api.get("/v1/keys", headers={}).json()["keys"]
    assert len(keys) == 1 and keys[0]["algorithm"] == "Ed25519"


def test_openapi_documents_the_record_body(api):
    schema = api.get("/schema/openapi.json", headers={}).json()
    body = schema["paths"]["/v1/records"]["post"]["requestBody"]["content"]["application/json"]
    assert set(body["schema"]["required"]) == set(ENVELOPE)


def test_subject_handles_are_opaque_and_sort_by_creation():
    """docs/records.md, "Vault": 32 hex digits, 48 bits of creation milliseconds first, the
    rest random (indexes over handles grow at their end)."""
    import re
    import time

    from recordseal.clock import new_subject_ref

    before = time.time_ns() // 1_000_000
    refs = [new_subject_ref() for _ in range(200)]
    after = time.time_ns() // 1_000_000
    assert all(re.fullmatch(r"[0-9a-f]{32}", ref) for ref in refs)
    assert all(before <= int(ref[:12], 16) <= after for ref in refs)
    assert refs == sorted(refs, key=lambda ref: ref[:12])  # ordered by creation time
    assert len({ref[12:] for ref in refs}) == 200  # 80 random bits each

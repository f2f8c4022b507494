"""Finding things through the API (issue 30, item 3; docs/records.md, "Listing streams and
records"), on both backends: the token's tenant's streams with their counts, a stream's
records a keyset page at a time with ``Link: rel="next"``, tenant isolation, and refusals of
bad query parameters that name the parameter and its rule."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from recordseal.ops.tokens import create_token
from recordseal.services.listing import MAX_PAGE
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.postgres import records as postgres_records
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.sqlite import records as sqlite_records
from recordseal.storage.sqlite import schema as sqlite_schema
from recordseal.web.app import create_app
from tests.backends import opened

DAY = "2026-11-21T08:00:00Z"


@dataclass
class Tenants:
    """A service (no background sealing) and tokens of two tenants, ``acme`` and ``beta``."""

    client: TestClient  # type: ignore[type-arg]
    acme: dict[str, str]
    beta: dict[str, str]

    def stream(self, auth: dict[str, str], name: str, **body: Any) -> dict[str, Any]:
        answer = self.client.post("/v1/streams", json={"name": name, **body}, headers=auth)
        assert answer.status_code == 201, answer.text
        created: dict[str, Any] = answer.json()
        return created

    def post(self, auth: dict[str, str], stream: str, n: int) -> dict[str, Any]:
        body = {
            "stream": stream,
            "record_type": "t",
            "occurred_at": DAY,
            "subject_id": f"s-{n % 3}",
            "payload": {"n": n},
        }
        answer = self.client.post("/v1/records", json=body, headers=auth)
        assert answer.status_code == 201, answer.text
        posted: dict[str, Any] = answer.json()
        return posted

    def get(self, path: str, auth: dict[str, str]) -> httpx.Response:
        return self.client.get(path, headers=auth)

    def seal(self) -> None:
        sealer = self.client.app.state.services.sealer
        self.client.blocking_portal.call(sealer.seal_pending)


@pytest.fixture
def tenants(store_settings: Settings) -> Iterator[Tenants]:
    settings = Settings(
        data_dir=store_settings.data_dir,
        database_url=store_settings.database_url,
        seal_interval=0,
        transparency_interval=0,
    )
    with TestClient(create_app(settings)) as client:
        acme = asyncio.run(create_token(settings, "acme", "t"))
        beta = asyncio.run(create_token(settings, "beta", "t"))
        yield Tenants(
            client, {"Authorization": f"Bearer {acme}"}, {"Authorization": f"Bearer {beta}"}
        )


def pages(tenants: Tenants, path: str, auth: dict[str, str]) -> list[dict[str, Any]]:
    """Every page from ``path`` on, following each answer's ``Link: rel="next"``; checks that
    the body's ``next`` is the same link and that the last page has neither."""
    found = []
    next_path: str | None = path
    while next_path is not None:
        answer = tenants.get(next_path, auth)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["attestation"] == "hosted-ingest"
        link = answer.links.get("next", {}).get("url")
        assert link == body["next"]
        found.append(body)
        next_path = link
    return found


# --- streams ----------------------------------------------------------------------------------


def test_streams_are_listed_with_declarations_strictness_fleet_counts_and_next_seq(
    tenants: Tenants,
) -> None:
    tenants.stream(tenants.acme, "orders", declarations={"o:/n": "integer"}, strict=True)
    tenants.stream(tenants.acme, "Audit.log")
    tenants.stream(tenants.acme, "empty")
    for n in range(4):
        tenants.post(tenants.acme, "orders", n)
    tenants.post(tenants.acme, "Audit.log", 9)
    [page] = pages(tenants, "/v1/streams", tenants.acme)
    listed = {stream["name"]: stream for stream in page["streams"]}
    # byte order of the names: upper case before lower case, on both backends
    assert [stream["name"] for stream in page["streams"]] == ["Audit.log", "empty", "orders"]
    orders = listed["orders"]
    assert (orders["declarations"], orders["strict"], orders["fleet"]) == (
        {"o:/n": "integer"},
        True,
        "default",
    )
    assert (orders["record_count"], orders["next_seq"]) == (4, 5)
    assert (listed["Audit.log"]["record_count"], listed["Audit.log"]["next_seq"]) == (1, 2)
    assert (listed["empty"]["record_count"], listed["empty"]["next_seq"]) == (0, 1)
    one = tenants.get("/v1/streams/orders", tenants.acme).json()
    assert one == orders


def test_streams_are_paged_by_name_with_a_next_link(tenants: Tenants) -> None:
    names = [f"s{n:02d}" for n in range(7)]
    for name in reversed(names):
        tenants.stream(tenants.acme, name)
    found = pages(tenants, "/v1/streams?limit=3", tenants.acme)
    assert [len(page["streams"]) for page in found] == [3, 3, 1]
    assert [s["name"] for page in found for s in page["streams"]] == names
    assert found[0]["next"] == "/v1/streams?after=s02&limit=3"
    # exactly a page's worth: no next page is announced that would come back empty
    [whole] = pages(tenants, "/v1/streams?limit=7", tenants.acme)
    assert len(whole["streams"]) == 7
    after = tenants.get("/v1/streams?after=s05", tenants.acme).json()
    assert [s["name"] for s in after["streams"]] == ["s06"]


# --- records ----------------------------------------------------------------------------------


def test_records_are_paged_by_seq_with_headers_signatures_and_seal_status(
    tenants: Tenants,
) -> None:
    tenants.stream(tenants.acme, "orders")
    posted = [tenants.post(tenants.acme, "orders", n) for n in range(3)]
    tenants.seal()
    posted += [tenants.post(tenants.acme, "orders", n) for n in range(3, 7)]
    found = pages(tenants, "/v1/streams/orders/records?limit=3", tenants.acme)
    assert [len(page["records"]) for page in found] == [3, 3, 1]
    assert found[0]["next"] == "/v1/streams/orders/records?from_seq=4&limit=3"
    records = [record for page in found for record in page["records"]]
    assert all(page["stream"] == "orders" for page in found)
    assert [r["seq"] for r in records] == list(range(1, 8))
    for record, answer in zip(records, posted, strict=True):
        assert record["kind"] == "record"
        for member in ("record_id", "seq", "chain_leaf", "header", "signature"):
            assert record[member] == answer[member], member
        view = tenants.get(f"/v1/records/{record['record_id']}", tenants.acme).json()
        assert record["seal"] == view["seal"]
    assert [r["seal"] is not None for r in records] == [True] * 3 + [False] * 4
    origin = records[0]["seal"]["log"]
    assert origin.endswith("/acme/default")
    assert [r["seal"]["index"] for r in records[:3]] == [1, 2, 3]  # leaf 0: the genesis
    tail = tenants.get("/v1/streams/orders/records?from_seq=6", tenants.acme).json()
    assert [r["seq"] for r in tail["records"]] == [6, 7] and tail["next"] is None
    beyond = tenants.get("/v1/streams/orders/records?from_seq=8", tenants.acme)
    assert (beyond.status_code, beyond.json()["records"], beyond.json()["next"]) == (200, [], None)
    assert "link" not in beyond.headers


def test_the_largest_page_is_taken(tenants: Tenants) -> None:
    tenants.stream(tenants.acme, "orders")
    tenants.post(tenants.acme, "orders", 1)
    for path in (f"/v1/streams?limit={MAX_PAGE}", f"/v1/streams/orders/records?limit={MAX_PAGE}"):
        assert tenants.get(path, tenants.acme).status_code == 200, path


# --- tenant isolation -------------------------------------------------------------------------


def test_a_token_sees_only_its_tenants_streams_and_records(tenants: Tenants) -> None:
    """Names are per tenant: both have ``orders``, with their own records and counts; acme's
    other stream is answered to beta exactly as a name nobody has, and never listed."""
    tenants.stream(tenants.acme, "orders")
    tenants.stream(tenants.acme, "acme-only")
    tenants.stream(tenants.beta, "orders")
    acme_ids = {tenants.post(tenants.acme, "orders", n)["record_id"] for n in range(3)}
    beta_id = tenants.post(tenants.beta, "orders", 1)["record_id"]
    tenants.post(tenants.acme, "acme-only", 1)

    [beta_page] = pages(tenants, "/v1/streams", tenants.beta)
    assert [(s["name"], s["record_count"]) for s in beta_page["streams"]] == [("orders", 1)]
    [beta_records] = pages(tenants, "/v1/streams/orders/records", tenants.beta)
    assert [r["record_id"] for r in beta_records["records"]] == [beta_id]
    assert beta_records["records"][0]["header"]["tenant"] == "beta"
    [acme_records] = pages(tenants, "/v1/streams/orders/records", tenants.acme)
    assert {r["record_id"] for r in acme_records["records"]} == acme_ids

    for path in ("/v1/streams/{}", "/v1/streams/{}/records"):
        theirs = tenants.get(path.format("acme-only"), tenants.beta)
        nobodys = tenants.get(path.format("nobody-has-this"), tenants.beta)
        assert theirs.status_code == nobodys.status_code == 404
        assert theirs.json() == nobodys.json()
        assert theirs.json()["code"] == "stream_not_found"
        assert "acme" not in theirs.text


@pytest.mark.parametrize(
    "path", ["/v1/streams", "/v1/streams/orders", "/v1/streams/orders/records"]
)
def test_every_listing_needs_a_token(tenants: Tenants, path: str) -> None:
    tenants.stream(tenants.acme, "orders")
    for auth in ({}, {"Authorization": "Bearer not-a-token"}):
        answer = tenants.get(path, auth)
        assert (answer.status_code, answer.json()["code"]) == (401, "unauthenticated")
        assert "orders" not in answer.text


# --- bad query parameters ---------------------------------------------------------------------

BAD = [
    ("/v1/streams?limit=0", "limit"),
    ("/v1/streams?limit=1001", "limit"),
    ("/v1/streams?limit=-1", "limit"),
    ("/v1/streams?limit=x", "limit"),
    ("/v1/streams?limit=1.5", "limit"),
    ("/v1/streams?limit=", "limit"),
    ("/v1/streams?limit=%201", "limit"),
    ("/v1/streams?limit=1&limit=2", "limit"),
    ("/v1/streams?limit=99999999999999999999999", "limit"),
    ("/v1/streams?after=bad%20name", "after"),
    ("/v1/streams?after=", "after"),
    ("/v1/streams?after=" + "a" * 129, "after"),
    ("/v1/streams?after=a&after=b", "after"),
    ("/v1/streams/orders/records?from_seq=0", "from_seq"),
    ("/v1/streams/orders/records?from_seq=-3", "from_seq"),
    ("/v1/streams/orders/records?from_seq=9223372036854775808", "from_seq"),
    ("/v1/streams/orders/records?from_seq=99999999999999999999", "from_seq"),
    ("/v1/streams/orders/records?from_seq=1e3", "from_seq"),
    ("/v1/streams/orders/records?from_seq=1&from_seq=2", "from_seq"),
    ("/v1/streams/orders/records?limit=1001", "limit"),
    ("/v1/streams/orders/records?limit=0x10", "limit"),
]


@pytest.mark.parametrize(("path", "parameter"), BAD)
def test_a_bad_query_parameter_is_refused_naming_it_and_its_rule(
    tenants: Tenants, path: str, parameter: str
) -> None:
    tenants.stream(tenants.acme, "orders")
    answer = tenants.get(path, tenants.acme)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert (problem["code"], problem["field"]) == (f"{parameter}_invalid", parameter)
    assert problem["detail"].startswith(f"{parameter} must be")


def test_the_rules_are_checked_before_the_stream_is_looked_up(tenants: Tenants) -> None:
    """The same refusal whether the stream exists or not (and whoever's it is)."""
    tenants.stream(tenants.acme, "orders")
    mine = tenants.get("/v1/streams/orders/records?limit=0", tenants.acme)
    none = tenants.get("/v1/streams/none/records?limit=0", tenants.acme)
    theirs = tenants.get("/v1/streams/orders/records?limit=0", tenants.beta)
    assert mine.json() == none.json() == theirs.json()


def test_the_largest_seq_is_taken(tenants: Tenants) -> None:
    tenants.stream(tenants.acme, "orders")
    path = "/v1/streams/orders/records?from_seq=9223372036854775807"
    answer = tenants.get(path, tenants.acme)
    assert (answer.status_code, answer.json()["records"]) == (200, [])


QUERY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24)


@given(limit=QUERY_TEXT, from_seq=QUERY_TEXT, after=QUERY_TEXT)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_query_is_answered_a_page_or_a_refusal_never_a_5xx(
    tenants: Tenants, limit: str, from_seq: str, after: str
) -> None:
    if tenants.get("/v1/streams/orders", tenants.acme).status_code != 200:
        tenants.stream(tenants.acme, "orders")
    for path, params in (
        ("/v1/streams", {"limit": limit, "after": after}),
        ("/v1/streams/orders/records", {"limit": limit, "from_seq": from_seq}),
    ):
        answer = tenants.client.get(path, params=params, headers=tenants.acme)
        assert answer.status_code in (200, 422), (path, params, answer.text)
        if answer.status_code == 422:
            assert answer.json()["field"] in params


# --- counts come from the stream's row --------------------------------------------------------


def _old_rows() -> list[tuple[str, tuple[Any, ...]]]:
    """A store at the migration before ``lost_seqs``: ``lossy`` holds seqs 1, 2 and 5 (3 and
    4 were declared lost), ``dense`` holds 1 and 2, ``empty`` nothing."""
    stream = (
        "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head, created_at,"
        " fleet, log_id) VALUES ('acme', ?, '{}', ?, ?, ?, ?, 'default', 1)"
    )
    record = (
        "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header, signature,"
        " chain_leaf, log_id, log_index) VALUES (?, 'acme', ?, ?, 'ref', ?, ?, ?, 1, ?)"
    )
    rows: list[tuple[str, tuple[Any, ...]]] = [
        (
            "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ('acme', 'default',"
            " NULL, 0, ?)",
            (b"",),
        )
    ]
    rows += [
        (stream, (name, False, next_seq, bytes(32), DAY))
        for name, next_seq in (("lossy", 6), ("dense", 3), ("empty", 1))
    ]
    places = [(1, 1), (1, 2), (1, 5), (2, 1), (2, 2)]
    rows += [
        (record, (f"r{n}", stream_id, seq, b'{"format":"x"}', b"sig", bytes([n]) * 32, n))
        for n, (stream_id, seq) in enumerate(places, start=1)
    ]
    return rows


#: The migrations that add ``streams.lost_seqs``: the old databases stop just before them.
LOST_SEQS_SQLITE, LOST_SEQS_POSTGRES = 11, 9


def _make_old_sqlite(settings: Settings) -> None:
    settings.database_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite_schema.connect(settings.database_path)
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version, script in enumerate(sqlite_schema.MIGRATIONS[: LOST_SEQS_SQLITE - 1], start=1):
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    for sql, params in _old_rows():
        conn.execute(sql, params)
    conn.execute("COMMIT")
    conn.close()


async def _make_old_postgres(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
        for version, script in enumerate(
            postgres_schema.MIGRATIONS[: LOST_SEQS_POSTGRES - 1], start=1
        ):
            await conn.execute(script)
            await conn.execute("INSERT INTO schema_version VALUES ($1)", version)
        for sql, params in _old_rows():
            numbered = sql
            for n in range(1, sql.count("?") + 1):
                numbered = numbered.replace("?", f"${n}", 1)
            await conn.execute(numbered, *params)
    finally:
        await conn.close()


def test_the_migration_counts_the_records_each_stream_already_holds(
    store_settings: Settings,
) -> None:
    if store_settings.database_url:
        asyncio.run(_make_old_postgres(store_settings.database_url))
    else:
        _make_old_sqlite(store_settings)

    async def read() -> None:
        async with opened(open_store(store_settings)) as store:
            counts = {
                s.name: (s.record_count, s.lost_seqs, s.next_seq)
                for s in await store.records.list_streams("acme", None, 10)
            }
            assert counts == {"lossy": (3, 2, 6), "dense": (2, 0, 3), "empty": (0, 0, 1)}
            lossy = await store.records.get_stream("acme", "lossy")
            assert lossy is not None
            listed = await store.records.list_records(lossy, 1, 10)
            assert [item.record.seq for item in listed] == [1, 2, 5]
            assert [item.seal for item in listed] == [None] * 3  # the log has size 0

    asyncio.run(read())


def _sqlite_plans(settings: Settings) -> list[str]:
    conn = sqlite_schema.connect(settings.database_path)
    try:
        return [
            " | ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
            for sql, params in (
                (sqlite_records.LIST_STREAMS, ("acme", "", 3)),
                (sqlite_records.LIST_RECORDS, (1, "acme", 1, 3)),
            )
        ]
    finally:
        conn.close()


async def _postgres_plans(url: str) -> list[str]:
    """Plans with sequential scans made as costly as PostgreSQL allows: what is left is
    what the indexes can do (a small test table would otherwise be scanned, rightly)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SET enable_seqscan = off")
        plans = []
        for sql, params in (
            (postgres_records.LIST_STREAMS, ("acme", "", 3)),
            (postgres_records.LIST_RECORDS, (1, "acme", 1, 3)),
        ):
            rows = await conn.fetch("EXPLAIN " + sql, *params)
            plans.append(" | ".join(row[0] for row in rows))
        return plans
    finally:
        await conn.close()


def test_each_listing_is_one_index_range(tenants: Tenants, store_settings: Settings) -> None:
    """The listings' own SQL reads an index range, in the order asked for: no scan of a
    tenant's streams or a stream's records, and no sort of them (a page of 10 million
    records costs what a page of 10 does)."""
    tenants.stream(tenants.acme, "orders")
    for n in range(5):
        tenants.post(tenants.acme, "orders", n)
    if store_settings.database_url:
        streams, records = asyncio.run(_postgres_plans(store_settings.database_url))
        assert "Index Scan using streams_by_name" in streams, streams
        assert "records_tenant_stream_id_seq_key" in records, records
        for plan in (streams, records):
            assert "Sort" not in plan and "Seq Scan" not in plan, plan
    else:
        streams, records = _sqlite_plans(store_settings)
        # the keys that lead with the tenant (docs/records.md, "Distributing by tenant"):
        # streams' UNIQUE (tenant, name), records' UNIQUE (tenant, stream_id, seq)
        assert "USING INDEX sqlite_autoindex_streams_2 (tenant=? AND name>?)" in streams, streams
        assert (
            "USING INDEX sqlite_autoindex_records_2 (tenant=? AND stream_id=? AND seq>?)" in records
        ), records
        for plan in (streams, records):
            assert "SCAN" not in plan and "TEMP B-TREE" not in plan, plan

"""Every log as c2sp.org/tlog-tiles under ``/logs/<origin>/`` (issue 32, item 4), through HTTP
on each storage backend: what is served is what the log's leaves hash, partial tiles as the
spec names them, caching headers, and who may read which log (docs/tlog.md, "Tiles").
Go's reference implementation reads the same tiles in ``tests/interop/test_go_tiles.py``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from recordseal.clock import utc_now
from recordseal.core import leaf_hash
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.sealer import Sealer
from recordseal.merkle import tree
from recordseal.merkle.genesis import successor_genesis, tenant_genesis
from recordseal.ops.tokens import create_token
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.services.errors import Forbidden, NotFound
from recordseal.services.records import RecordService
from recordseal.services.tiles import Reader, TileService
from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.storage.recovery import Recovery, Succession
from recordseal.tlog import (
    Checkpoint,
    log_verifier,
    open_checkpoint,
    parse_note,
    sign_checkpoint,
)
from recordseal.tlog.tiles import Tile, parse_entry_bundle, tiles_of
from recordseal.web.app import create_app
from tests.backends import opened
from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest

ORIGIN = "tiles.test"
LOG = f"{ORIGIN}/acme/default"
PREFIX = f"/logs/{LOG}"


@dataclass
class Served:
    client: TestClient  # type: ignore[type-arg]
    settings: Settings
    acme: dict[str, str]
    globex: dict[str, str]
    records: list[dict[str, Any]]

    def get(self, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.get(path, headers=self.acme if headers is None else headers)

    def checkpoint(self) -> Checkpoint:
        answer = self.get(f"{PREFIX}/checkpoint")
        assert answer.status_code == 200, answer.text
        return Checkpoint.parse(parse_note(answer.text).text)

    def cookie(self, session: LegacySession | TenantSession) -> dict[str, str]:
        token = self.client.app.state.panel.keyring.issue(session)
        return {"Cookie": f"{COOKIE_NAME}={token}"}


def post(client: TestClient, headers: dict[str, str], count: int) -> list[dict[str, Any]]:  # type: ignore[type-arg]
    records = []
    for start in range(0, count, 100):
        body = {
            "records": [
                {
                    "stream": "orders",
                    "record_type": "order.placed",
                    "occurred_at": "2026-11-21T08:00:00Z",
                    "subject_id": f"customer-{n % 5}",
                    "payload": {"n": n, "amount": 100 * n},
                }
                for n in range(start, min(count, start + 100))
            ]
        }
        answer = client.post("/v1/records:batch", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        records += [item["record"] for item in answer.json()["results"]]
    return records


def wait_for_size(served: Served, size: int, tenant: str = "acme") -> Checkpoint:
    """The tenant's log's checkpoint once it has ``size`` entries (the sealer runs every
    50 ms)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = served.get(f"/logs/{ORIGIN}/{tenant}/default/checkpoint", getattr(served, tenant))
        if answer.status_code == 200:
            checkpoint = Checkpoint.parse(parse_note(answer.text).text)
            if checkpoint.size == size:
                return checkpoint
        time.sleep(0.05)
    raise AssertionError(f"the log did not reach size {size}")


@pytest.fixture
def served(store_settings: Settings) -> Iterator[Served]:
    """The service on each backend with 300 records of acme sealed: 301 entries (leaf 0 is the
    genesis root), so one full tile and a partial one at level 0, a partial one at level 1."""
    settings = Settings(
        data_dir=store_settings.data_dir,
        database_url=store_settings.database_url,
        origin=ORIGIN,
        seal_interval=0.05,
    )
    with TestClient(create_app(settings)) as client:
        tokens = {t: asyncio.run(create_token(settings, t, "t")) for t in ("acme", "globex")}
        acme, globex = ({"Authorization": f"Bearer {tokens[t]}"} for t in ("acme", "globex"))
        for headers in (acme, globex):
            assert client.post("/v1/streams", json={"name": "orders"}, headers=headers).is_success
        served = Served(client, settings, acme, globex, post(client, acme, 300))
        post(client, globex, 3)
        wait_for_size(served, 301)
        wait_for_size(served, 4, "globex")
        yield served


def leaves_of(served: Served) -> list[bytes]:
    """The log's leaf hashes, from the records' chain leaves as ingest answered them."""
    return [leaf_hash(tenant_genesis("acme", "default"))] + [
        bytes.fromhex(record["chain_leaf"]) for record in served.records
    ]


def subtree(leaves: list[bytes], level: int, index: int) -> bytes:
    """The RFC 6962 hash of leaves ``[index * 2**level, (index + 1) * 2**level)``."""
    if level == 0:
        return leaves[index]
    return tree.node_hash(
        subtree(leaves, level - 1, 2 * index), subtree(leaves, level - 1, 2 * index + 1)
    )


def expected_tile(leaves: list[bytes], tile: Tile) -> bytes:
    """The tile as the spec defines it, computed here from the leaf hashes alone."""
    level = 8 * (tile.level or 0)
    return b"".join(subtree(leaves, level, tile.start + i) for i in range(tile.width))


def log_vkeys(served: Served) -> list[str]:
    """The log's keys as the service publishes them: Ed25519 and ML-DSA-44."""
    logs = served.client.get("/v1/keys").json()["logs"]
    return [str(entry["vkey"]) for entry in logs if entry["origin"] == LOG]


def test_the_checkpoint_is_the_logs_newest_signed_one(served: Served) -> None:
    answer = served.get(f"{PREFIX}/checkpoint")
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["cache-control"] == "private, max-age=1"
    vkeys = log_vkeys(served)
    checkpoint, verified = open_checkpoint(answer.text, [log_verifier(vkey) for vkey in vkeys])
    assert len(vkeys) == len(verified.verified) == 2  # the checkpoint as signed: dual-signed
    leaves = leaves_of(served)
    assert (checkpoint.origin, checkpoint.size) == (LOG, 301)
    assert checkpoint.root_hash == tree.root(301, lambda level, i: subtree(leaves, level, i))


def test_every_tile_is_the_subtree_hashes_of_the_leaves(served: Served) -> None:
    leaves = leaves_of(served)
    wanted = tiles_of(301)
    assert [t.path() for t in wanted] == ["tile/0/000", "tile/0/001.p/45", "tile/1/000.p/1"]
    for tile in wanted:
        answer = served.get(f"{PREFIX}/{tile.path()}")
        assert answer.status_code == 200, tile
        assert answer.headers["content-type"] == "application/octet-stream"
        assert answer.headers["cache-control"] == "private, max-age=31536000, immutable"
        assert answer.content == expected_tile(leaves, tile)
    # A narrower partial tile is a prefix of the same hashes (each was complete and never
    # changes); a wider one, or the full tile, does not exist yet.
    narrower = served.get(f"{PREFIX}/tile/0/001.p/44")
    assert narrower.content == expected_tile(leaves, Tile(0, 1, 44))
    for missing in (
        "tile/0/001.p/46",
        "tile/0/001",
        "tile/0/002.p/1",
        "tile/1/000",
        "tile/2/000.p/1",
    ):
        answer = served.get(f"{PREFIX}/{missing}")
        assert (answer.status_code, answer.json()["code"]) == (404, "tile_not_found"), missing


def test_entry_bundles_hold_what_the_leaves_hash_and_no_payload(served: Served) -> None:
    leaves = leaves_of(served)
    entries = []
    for name in ("tile/entries/000", "tile/entries/001.p/45"):
        answer = served.get(f"{PREFIX}/{name}", {**served.acme, "Accept-Encoding": "gzip"})
        assert answer.status_code == 200
        assert answer.headers["content-encoding"] == "gzip"  # httpx decoded it
        assert answer.headers["cache-control"] == "private, max-age=31536000, immutable"
        entries += parse_entry_bundle(answer.content)
    assert len(entries) == 301
    assert entries[0] == tenant_genesis("acme", "default")
    assert [leaf_hash(entry) for entry in entries] == leaves
    for entry, record in zip(entries[1:], served.records, strict=True):
        assert json.loads(entry) == record["header"]
    assert b"amount" not in b"".join(entries) and b"customer-" not in b"".join(entries)
    plain = served.get(
        f"{PREFIX}/tile/entries/001.p/45", {**served.acme, "Accept-Encoding": "identity"}
    )
    assert "content-encoding" not in plain.headers
    assert parse_entry_bundle(plain.content) == entries[256:]
    missing = served.get(f"{PREFIX}/tile/entries/001.p/46")
    assert (missing.status_code, missing.json()["code"]) == (404, "tile_not_found")


def test_tiles_served_once_never_change_as_the_log_grows(served: Served) -> None:
    before = {name: served.get(f"{PREFIX}/{name}").content for name in (
        "tile/0/000", "tile/0/001.p/45", "tile/1/000.p/1", "tile/entries/001.p/45"
    )}  # fmt: skip
    served.records += post(served.client, served.acme, 300)
    wait_for_size(served, 601)
    for name, content in before.items():
        assert served.get(f"{PREFIX}/{name}").content == content, name
    leaves = leaves_of(served)
    for tile in tiles_of(601):
        assert served.get(f"{PREFIX}/{tile.path()}").content == expected_tile(leaves, tile)
    full = served.get(f"{PREFIX}/tile/0/001").content
    assert full[: 45 * 32] == before["tile/0/001.p/45"]
    bundle = parse_entry_bundle(served.get(f"{PREFIX}/tile/entries/001").content)
    assert bundle[:45] == parse_entry_bundle(before["tile/entries/001.p/45"])


@pytest.mark.parametrize(
    "name",
    [
        "tile/0/x000/000",  # a superfluous group
        "tile/0/00",
        "tile/0/0000",
        "tile/00/000",
        "tile/64/000",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/045",
        "tile/entries",
        "tile/data/000",
        "tile/8/0/000",  # Go's sumdb path, with the height
        "",
    ],
)
def test_names_that_are_no_c2sp_resource_are_not_found(served: Served, name: str) -> None:
    answer = served.get(f"{PREFIX}/{name}")
    assert (answer.status_code, answer.json()["code"]) == (404, "not_found")


def test_another_tenants_log_is_refused_before_any_lookup(served: Served) -> None:
    for path in (
        f"{PREFIX}/checkpoint",
        f"{PREFIX}/tile/0/000",
        f"/logs/{ORIGIN}/acme/nowhere/checkpoint",
    ):
        refused = served.get(path, served.globex)
        assert refused.status_code == 403
        assert refused.json()["code"] == "forbidden_tenant"
        assert refused.json()["detail"] == "this log belongs to another tenant"
    assert served.get(f"/logs/{ORIGIN}/globex/default/checkpoint", served.globex).status_code == 200
    unknown = served.get(f"/logs/{ORIGIN}/acme/nowhere/checkpoint")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "log_not_found")
    outside = served.get("/logs/elsewhere.example/acme/default/checkpoint")
    assert (outside.status_code, outside.json()["code"]) == (404, "log_not_found")
    for headers in ({}, {"Authorization": "Bearer rs_not-a-token"}):
        answer = served.get(f"{PREFIX}/tile/0/000", headers)
        assert (answer.status_code, answer.json()["code"]) == (401, "unauthenticated")
        assert answer.headers["www-authenticate"] == "Bearer"


def test_panel_sessions_read_the_logs_of_their_tenant_scope(served: Served) -> None:
    expires = int(time.time()) + 3600
    acme = served.cookie(TenantSession("alice@acme.test", "acme", "eng", expires, "viewer"))
    globex = served.cookie(TenantSession("bob@globex.test", "globex", "hq", expires, "viewer"))
    operator = served.cookie(LegacySession("root", expires))
    tile = f"{PREFIX}/tile/0/000"
    assert served.get(tile, acme).content == expected_tile(leaves_of(served), Tile(0, 0))
    refused = served.get(tile, globex)
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_tenant")
    assert served.get(tile, operator).status_code == 200
    assert served.get(f"/logs/{ORIGIN}/globex/default/checkpoint", operator).status_code == 200
    stale = served.cookie(TenantSession("alice@acme.test", "acme", "eng", 1, "viewer"))
    assert served.get(tile, stale).status_code == 401


def test_a_retired_log_and_its_successor_stay_readable(store: Store) -> None:
    """After ``recordseal recover`` retires a log, its tiles are still served under its origin;
    the successor's entry 0 is its commitment to the predecessor (docs/tlog.md)."""

    async def run() -> None:
        async with opened(store):
            records = RecordService(
                store,
                KeyWrapper(bytes(32)),
                HeaderSigner.from_seed(bytes(32)),
                continuity=fresh_continuity(),
            )
            sealer = Sealer(store.logs, bytes(32), ORIGIN, continuity=fresh_continuity())
            await records.create_stream("acme", "orders", {}, False)
            for n in range(5):
                payload = json.dumps({"n": n}).encode()
                await ingest(records, "acme", "orders", "o", "2026-11-21T08:00:00Z", "c", payload)
                if n == 2:
                    await sealer.seal_pending()  # size 4; records 4 and 5 stay pending
            last = await store.logs.newest_checkpoint(LOG)
            assert last is not None and last.size == 4
            successor = f"{LOG}/2"
            leaf = successor_genesis(LOG, last.size, last.root)
            note = sign_checkpoint(
                Checkpoint(successor, 1, leaf_hash(leaf)), sealer.signer(successor)
            )
            succession = Succession("acme", "default", LOG, 4, last.root, successor, leaf, note)
            await store.logs.recover(Recovery([succession], [], utc_now()))

            tiles = TileService(store.logs, ORIGIN)
            retired = await tiles.log(LOG, Reader("acme"))
            assert retired.size == 4 and await tiles.checkpoint(retired) == last.note
            entries = parse_entry_bundle(await tiles.tile(retired, Tile(None, 0, 4)))
            assert entries[0] == tenant_genesis("acme", "default")
            assert b"".join(leaf_hash(e) for e in entries) == await tiles.tile(
                retired, Tile(0, 0, 4)
            )
            with pytest.raises(NotFound):
                await tiles.tile(retired, Tile(0, 0, 5))
            new = await tiles.log(successor, Reader("acme"))
            assert new.size == 1 and await tiles.checkpoint(new) == note
            assert parse_entry_bundle(await tiles.tile(new, Tile(None, 0, 1))) == [leaf]
            assert await tiles.tile(new, Tile(0, 0, 1)) == leaf_hash(leaf)
            with pytest.raises(Forbidden):
                await tiles.log(successor, Reader("globex"))

    asyncio.run(run())

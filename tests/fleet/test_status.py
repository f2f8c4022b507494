"""The organization page's fleet status read from the store: the tenant's own anchors only,
the manifest state, and the witness status of the latest anchor."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from recordseal.fleet.manifest import parse_manifest
from recordseal.fleet.panel_collisions import manifest_state, panel_collisions
from recordseal.fleet.status import FleetStatusReader
from recordseal.panel.tenants import FleetRef
from recordseal.storage.base import Store
from recordseal.tlog import CosignatureSigner
from tests.web.panel.conftest import seeded_store

from .support import seal, using

MANIFEST = parse_manifest(
    'version = 1\n[[fleet]]\nid = "fleet-a1"\ntenant_id = "acme"\npreset = "p1"\n'
    '[[fleet]]\nid = "fleet-a2"\n[[fleet]]\nid = "fleet-g1"\ntenant_id = "acme"\n'
)
WITNESS = CosignatureSigner.from_seed("witness.test/w1", bytes(32))


def test_manifest_states() -> None:
    assert manifest_state(MANIFEST, FleetRef("fleet-a1", "eng", "acme")) == "bound"
    assert manifest_state(MANIFEST, FleetRef("fleet-a2", "eng", "acme")) == "no_tenant"
    assert manifest_state(MANIFEST, FleetRef("fleet-g1", "hq", "globex")) == "other_tenant"
    assert manifest_state(MANIFEST, FleetRef("fleet-x", "hq", "globex")) == "absent"


def test_a_manifest_binding_that_crosses_the_panels_tenant_is_logged_at_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio

    with caplog.at_level(logging.WARNING, logger="recordseal.fleet"):
        found = asyncio.run(panel_collisions(MANIFEST, seeded_store()))
    assert [(c.fleet, c.panel_tenant, c.manifest_tenant) for c in found] == [
        ("fleet-g1", "globex", "acme")
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cross-tenant fleet id collision" in warnings[0]


def test_status_shows_the_tenants_latest_anchor_and_witnesses(store: Store) -> None:
    async def body(store: Store) -> None:
        reader = FleetStatusReader(store.logs, lambda: MANIFEST, [WITNESS.name], ["tsa-1"])
        ref = FleetRef("fleet-a1", "eng", "acme")
        empty = await reader(ref)
        assert (empty.anchor_size, empty.witness_state) == (None, "no_anchor")
        # a legacy log and another tenant's log of the same fleet id are never shown
        await seal(store, None, "fleet-a1", "2026-11-21T00:00:00.000000Z")
        await seal(store, "globex", "fleet-a1", "2026-11-21T00:00:00.000000Z")
        assert (await reader(ref)).anchor_size is None
        batch = await seal(store, "acme", "fleet-a1", "2026-11-21T01:00:00.000000Z")
        assert batch is not None
        pending = await reader(ref)
        assert (pending.anchor_size, pending.anchor_root) == (1, batch.root.hex())
        assert (pending.manifest, pending.preset, pending.witness_state) == (
            "bound",
            "p1",
            "pending",
        )
        cosignature = WITNESS.cosign(batch.note.split("\n\n")[0] + "\n", 1_790_000_000)
        await store.logs.add_cosignature(batch.origin, batch.size, "w1", cosignature.line)
        partial = await reader(ref)
        assert (partial.witness_state, partial.vouched_by) == ("partial", (WITNESS.name,))
        await store.logs.add_timestamp(batch.origin, batch.size, "tsa-1", b"token")
        assert (await reader(ref)).witness_state == "complete"
        alone = FleetStatusReader(store.logs, lambda: MANIFEST)
        assert (await alone(ref)).witness_state == "none_configured"

    using(store, body)


def test_the_organization_page_shows_every_fleets_anchor_and_witnesses_from_the_store(
    store: Store, tmp_path: Path
) -> None:
    """The panel's organization page with the real status reader over a real store: every
    fleet of the organization, in HTML and in JSON, with the tenant's own anchors only."""
    from litestar.testing import TestClient

    from tests.web.panel.conftest import HTML, JSON, Panel

    panel = Panel(seeded_store(), tmp_path)
    with TestClient(panel.app) as client:
        portal = client.blocking_portal
        portal.call(store.open)
        try:
            batch = portal.call(seal, store, "acme", "fleet-a1", "2026-11-21T01:00:00.000000Z")
            assert batch is not None
            cosignature = WITNESS.cosign(batch.note.split("\n\n")[0] + "\n", 1_790_000_000)
            portal.call(store.logs.add_cosignature, batch.origin, 1, "w1", cosignature.line)
            # fleet-a2 has anchors in the legacy log and in globex's log only
            portal.call(seal, store, None, "fleet-a2", "2026-11-21T02:00:00.000000Z")
            portal.call(seal, store, "globex", "fleet-a2", "2026-11-21T02:00:00.000000Z")
            panel.context.fleet_status = FleetStatusReader(
                store.logs, lambda: MANIFEST, [WITNESS.name], ["tsa-1"]
            )
            cookie = panel.tenant("acme")
            page = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(cookie, **HTML))
            body = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(cookie, **JSON))
        finally:
            portal.call(store.close)
    assert page.status_code == 200 and body.status_code == 200
    rows = {
        fleet: row
        for row in page.text.split("<tr>")[2:]
        for fleet in ("fleet-a1", "fleet-a2")
        if f"<code>{fleet}</code>" in row
    }
    assert set(rows) == {"fleet-a1", "fleet-a2"}
    assert "size 1" in rows["fleet-a1"] and batch.root.hex()[:16] in rows["fleet-a1"]
    assert "cosigned by 1 of 2: witness.test/w1" in rows["fleet-a1"]
    assert "bound to this tenant (preset <code>p1</code>)" in rows["fleet-a1"]
    assert "none yet" in rows["fleet-a2"] and "listed without a tenant" in rows["fleet-a2"]
    statuses = body.json()["fleet_status"]
    assert set(statuses) == {"fleet-a1", "fleet-a2"}
    assert statuses["fleet-a1"]["anchor_size"] == 1
    assert statuses["fleet-a1"]["anchor_root"] == batch.root.hex()
    assert statuses["fleet-a1"]["anchor_at"] == "2026-11-21T01:00:00.000000Z"
    assert statuses["fleet-a1"]["witness_state"] == "partial"
    assert statuses["fleet-a1"]["vouched_by"] == [WITNESS.name]
    assert statuses["fleet-a2"]["anchor_size"] is None
    assert statuses["fleet-a2"]["witness_state"] == "no_anchor"
    assert statuses["fleet-a2"]["manifest"] == "no_tenant"

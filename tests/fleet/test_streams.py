"""Record streams join a fleet of their tenant; their records are sealed into its log."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.core import leaf_hash
from recordseal.fleet.manifest import parse_manifest
from recordseal.merkle.genesis import tenant_genesis
from recordseal.ops.tokens import create_token
from recordseal.services.errors import Forbidden, Invalid, ServiceError
from recordseal.services.streams import check_stream_fleet
from recordseal.settings import Settings
from recordseal.web.app import create_app

MANIFEST_TEXT = """\
version = 1
[[fleet]]
id = "edge"
tenant_id = "acme"
[[fleet]]
id = "theirs"
tenant_id = "globex"
[[fleet]]
id = "legacy"
"""
MANIFEST = parse_manifest(MANIFEST_TEXT)


@pytest.mark.parametrize(
    ("fleet", "error", "code"),
    [
        ("theirs", Forbidden, "fleet_forbidden"),
        ("legacy", Invalid, "fleet_without_tenant"),
        ("nowhere", Invalid, "fleet_unknown"),
        ("bad id", Invalid, "fleet_invalid"),
    ],
)
def test_fleets_a_stream_may_not_join(fleet: str, error: type[ServiceError], code: str) -> None:
    with pytest.raises(error) as caught:
        check_stream_fleet(MANIFEST, "acme", fleet)
    assert (caught.value.code, caught.value.field) == (code, "fleet")


def test_fleets_a_stream_may_join() -> None:
    check_stream_fleet(MANIFEST, "acme", "edge")
    check_stream_fleet(MANIFEST, "acme", "default")
    check_stream_fleet(parse_manifest("version = 1\n"), "acme", "default")
    bound_elsewhere = parse_manifest('version = 1\n[[fleet]]\nid = "default"\ntenant_id = "b"\n')
    with pytest.raises(Forbidden):
        check_stream_fleet(bound_elsewhere, "acme", "default")


def test_another_tenants_fleet_is_logged_at_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="recordseal.fleet"), pytest.raises(Forbidden):
        check_stream_fleet(MANIFEST, "acme", "theirs")
    assert any(r.getMessage() == "fleet.cross_tenant_refused" for r in caplog.records)


def test_records_of_a_fleet_stream_are_sealed_into_the_tenants_fleet_log(
    tmp_path: Path, store_settings: Settings
) -> None:
    manifest = tmp_path / "fleets.toml"
    manifest.write_text(MANIFEST_TEXT)
    data = tmp_path / "data"
    settings = Settings(
        data_dir=data,
        database_url=store_settings.database_url,
        seal_interval=0,
        transparency_interval=0,
        fleet_manifest=manifest,
    )
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"}
        created = client.post("/v1/streams", json={"name": "s", "fleet": "edge"}, headers=headers)
        assert created.status_code == 201 and created.json()["fleet"] == "edge"
        plain = client.post("/v1/streams", json={"name": "p"}, headers=headers)
        assert plain.json()["fleet"] == "default"
        refused = client.post("/v1/streams", json={"name": "x", "fleet": "theirs"}, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (403, "fleet_forbidden")
        legacy = client.post("/v1/streams", json={"name": "y", "fleet": "legacy"}, headers=headers)
        assert (legacy.status_code, legacy.json()["field"]) == (422, "fleet")
        for i in range(3):
            posted = client.post(
                "/v1/records",
                headers=headers,
                json={
                    "stream": "s",
                    "record_type": "t",
                    "occurred_at": "2026-11-21T08:00:00Z",
                    "subject_id": f"c{i}",
                    "payload": {"i": i},
                },
            )
            assert posted.status_code == 201
        store, sealer = client.app.state.services.store, client.app.state.services.sealer
        with client.portal() as portal:
            portal.call(sealer.seal_pending)
            anchors = portal.call(store.logs.anchors, "acme", "edge")
            default = portal.call(store.logs.anchors, "acme", "default")
        assert [a.size for a in anchors] == [1, 4]  # genesis at start, then the three records
        assert default == []
        assert anchors[0].root == leaf_hash(tenant_genesis("acme", "edge"))

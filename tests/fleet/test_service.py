"""The fleets wired into the service: the manifest at start (RECORDSEAL_PANEL_FLEET_MANIFEST),
fleet logs started from their genesis, tenant-stamped audit events, the organization page,
the transparency CLI and route end to end."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.cli import main
from recordseal.core import leaf_hash
from recordseal.fleet.manifest import ManifestError
from recordseal.merkle.genesis import tenant_genesis
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.settings import Settings, from_env
from recordseal.web.app import create_app

MANIFEST = """\
version = 1
[defaults]
tenant_id = "acme"
[[fleet]]
id = "f1"
preset = "balanced"
[[fleet]]
id = "solo"
tenant_id = "globex"
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [
                    {"id": "acme", "display_name": "Acme"},
                    {"id": "globex", "display_name": "Globex"},
                ],
                "organizations": [
                    {"id": "prod", "tenant_id": "acme", "display_name": "Production"},
                    {"id": "hq", "tenant_id": "globex", "display_name": "HQ"},
                ],
                "fleets": [
                    {"fleet_id": "f1", "organization_id": "prod", "tenant_id": "acme"},
                    {"fleet_id": "solo", "organization_id": "hq", "tenant_id": "globex"},
                ],
            }
        )
    )
    manifest = tmp_path / "fleets.toml"
    manifest.write_text(MANIFEST)
    monkeypatch.setenv("RECORDSEAL_PANEL_TENANT_SEED", str(seed))
    monkeypatch.setenv("RECORDSEAL_PANEL_FLEET_MANIFEST", str(manifest))
    monkeypatch.setenv("RECORDSEAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RECORDSEAL_SEAL_INTERVAL", "0")
    monkeypatch.setenv("RECORDSEAL_TRANSPARENCY_INTERVAL", "0")
    return tmp_path


def test_settings_read_the_fleet_variables(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECORDSEAL_TRANSPARENCY_DIR", str(env / "public"))
    monkeypatch.setenv("RECORDSEAL_FLEET_MANIFEST_RELOAD_INTERVAL", "0")
    settings = from_env()
    assert settings.fleet_manifest == env / "fleets.toml"
    assert settings.transparency_root == env / "public"
    assert (settings.manifest_reload_interval, settings.transparency_interval) == (0.0, 0.0)
    assert Settings(data_dir=env).transparency_root == env / "transparency"


def test_an_invalid_manifest_stops_the_start(env: Path) -> None:
    (env / "fleets.toml").write_text('version = 1\n[[fleet]]\nid = "f1"\ncolour = "red"\n')
    with pytest.raises(ManifestError, match=r"line 4.*unknown key 'colour'"):
        create_app()


def test_start_binds_the_manifest_and_opens_each_fleet_log_from_its_genesis(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with TestClient(create_app()) as client:
        store = client.app.state.services.store
        with client.portal() as portal:
            anchors = portal.call(store.logs.anchors, "acme", "f1")
            solo = portal.call(store.logs.anchors, "globex", "solo")
        assert [(a.size, a.root) for a in anchors] == [(1, leaf_hash(tenant_genesis("acme", "f1")))]
        assert solo[0].origin.endswith("/globex/solo")
        assert client.app.state.fleets.manifest.fleet("f1").preset == "balanced"

        panel = client.app.state.panel
        cookie = panel.keyring.issue(
            TenantSession("alice", "acme", "prod", int(time.time()) + 600, "viewer")
        )
        client.cookies.set(COOKIE_NAME, cookie)
        page = client.get("/tenants/acme/orgs/prod", headers={"Accept": "application/json"}).json()
        status = page["fleet_status"]["f1"]
        assert (status["manifest"], status["anchor_size"], status["witness_state"]) == (
            "bound",
            1,
            "none_configured",
        )
    assert not (env / "data" / "audit.jsonl").exists()  # the stream is in the database
    assert main(["fleet", "audit"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {e["event"] for e in events} == {"fleet.bound", "anchor.sealed"}
    sealed = {(e["fleet"], e.get("tenant")) for e in events if e["event"] == "anchor.sealed"}
    assert sealed == {("f1", "acme"), ("solo", "globex")}
    assert all(e.get("tenant") for e in events)  # every fleet here has a tenant


def test_the_cli_writes_a_day_and_the_route_serves_it_per_tenant(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with TestClient(create_app()):
        pass  # the start opened acme/f1 and globex/solo
    today = datetime.now(UTC).date().isoformat()
    assert main(["transparency", "write", "--date", today]) == 0
    written = capsys.readouterr().out.split()
    root = env / "data" / "transparency" / today
    assert sorted(written) == sorted(
        [str(root / "acme" / "f1.log"), str(root / "globex" / "solo.log")]
    )
    assert main(["transparency", "replay", str(root / "acme" / "f1.log")]) == 0
    out = capsys.readouterr().out
    assert "1 anchor(s) replayed to the genesis root" in out
    assert f"it is {today}/acme/f1.log" in out
    tampered = env / "tampered.log"
    tampered.write_bytes(
        (root / "acme" / "f1.log").read_bytes().replace(b'"tenant":"acme"', b'"tenant":"globex"')
    )
    assert main(["transparency", "replay", str(tampered)]) == 1
    assert "genesis_mismatch" in capsys.readouterr().err
    # a valid file of another tenant's fleet, under acme/f1's name: the name is checked
    swapped = env / "mirror" / today / "acme" / "f1.log"
    swapped.parent.mkdir(parents=True)
    swapped.write_bytes((root / "globex" / "solo.log").read_bytes())
    assert main(["transparency", "replay", str(swapped)]) == 1
    assert "scope_mismatch" in capsys.readouterr().err
    solo = root / "globex" / "solo.log"
    assert main(["transparency", "replay", str(solo), "--expect", f"{today}/acme/f1.log"]) == 1
    assert "scope_mismatch" in capsys.readouterr().err
    assert main(["transparency", "replay", str(swapped), "--any-name"]) == 0
    assert main(["transparency", "replay", str(solo), "--expect", "solo"]) == 2

    with TestClient(create_app()) as client:
        panel = client.app.state.panel
        acme = panel.keyring.issue(
            TenantSession("alice", "acme", "prod", int(time.time()) + 600, "viewer")
        )
        legacy = panel.keyring.issue(LegacySession("root", int(time.time()) + 600))
        client.cookies.set(COOKIE_NAME, acme)
        own = client.get(f"/transparency/{today}/acme/f1.log")
        assert own.status_code == 200 and own.content == (root / "acme" / "f1.log").read_bytes()
        other = client.get(
            f"/transparency/{today}/globex/solo.log",
            headers={"Accept": "application/json"},
        )
        assert other.status_code == 403
        client.cookies.set(COOKIE_NAME, legacy)
        assert client.get(f"/transparency/{today}/globex/solo.log").status_code == 200


def test_fleet_check_validates_a_manifest(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "check", str(env / "fleets.toml")]) == 0
    assert "f1: tenant acme, preset balanced" in capsys.readouterr().out
    (env / "bad.toml").write_text("version = 3\n")
    assert main(["fleet", "check", str(env / "bad.toml")]) == 1
    assert "line 1" in capsys.readouterr().err

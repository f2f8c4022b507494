"""API token lifecycle: listing every tenant's tokens with their last use, revoking by id
(store, service, ``recordseal token list|revoke``), the panel's token pages (also of tenants
only their tokens registered), and the data-directory check of the commands that write."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.cli import main
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.services.errors import Unauthenticated
from recordseal.services.tokens import LAST_USED_RESOLUTION, TokenService, token_hash
from recordseal.settings import Settings, from_env
from recordseal.storage.base import Store
from recordseal.web.app import create_app
from recordseal.web.panel.passkeys import link_base_url
from recordseal.web.state import services_in
from tests.backends import opened
from tests.panel_support import grant_in


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_every_tenants_tokens_are_listed_and_revoked_by_id(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            tokens = TokenService(store.tokens)
            a = await tokens.create("acme", "ci")
            g = await tokens.create("unseeded-tenant", "batch")
            rows = await tokens.list()
            assert [(r.tenant, r.label, r.last_used_at) for r in rows] == [
                ("acme", "ci", None),
                ("unseeded-tenant", "batch", None),
            ]
            assert [r.tenant for r in await tokens.list("acme")] == ["acme"]
            acme_id = token_hash(a)[:8].hex()
            assert rows[0].token_id == acme_id
            # The wrong tenant revokes nothing; any tenant (None) finds it.
            assert await tokens.revoke("unseeded-tenant", acme_id) == 0
            assert await tokens.revoke(None, acme_id.upper()) == 1
            assert await tokens.revoke(None, acme_id) == 0  # already revoked
            with pytest.raises(Unauthenticated):
                await tokens.tenant_of(f"Bearer {a}")
            assert await tokens.tenant_of(f"Bearer {g}") == "unseeded-tenant"

    asyncio.run(run())


def test_the_last_use_is_recorded_at_most_once_a_minute(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            clock = Monotonic()
            tokens = TokenService(store.tokens, monotonic=clock)
            token = await tokens.create("acme")
            await tokens.tenant_of(f"Bearer {token}")
            await tokens.drain()
            (first,) = [row.last_used_at for row in await tokens.list("acme")]
            assert first is not None
            clock.now += LAST_USED_RESOLUTION - 1
            await asyncio.sleep(0.002)  # a later wall-clock time, were it written
            await tokens.tenant_of(f"Bearer {token}")
            await tokens.drain()
            assert [row.last_used_at for row in await tokens.list("acme")] == [first]
            clock.now += 1
            await tokens.tenant_of(f"Bearer {token}")
            await tokens.drain()
            (second,) = [row.last_used_at for row in await tokens.list("acme")]
            assert second is not None and second > first
            # Another process that writes an older time does not move it back.
            await store.tokens.mark_used([token_hash(token)], "2000-01-01T00:00:00.000000Z")
            assert [row.last_used_at for row in await tokens.list("acme")] == [second]

    asyncio.run(run())


# -- the commands -----------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RECORDSEAL_DATABASE_URL", "RECORDSEAL_DATA_DIR", "RECORDSEAL_PANEL_ORIGINS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("cli_env")
def test_token_list_and_revoke_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    code, out, _ = run_cli(
        capsys, "token", "create", "--data-dir", data, "--tenant", "acme", "--create-data-dir"
    )
    assert code == 0
    token = out.strip()
    run_cli(capsys, "token", "create", "--data-dir", data, "--tenant", "other", "--label", "a\tb")
    code, out, _ = run_cli(capsys, "token", "list", "--data-dir", data)
    header, *lines = out.splitlines()
    assert header.split("\t") == ["id", "tenant", "label", "created", "last used", "status"]
    rows = [line.split("\t") for line in lines]
    assert [(r[1], r[2], r[4], r[5]) for r in rows] == [
        ("acme", "-", "never", "active"),
        ("other", "a b", "never", "active"),
    ]
    assert token not in out and token_hash(token).hex() not in out
    acme_id = rows[0][0]
    assert acme_id == token_hash(token)[:8].hex()
    code, out, _ = run_cli(capsys, "token", "list", "--data-dir", data, "--tenant", "other")
    assert len(out.splitlines()) == 2

    assert run_cli(capsys, "token", "revoke", "nothex", "--data-dir", data)[0] == 2
    code, _, err = run_cli(capsys, "token", "revoke", acme_id, "--data-dir", data, "--tenant", "x")
    assert code == 1 and "does not exist" in err
    code, out, _ = run_cli(capsys, "token", "revoke", acme_id, "--data-dir", data)
    assert code == 0 and "revoked token" in out and "'acme'" in out and "within 1 s" in out
    code, _, err = run_cli(capsys, "token", "revoke", acme_id, "--data-dir", data)
    assert code == 1 and "already revoked" in err
    code, out, _ = run_cli(capsys, "token", "list", "--data-dir", data, "--tenant", "acme")
    assert out.splitlines()[1].split("\t")[5].startswith("revoked 20")


@pytest.mark.usefixtures("cli_env")
def test_commands_refuse_a_data_directory_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo"
    for argv in (
        ("token", "create", "--tenant", "acme"),
        ("panel", "link"),
        ("token", "list"),
        ("token", "revoke", "00" * 8),
    ):
        code, out, err = run_cli(capsys, *argv, "--data-dir", str(missing))
        assert code == 2, argv
        assert str(missing) in err and "does not exist" in err and out == ""
        assert not missing.exists()
    code, out, _ = run_cli(capsys, "panel", "link", "--data-dir", str(missing), "--create-data-dir")
    assert code == 0 and out.startswith("http://localhost:8000/login/register?token=")
    assert (missing / "recordseal.sqlite3").exists()


def test_the_link_is_built_from_the_configured_host_and_port() -> None:
    def url(**values: object) -> str:
        return link_base_url(Settings(**values))  # type: ignore[arg-type]

    assert url(host="127.0.0.1", port=8000) == "http://localhost:8000"
    assert url(host="0.0.0.0", port=9000) == "http://localhost:9000"
    assert url(host="::1", port=80) == "http://localhost"
    assert url(host="panel.example", port=8443) == "https://panel.example:8443"
    assert url(host="0.0.0.0", port=443, panel_rp_id="panel.example") == "https://panel.example"
    origins = ("https://a.example/", "https://b.example")
    assert url(host="127.0.0.1", port=8000, panel_origins=origins) == "https://a.example"


@pytest.mark.usefixtures("cli_env")
def test_panel_link_uses_the_host_and_port_of_the_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECORDSEAL_PORT", "8123")
    data = ["--data-dir", str(tmp_path), "--role", "viewer"]
    code, out, _ = run_cli(capsys, "panel", "link", *data)
    assert code == 0 and out.startswith("http://localhost:8123/login/register?token=")
    code, out, _ = run_cli(capsys, "panel", "link", *data, "--host", "panel.example")
    assert out.startswith("https://panel.example:8123/login/register?token=")


# -- the panel's pages ------------------------------------------------------------------


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [{"id": "acme", "display_name": "Acme Corp"}],
                "organizations": [{"id": "eng", "tenant_id": "acme", "display_name": "Eng"}],
                "fleets": [],
            }
        )
    )
    monkeypatch.setenv("RECORDSEAL_PANEL_TENANT_SEED", str(seed))
    return tmp_path


def test_a_tenant_the_seed_does_not_declare_appears_once_it_holds_tokens(seeded: Path) -> None:
    """The quick start makes a token for a tenant no seed declares: the token registers the
    tenant (its id as its name), so it is a tenant like any other on every panel page."""
    settings = from_env(data_dir=seeded / "data", seal_interval=0)
    with TestClient(create_app(settings)) as client:
        tokens: TokenService = services_in(client.app.state).tokens
        client.blocking_portal.call(tokens.create, "acme", "ci")
        batch = client.blocking_portal.call(tokens.create, "unseeded", "batch")
        api = {"Authorization": f"Bearer {batch}"}
        assert client.post("/v1/streams", json={"name": "s"}, headers=api).status_code == 201
        grant_in(client, "op")
        keyring = client.app.state.panel.keyring
        legacy = keyring.issue(LegacySession("op", int(time.time()) + 600))
        json_headers = {"Accept": "application/json", "Cookie": f"{COOKIE_NAME}={legacy}"}

        listing = client.get("/tenants", headers=json_headers).json()["tenants"]
        assert [(t["id"], t["display_name"], t["active"]) for t in listing] == [
            ("acme", "Acme Corp", True),
            ("unseeded", "unseeded", True),
        ]
        page = client.get("/tenants", headers={"Cookie": json_headers["Cookie"]})
        assert 'href="/tenants/unseeded"' in page.text and "No tenants yet" not in page.text
        assert "not in the tenant seed" not in page.text
        assert client.get("/tenants/unseeded", headers=json_headers).status_code == 200

        every = client.get("/tokens", headers=json_headers).json()
        listed = {
            t["id"]: (t["display_name"], [x["label"] for x in t["tokens"]])
            for t in every["tenants"]
        }
        assert listed == {"acme": ("Acme Corp", ["ci"]), "unseeded": ("unseeded", ["batch"])}

        unseeded = client.get("/tenants/unseeded/tokens", headers=json_headers)
        assert unseeded.status_code == 200
        (row,) = unseeded.json()["tokens"]
        assert row["last_used_at"] is not None  # it made the stream above
        html = client.get("/tenants/unseeded/tokens", headers={"Cookie": json_headers["Cookie"]})
        assert "Create token" in html.text and "Revoke" in html.text
        csrf = {"X-CSRF-Token": unseeded.json()["session"]["csrf_token"]}
        made = client.post(
            "/tenants/unseeded/tokens", json={"label": "more"}, headers={**json_headers, **csrf}
        )
        assert made.status_code == 201
        assert sorted(t["label"] for t in made.json()["tokens"]) == ["batch", "more"]
        revoked = client.post(
            f"/tenants/unseeded/tokens/{row['token_id']}/revoke", headers={**json_headers, **csrf}
        )
        assert revoked.status_code == 200
        assert client.post("/v1/streams", json={"name": "t"}, headers=api).status_code == 401
        nothing = client.get("/tenants/nobody/tokens", headers=json_headers)
        assert (nothing.status_code, nothing.json()["code"]) == (404, "tenant_not_found")

        # A tenant-scoped session sees its own tenant's tokens only.
        scoped = keyring.issue(TenantSession("a", "acme", "eng", int(time.time()) + 600))
        mine = client.get("/tokens", headers={**json_headers, "Cookie": f"{COOKIE_NAME}={scoped}"})
        assert [t["id"] for t in mine.json()["tenants"]] == ["acme"]
        other = client.get(
            "/tenants/unseeded/tokens",
            headers={**json_headers, "Cookie": f"{COOKIE_NAME}={scoped}"},
        )
        assert (other.status_code, other.json()["code"]) == (403, "forbidden_tenant")

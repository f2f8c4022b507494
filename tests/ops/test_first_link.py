"""The first hour of an operator, with real processes: ``serve`` records where it listens
(``service.json``), so ``panel link`` prints a link to that port; the sign-in page of an
install without passkeys names the command that prints it; and ``serve`` loads the tenant
seed into the database at start, refusing one that contradicts it."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from html import unescape
from pathlib import Path

import httpx
from litestar.testing import TestClient

from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.web.app import create_app
from tests.panel_support import grant
from tests.servers import free_port, kill_service, start_service

ENV = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}


def cli(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *args, "--data-dir", str(data_dir)],
        capture_output=True, text=True, env=env or ENV, check=False, timeout=120,
    )  # fmt: skip


def link_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_panel_link_names_the_port_serve_listens_on(tmp_path: Path) -> None:
    """`make run PORT=8731` then `recordseal panel link --data-dir data`: a link to 8731."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    server = start_service(data_dir, port, env={"RECORDSEAL_SEAL_INTERVAL": "0"})
    try:
        served = json.loads((data_dir / "service.json").read_text())
        assert (served["host"], served["port"]) == ("127.0.0.1", port)
        link = link_of(cli(data_dir, "panel", "link"))
        assert link.startswith(f"http://localhost:{port}/login/register?token=")
        # The registration page of that link is served there.
        page = httpx.get(link.replace("localhost", "127.0.0.1"), timeout=30)
        assert page.status_code == 200 and "passkey" in page.text.lower()
        # Options still win: --port, --host, --base-url.
        other = link_of(cli(data_dir, "panel", "link", "--port", "9443"))
        assert other.startswith("http://localhost:9443/login/register?token=")
        named = link_of(cli(data_dir, "panel", "link", "--host", "panel.example"))
        assert named.startswith(f"https://panel.example:{port}/login/register?token=")
        based = link_of(cli(data_dir, "panel", "link", "--base-url", "https://ops.example"))
        assert based.startswith("https://ops.example/login/register?token=")
    finally:
        kill_service(server)


def test_the_sign_in_page_of_a_new_install_names_the_command_of_the_first_link(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    server = start_service(data_dir, port, env={"RECORDSEAL_SEAL_INTERVAL": "0"})
    try:
        page = httpx.get(f"http://127.0.0.1:{port}/login", timeout=30).text
        assert "No operator has a passkey yet" in page
        start = page.index('<code id="first-link-command">') + len('<code id="first-link-command">')
        command = unescape(page[start : page.index("</code>", start)])
        assert f"panel link --data-dir {data_dir}" in command
        # The command, typed as shown, prints a link to this service.
        link = link_of(subprocess.run(shlex.split(command), capture_output=True, text=True,
                                      env=ENV, check=False, timeout=120))  # fmt: skip
        assert link.startswith(f"http://localhost:{port}/login/register?token=")

        # Once a passkey exists, the page says nothing about it.
        async def register() -> None:
            store = open_store(Settings(data_dir=data_dir))
            await store.open()
            try:
                await grant(store.panel, {"operator-1": "operator"})
            finally:
                await store.close()

        asyncio.run(register())
        page = httpx.get(f"http://127.0.0.1:{port}/login", timeout=30).text
        assert "No operator has a passkey yet" not in page and "panel link" not in page
        assert "Use the passkey registered for this operator panel." in page
    finally:
        kill_service(server)


def test_on_postgresql_the_page_names_the_database_url_by_its_variable(
    store_settings: Settings,
) -> None:
    """The URL may hold a password: the page names the variable, never the value."""
    with TestClient(create_app(store_settings)) as client:
        page = client.get("/login").text
    assert "panel link --data-dir" in page
    if store_settings.database_url:
        assert '--database-url "$RECORDSEAL_DATABASE_URL"' in unescape(page)
        assert store_settings.database_url not in page
    else:
        assert "--database-url" not in page


def test_serve_loads_the_seed_and_refuses_one_that_contradicts_the_database(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [{"id": "globex", "display_name": "Globex"}],
                "organizations": [{"id": "hq", "tenant_id": "globex", "display_name": "HQ"}],
                "fleets": [],
            }
        )
    )
    with_seed = {"RECORDSEAL_PANEL_TENANT_SEED": str(seed), "RECORDSEAL_SEAL_INTERVAL": "0"}
    for _ in range(2):  # loaded at the first start; the second finds it there
        kill_service(start_service(data_dir, free_port(), env=with_seed))
    listed = json.loads(cli(data_dir, "tenant", "list", "--json").stdout)
    assert [(t["id"], t["display_name"]) for t in listed] == [("globex", "Globex")]

    # A tenant made at run time, then a seed that names it otherwise: the start is refused.
    assert cli(data_dir, "tenant", "create", "acme", "--display-name", "Acme Corp").returncode == 0
    seed.write_text(
        json.dumps(
            {
                "tenants": [{"id": "acme", "display_name": "ACME Inc"}],
                "organizations": [],
                "fleets": [],
            }
        )
    )
    port = free_port()
    refused = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(data_dir),
         "--port", str(port)],
        capture_output=True, text=True, env={**ENV, **with_seed}, check=False, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip().splitlines()[-1]
    assert line.startswith(f"recordseal: RECORDSEAL_PANEL_TENANT_SEED: tenant seed {seed}:")
    for words in ("tenants[0]", "tenant 'acme'", "display_name 'Acme Corp'", "'ACME Inc'"):
        assert words in line, line
    assert "Traceback" not in refused.stderr
    listed = json.loads(cli(data_dir, "tenant", "list", "--json").stdout)
    assert [(t["id"], t["display_name"]) for t in listed] == [
        ("acme", "Acme Corp"),
        ("globex", "Globex"),
    ]

"""One panel across workers and hosts (issue 16), with real processes.

Two deployments run the same scenario: ``recordseal serve --workers 2`` on SQLite, and two
``recordseal serve`` processes with data directories of their own (the second gets a copy
of the first's ``keys/``, as every host of a deployment carries the same keys) on one
PostgreSQL cluster. Every HTTP request below opens a new connection, so the workers of one
``serve`` take turns as they would for many clients; with two processes, each step is done
through one and checked through the other:

1. a passkey registered in Chromium (virtual authenticator) through the first process signs
   in through the last; its operator role holds on every request through every process
   (30 page views, 12 token creations);
2. a provider registered through the first process is used by the last: sign-ins started on
   the last complete on the first (the provider's redirect URI);
3. a token revoked through the first (the panel) or by ``recordseal token revoke`` is refused
   by every process within the token cache time;
4. an sso operator's sign-out-everywhere ends that tenant's sessions on every process and
   leaves other tenants' and legacy sessions valid, cookies from before the upgrade
   included; a legacy operator-admin's ends all;
5. the fleet audit stream holds one line per event: one ``fleet.bound`` per fleet, one
   ``anchor.sealed`` per anchor, one ``fleet.updated`` for a manifest change every process
   reloads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright import sync_api

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.web.panel.sso import BINDING_COOKIE
from tests.panel.sso.conftest import BASIC_SECRET
from tests.panel.sso.op_server import OpenIdProvider, client_entry, running_op
from tests.panel.sso.tls import LocalTls, make_tls
from tests.pg_cluster import Cluster
from tests.servers import (
    chromium,
    free_port,
    kill_service,
    start_service,
    virtual_authenticator,
)

SEED = {
    "tenants": [
        {"id": "acme", "display_name": "Acme Corp"},
        {"id": "globex", "display_name": "Globex"},
    ],
    "organizations": [
        {"id": "eng", "tenant_id": "acme", "display_name": "Engineering",
         "sso_provider_ref": "acme-okta"},
        {"id": "hq", "tenant_id": "globex", "display_name": "Globex HQ"},
    ],
    "fleets": [
        {"fleet_id": "edge", "organization_id": "eng", "tenant_id": "acme"},
        {"fleet_id": "solo", "organization_id": "hq", "tenant_id": "globex"},
    ],
}  # fmt: skip
MANIFEST = """\
version = 1
[[fleet]]
id = "edge"
tenant_id = "acme"
preset = "balanced"
[[fleet]]
id = "solo"
tenant_id = "globex"
"""
#: The sign-out epoch of the deployment before the upgrade (its epoch file).
OLD_EPOCH = 2
JSON = {"Accept": "application/json"}


@dataclass
class Deployment:
    """The running processes: ``urls[i]`` is served from ``data_dirs[i]``."""

    urls: list[str]
    data_dirs: list[Path]
    database_url: str | None
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def first(self) -> str:
        return self.urls[0]

    @property
    def last(self) -> str:
        return self.urls[-1]

    def each(self, times: int) -> Iterator[str]:
        """``times`` URLs, every process in turn."""
        for number in range(times):
            yield self.urls[number % len(self.urls)]

    def cli(self, *argv: str, data_dir: Path | None = None) -> str:
        """A ``recordseal`` command on this deployment's store; its standard output."""
        url = ["--database-url", self.database_url] if self.database_url else []
        done = subprocess.run(
            [sys.executable, "-m", "recordseal.cli", *argv,
             "--data-dir", str(data_dir or self.data_dirs[-1]), *url],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout

    def keyring(self) -> CookieKeyring:
        key = (self.data_dirs[0] / "keys" / "panel-cookie.key").read_bytes()
        return CookieKeyring(SigningKey("panel-1", key))


def prepare(data_dir: Path, seed: Path) -> Path:
    """A data directory as the version before the database left it: its cookie key and its
    sign-out epoch file; and a manifest of its own."""
    (data_dir / "keys").mkdir(parents=True)
    shutil.copy(seed.parent / "panel-cookie.key", data_dir / "keys" / "panel-cookie.key")
    (data_dir / "panel-signout-epoch").write_text(str(OLD_EPOCH))
    manifest = data_dir / "fleets.toml"
    manifest.write_text(MANIFEST)
    return manifest


def environment(tls: LocalTls, seed: Path, manifest: Path, url: str | None) -> dict[str, str]:
    env = {
        "RECORDSEAL_PANEL_TENANT_SEED": str(seed),
        "RECORDSEAL_PANEL_FLEET_MANIFEST": str(manifest),
        "RECORDSEAL_FLEET_MANIFEST_RELOAD_INTERVAL": "0.2",
        "RECORDSEAL_SEAL_INTERVAL": "0.2",
        "RECORDSEAL_TRANSPARENCY_INTERVAL": "0",
        "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": "127.0.0.1/32",
        "RECORDSEAL_PANEL_SSO_CA_FILE": str(tls.ca_file),
        "RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS": "panel-operators",
        # Many requests from one address on purpose: no rate limit in the way.
        "RECORDSEAL_RATE_LIMIT_FAILED_TOKENS": "off",
        "RECORDSEAL_RATE_LIMIT_LOGIN": "off",
        "RECORDSEAL_RATE_LIMIT_SSO": "off",
    }
    if url:
        env["RECORDSEAL_DATABASE_URL"] = url
    return env


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LocalTls:
    return make_tls(tmp_path_factory.mktemp("one-panel-tls"))


#: The OpenID provider's registered clients (the test adds the panel's).
CLIENTS: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def op(tls: LocalTls) -> Iterator[OpenIdProvider]:
    with running_op(CLIENTS, tls) as provider:
        yield provider


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(SEED))
    (tmp_path / "panel-cookie.key").write_bytes(os.urandom(32))
    return path


@pytest.fixture(params=["sqlite-2-workers", "postgres-2-hosts"])
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, seed: Path, tls: LocalTls
) -> Iterator[Deployment]:
    database_url = None
    if request.param == "postgres-2-hosts":
        cluster: Cluster = request.getfixturevalue("postgres")
        database_url = cluster.url()
    first = tmp_path / "host-a"
    manifest = prepare(first, seed)
    running = Deployment([], [first], database_url)
    try:
        port = free_port()
        env = environment(tls, seed, manifest, database_url)
        workers = 1 if database_url else 2
        running.servers.append(start_service(first, port, workers=workers, env=env))
        running.urls.append(f"http://localhost:{port}")
        if database_url:  # a second host: its own data directory, the same keys
            second = tmp_path / "host-b"
            manifest_b = prepare(second, seed)
            for key in (first / "keys").iterdir():
                shutil.copy(key, second / "keys" / key.name)
            port = free_port()
            env = environment(tls, seed, manifest_b, database_url)
            running.servers.append(start_service(second, port, env=env))
            running.urls.append(f"http://localhost:{port}")
            running.data_dirs.append(second)
        yield running
    finally:
        for server in running.servers:
            kill_service(server)


# -- helpers ------------------------------------------------------------------------------


def get(url: str, cookie: str | None = None, **headers: str) -> httpx.Response:
    """One request on a new connection (so the workers of a ``serve`` take turns)."""
    if cookie is not None:
        headers["Cookie"] = f"{COOKIE_NAME}={cookie}"
    return httpx.get(url, headers={**JSON, **headers}, follow_redirects=False, timeout=30)


def post(url: str, cookie: str, csrf: str, body: Any = None) -> httpx.Response:
    headers = {**JSON, "Cookie": f"{COOKIE_NAME}={cookie}", "X-CSRF-Token": csrf}
    return httpx.post(url, json=body if body is not None else {}, headers=headers, timeout=30)


def session_of(url: str, cookie: str) -> dict[str, Any] | None:
    answer = get(f"{url}/tenants", cookie)
    if answer.status_code == 401:
        return None
    assert answer.status_code == 200, answer.text
    session: dict[str, Any] = answer.json()["session"]
    return session


def alive_everywhere(deployment: Deployment, cookie: str, times: int = 8) -> bool | None:
    """True when the cookie works through every process, False when refused by all; None
    when the answers differ (a process out of step)."""
    answers = {session_of(url, cookie) is not None for url in deployment.each(times)}
    return answers.pop() if len(answers) == 1 else None


def passkey_sign_in(browser: sync_api.Browser, deployment: Deployment) -> str:
    """Register a passkey through the first process (a link from ``recordseal panel
    link``), then sign in with it through the last; the session cookie."""
    link = deployment.cli("panel", "link", "--base-url", deployment.first).strip().splitlines()
    context = browser.new_context()
    try:
        page = context.new_page()
        virtual_authenticator(context, page)
        page.goto(link[-1])
        page.get_by_role("button", name="Create a passkey").click()
        page.wait_for_url(f"{deployment.first}/tenants")
        page.goto(f"{deployment.last}/login")
        page.get_by_role("button", name="Sign in with a passkey").click()
        page.wait_for_url(f"{deployment.last}/tenants")
        assert page.get_by_label("role").inner_text() == "operator"
        cookies = [c["value"] for c in context.cookies() if c["name"] == COOKIE_NAME]
        return cookies[-1]
    finally:
        context.close()


def sso_sign_in(deployment: Deployment, op: OpenIdProvider, user: str) -> str:
    """Start through the last process; the IdP sends the browser back to the first."""
    op.user = user
    started = get(f"{deployment.last}/sso/acme-okta/start?return_url=/tenants/acme")
    assert started.status_code == 307, started.text
    (binding,) = [
        value.split(";", 1)[0].split("=", 1)[1]
        for value in started.headers.get_list("set-cookie")
        if value.startswith(f"{BINDING_COOKIE}=")
    ]
    at_idp = httpx.get(
        started.headers["location"], follow_redirects=False, verify=op.tls.client_context()
    )
    callback = at_idp.headers["location"]
    assert callback.startswith(f"{deployment.first}/sso/acme-okta/callback?")
    done = get(callback, **{"Cookie": f"{BINDING_COOKIE}={binding}"})
    assert (done.status_code, done.headers["location"]) == (303, "/tenants/acme"), done.text
    return done.headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]


def audit_lines(deployment: Deployment) -> list[dict[str, Any]]:
    return [json.loads(line) for line in deployment.cli("fleet", "audit").splitlines()]


def wait_until(check: Any, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


# -- the scenario -------------------------------------------------------------------------


def test_one_panel_across_workers_and_hosts(
    deployment: Deployment, op: OpenIdProvider, tmp_path: Path
) -> None:
    keyring = deployment.keyring()
    exp = int(time.time()) + 3600
    before_upgrade = {  # cookies the version with one epoch file issued (its epoch: 2)
        "legacy": keyring.issue(LegacySession("old-admin", exp, OLD_EPOCH)),
        "globex": keyring.issue(TenantSession("g@globex.test", "globex", "hq", exp, "viewer", 2)),
        "acme": keyring.issue(TenantSession("c@acme.test", "acme", "eng", exp, "viewer", 2)),
        "signed out before": keyring.issue(LegacySession("old-admin", exp, OLD_EPOCH - 1)),
    }
    assert {name: alive_everywhere(deployment, c) for name, c in before_upgrade.items()} == {
        "legacy": True,
        "globex": True,
        "acme": True,
        "signed out before": False,
    }

    # 1. A passkey registered through one process is an operator through every one.
    with chromium() as browser:
        operator = passkey_sign_in(browser, deployment)
    roles = [session_of(url, operator) for url in deployment.each(30)]
    assert [s["role"] if s else None for s in roles] == ["operator"] * 30
    csrf = roles[0]["csrf_token"]  # type: ignore[index]
    created = [
        post(f"{url}/tenants/acme/tokens", operator, csrf, {"label": f"ci-{n}"})
        for n, url in enumerate(deployment.each(12))
    ]
    assert [answer.status_code for answer in created] == [201] * 12
    tokens = [answer.json()["new_token"] for answer in created]

    # 2. A provider registered through the first process signs people in through the last.
    redirect_uri = f"{deployment.first}/sso/acme-okta/callback"
    CLIENTS["panel-one"] = client_entry([redirect_uri], BASIC_SECRET)
    form = {
        "flavour": "code-exchange",
        "id": "acme-okta",
        "issuer": op.issuer,
        "client_id": "panel-one",
        "client_secret": BASIC_SECRET,
        "redirect_uri": redirect_uri,
    }
    registered = post(f"{deployment.first}/tenants/acme/orgs/eng/sso", operator, csrf, form)
    assert registered.status_code == 201, registered.text
    alice = [sso_sign_in(deployment, op, "alice") for _ in range(4)][-1]
    bob = sso_sign_in(deployment, op, "bob")
    sessions = [session_of(url, alice) for url in deployment.each(6)]
    assert {(s["role"], s["tenant_id"]) for s in sessions if s} == {("operator", "acme")}
    assert len([s for s in sessions if s]) == 6

    # 3. A revoked token is refused through every process once the token cache expires.
    by_panel, by_cli, kept = tokens[0], tokens[1], tokens[2]

    def streams(token: str, name: str) -> list[int]:
        headers = {"Authorization": f"Bearer {token}"}
        return [
            httpx.post(
                f"{url}/v1/streams", json={"name": f"{name}-{n}"}, headers=headers
            ).status_code
            for n, url in enumerate(deployment.each(6))
        ]

    assert streams(by_panel, "a") == [201] * 6 and streams(by_cli, "b") == [201] * 6
    listing = get(f"{deployment.first}/tenants/acme/tokens", operator).json()["tokens"]
    ids = {row["label"]: row["token_id"] for row in listing}
    assert all(row["last_used_at"] for row in listing if row["label"] in ("ci-0", "ci-1"))
    revoked = post(f"{deployment.first}/tenants/acme/tokens/{ids['ci-0']}/revoke", operator, csrf)
    assert revoked.status_code == 200
    out = deployment.cli("token", "revoke", ids["ci-1"], data_dir=deployment.data_dirs[-1])
    assert "revoked token" in out
    time.sleep(1.3)  # the token cache (1 s) of every process
    assert streams(by_panel, "c") == [401] * 6
    assert streams(by_cli, "d") == [401] * 6
    assert streams(kept, "e") == [201] * 6
    listed = deployment.cli("token", "list", "--tenant", "acme").splitlines()
    assert len(listed) == 1 + 12 and sum("revoked" in line for line in listed) == 2
    assert all(token not in "\n".join(listed) for token in tokens)

    # 4. acme's sso operator signs out everywhere through the last process: acme's sessions
    # end on every process; other tenants' and legacy sessions, old ones included, stay.
    alice_csrf = session_of(deployment.last, alice)["csrf_token"]  # type: ignore[index]
    out_of_acme = post(f"{deployment.last}/logout/everywhere", alice, alice_csrf)
    assert out_of_acme.json()["scope"] == "tenant" and out_of_acme.json()["tenant"] == "acme"
    assert {
        name: alive_everywhere(deployment, cookie)
        for name, cookie in {"alice": alice, "bob": bob, "acme before": before_upgrade["acme"],
                             "operator": operator, "legacy before": before_upgrade["legacy"],
                             "globex before": before_upgrade["globex"]}.items()
    } == {"alice": False, "bob": False, "acme before": False, "operator": True,
          "legacy before": True, "globex before": True}  # fmt: skip
    # A legacy operator-admin signs out everywhere through the first: every session ends.
    everyone = post(f"{deployment.first}/logout/everywhere", operator, csrf)
    assert everyone.json()["scope"] == "all"
    for cookie in (operator, before_upgrade["legacy"], before_upgrade["globex"]):
        assert alive_everywhere(deployment, cookie) is False
    fresh = sso_sign_in(deployment, op, "alice")
    assert alive_everywhere(deployment, fresh) is True

    # 5. One audit line per fleet event, however many workers and hosts run.
    wait_until(lambda: sum(e["event"] == "anchor.sealed" for e in audit_lines(deployment)) >= 2)
    events = audit_lines(deployment)
    assert sorted((e["event"], e["fleet"], e.get("tenant")) for e in events) == [
        ("anchor.sealed", "edge", "acme"),
        ("anchor.sealed", "solo", "globex"),
        ("fleet.bound", "edge", "acme"),
        ("fleet.bound", "solo", "globex"),
    ]
    for data_dir in deployment.data_dirs:  # every host gets the new manifest
        (data_dir / "fleets.toml").write_text(MANIFEST.replace('"balanced"', '"strict"'))

    def everyone_reloaded() -> bool:
        cookie = keyring.issue(LegacySession("root", exp, 10**6))
        for url in deployment.each(8):
            page = get(f"{url}/tenants/acme/orgs/eng", cookie).json()
            if page["fleet_status"]["edge"]["preset"] != "strict":
                return False
        return True

    wait_until(everyone_reloaded)
    time.sleep(0.5)  # a process that reloads last would write its line now
    updated = [e for e in audit_lines(deployment) if e["event"] == "fleet.updated"]
    assert [(e["fleet"], e["tenant"], e["details"]) for e in updated] == [
        ("edge", "acme", {"changed": "preset"})
    ]

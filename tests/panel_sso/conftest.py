"""The relying party under test (the panel's routes with a real registry and pending map) and
the real OpenID provider (pyop on 127.0.0.1) it talks to over HTTP."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession, Session
from recordseal.panel.sso.contract import SsoProvider
from recordseal.panel.sso.login import SsoLogins
from recordseal.panel.sso.nonces import PendingLogins
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.sso.provider_store import ProviderStore
from recordseal.panel.sso.registration import RegistrationForm, register_provider
from recordseal.panel.sso.registry import ProviderRegistry
from recordseal.panel.tenants import InMemoryTenantStore, Organization, Tenant
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.passkeys import login_page
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from recordseal.web.panel.sso import SsoContext
from tests.panel_sso.op_server import OpenIdProvider, client_entry, running_op
from tests.panel_sso.tls import LocalTls, make_tls

RP_BASE = "https://testserver.local"
OPERATOR_GROUPS = frozenset({"panel-operators"})
#: Client secrets with every character that breaks an unencoded Basic header.
BASIC_SECRET = "s3cr+t/with=equals:colon"
POST_SECRET = "p+st/secret=:x"
JSON = {"Accept": "application/json"}


def seeded_store() -> InMemoryTenantStore:
    store = InMemoryTenantStore()
    store.insert_tenant(Tenant("acme", "Acme Corp"))
    store.insert_tenant(Tenant("globex", "Globex"))
    store.insert_organization(Organization("eng", "acme", "Engineering", "acme-okta"))
    store.insert_organization(Organization("ops", "acme", "Operations"))
    store.insert_organization(Organization("hq", "globex", "Globex HQ"))
    return store


@dataclass
class Clock:
    """Real time plus an offset the test can move forward."""

    offset: float = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class RelyingParty:
    """The panel app under test, and handles on its parts."""

    app: Litestar
    panel: PanelContext
    registry: ProviderRegistry
    pending: PendingLogins
    clock: Clock
    keyring: CookieKeyring
    pending_path: Path

    def session_of(self, set_cookie: str) -> Session | None:
        token = set_cookie.split(";", 1)[0].split("=", 1)[1]
        return self.keyring.verify(token, self.clock())

    def legacy_operator_cookie(self) -> dict[str, str]:
        token = self.keyring.issue(LegacySession("root", int(time.time()) + 3600))
        return {"Cookie": f"{COOKIE_NAME}={token}"}


def build_rp(
    tmp_path: Path,
    policy: OutboundPolicy,
    *,
    store_path: Path | None = None,
    operator_groups: frozenset[str] = OPERATOR_GROUPS,
) -> RelyingParty:
    clock = Clock()
    keyring = CookieKeyring(SigningKey("test-key", b"k" * 32))
    panel = PanelContext(
        tenants=seeded_store(), keyring=keyring, passkey_roles={"root": "operator"}, clock=clock
    )
    registry = ProviderRegistry(policy, ProviderStore(store_path) if store_path else None)
    pending_path = tmp_path / "panel-sso.sqlite3"
    pending = PendingLogins(pending_path, clock=clock)
    app = Litestar(
        route_handlers=[*PANEL_ROUTES, login_page],
        template_config=panel_template_config(),
        logging_config=None,
        debug=False,
    )
    app.state.panel = panel
    app.state.sso = SsoContext(registry, SsoLogins(registry, pending, operator_groups))
    return RelyingParty(app, panel, registry, pending, clock, keyring, pending_path)


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LocalTls:
    return make_tls(tmp_path_factory.mktemp("tls"))


def loopback_policy(tls: LocalTls) -> OutboundPolicy:
    """127.0.0.1 allowed explicitly (it is not public), the test CA trusted."""
    return OutboundPolicy((ipaddress.ip_network("127.0.0.1/32"),), ca_file=tls.ca_file)


@pytest.fixture
def op(tls: LocalTls) -> Iterator[OpenIdProvider]:
    clients = {
        "panel-basic": client_entry(
            [f"{RP_BASE}/sso/acme-okta/callback", f"{RP_BASE}/sso/ops-okta/callback"],
            BASIC_SECRET,
        ),
        "panel-post": client_entry(
            [f"{RP_BASE}/sso/acme-post/callback"], POST_SECRET, "client_secret_post"
        ),
    }
    with running_op(clients, tls) as provider:
        yield provider


@pytest.fixture
def rp(tmp_path: Path, tls: LocalTls) -> RelyingParty:
    return build_rp(tmp_path, loopback_policy(tls))


@pytest.fixture
def client(rp: RelyingParty) -> Iterator[TestClient[Litestar]]:
    with TestClient(rp.app, base_url=RP_BASE) as test_client:
        yield test_client


def register_code(
    rp: RelyingParty,
    op: OpenIdProvider,
    provider_id: str = "acme-okta",
    *,
    org: str = "eng",
    client_id: str = "panel-basic",
    secret: str = BASIC_SECRET,
    method: str = "client_secret_basic",
    groups_claim: str = "",
) -> SsoProvider:
    organization = asyncio.run(rp.panel.tenants.get_organization("acme", org))
    form = RegistrationForm(
        flavour="code-exchange",
        id=provider_id,
        issuer=op.issuer,
        client_id=client_id,
        client_secret=secret,
        redirect_uri=f"{RP_BASE}/sso/{provider_id}/callback",
        token_endpoint_auth_method=method,
        groups_claim=groups_claim,
    )
    return asyncio.run(register_provider(rp.registry, organization, form))


def start(
    client: TestClient[Litestar], provider_id: str = "acme-okta", return_url: str = "/tenants/acme"
) -> httpx.Response:
    response = client.get(
        f"/sso/{provider_id}/start", params={"return_url": return_url}, follow_redirects=False
    )
    assert response.status_code == 307, response.text
    return response


def at_idp(op: OpenIdProvider, authorize_url: str) -> str:
    """The browser at the IdP: follow its answer to the redirect back to the panel."""
    answer = httpx.get(
        authorize_url, follow_redirects=False, timeout=10, verify=op.tls.client_context()
    )
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def login(
    client: TestClient[Litestar],
    op: OpenIdProvider,
    provider_id: str = "acme-okta",
    return_url: str = "/tenants/acme",
) -> httpx.Response:
    """Start, pass the IdP, and call the panel's callback (GET shape)."""
    callback = at_idp(op, start(client, provider_id, return_url).headers["location"])
    return client.get(callback, follow_redirects=False)

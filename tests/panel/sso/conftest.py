"""The relying party under test (the panel's routes with a real registry and pending map, on
the real panel store: SQLite in a temporary directory) and the real OpenID provider (pyop on
127.0.0.1) it talks to over HTTP.

The store is opened on an event loop of the relying party's own (an anyio blocking portal),
which every test client of it shares, so a test can call the registry or the pending map
(``rp.call``) before, during and after requests, as another process of the panel would.
"""

from __future__ import annotations

import functools
import ipaddress
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession, Session
from recordseal.panel.sso.contract import SsoProvider
from recordseal.panel.sso.login import SsoLogins
from recordseal.panel.sso.nonces import PendingLogins
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.sso.provider_store import SecretBox
from recordseal.panel.sso.registration import RegistrationForm, register_provider
from recordseal.panel.sso.registry import ProviderRegistry
from recordseal.panel.tenants import InMemoryTenantStore, Organization, Tenant
from recordseal.settings import Settings
from recordseal.storage.sqlite import SQLiteStore
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.passkeys import PASSKEY_ROUTES, PasskeyConfig
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from recordseal.web.panel.sso import SsoContext
from recordseal.web.ratelimit import RateLimiter
from tests.panel.sso.op_server import OpenIdProvider, client_entry, running_op
from tests.panel.sso.tls import LocalTls, make_tls
from tests.panel_support import grant

T = TypeVar("T")
RP_BASE = "https://testserver.local"
OPERATOR_GROUPS = frozenset({"panel-operators"})
#: Client secrets with every character that breaks an unencoded Basic header.
BASIC_SECRET = "s3cr+t/with=equals:colon"
POST_SECRET = "p+st/secret=:x"
JSON = {"Accept": "application/json"}
#: The key-encryption key of the relying parties under test (client secrets are sealed by it).
KEK = b"K" * 32


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
    """The panel app under test, handles on its parts, and the loop its store runs on."""

    app: Litestar
    panel: PanelContext
    registry: ProviderRegistry
    pending: PendingLogins
    clock: Clock
    keyring: CookieKeyring
    database: Path
    portal: BlockingPortal
    _closers: list[Callable[[], Any]] = field(default_factory=list)

    def call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``await function(*args, **kwargs)`` on the store's event loop."""
        return self.portal.call(functools.partial(function, *args, **kwargs))

    def client(self, base_url: str = RP_BASE) -> TestClient[Litestar]:
        """A test client of the app that shares the store's event loop."""
        client = TestClient(self.app, base_url=base_url)
        client.blocking_portal = self.portal
        return client

    @contextmanager
    def another_browser(self) -> Iterator[TestClient[Litestar]]:
        """A second client (its own cookies) beside a running one: requests only, since the
        app's lifespan runs once (a nested client's exit would stop the shared loop)."""
        yield self.client()

    def query(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        """Rows of the database, read (or written) as another process would."""
        with sqlite3.connect(self.database) as db:
            return db.execute(sql, parameters).fetchall()

    def session_of(self, set_cookie: str) -> Session | None:
        token = set_cookie.split(";", 1)[0].split("=", 1)[1]
        return self.keyring.verify(token, self.clock())

    def legacy_operator_cookie(self) -> dict[str, str]:
        token = self.keyring.issue(LegacySession("root", int(time.time()) + 3600))
        return {"Cookie": f"{COOKIE_NAME}={token}"}

    def close(self) -> None:
        for closer in reversed(self._closers):
            closer()


def build_rp(
    database: Path,
    policy: OutboundPolicy,
    *,
    operator_groups: frozenset[str] = OPERATOR_GROUPS,
) -> RelyingParty:
    """A relying party on the SQLite database ``database`` (two on one file are two
    processes of one panel); ``close()`` it (the ``make_rp`` fixture does)."""
    database.parent.mkdir(parents=True, exist_ok=True)
    portal_context: AbstractContextManager[BlockingPortal] = start_blocking_portal()
    portal = portal_context.__enter__()
    backend = SQLiteStore(database)
    portal.call(backend.open)
    portal.call(grant, backend.panel, {"root": "operator"})
    clock = Clock()
    keyring = CookieKeyring(SigningKey("test-key", b"k" * 32))
    panel = PanelContext(tenants=seeded_store(), keyring=keyring, store=backend.panel, clock=clock)
    registry = ProviderRegistry(policy, backend.panel, SecretBox(KEK), clock=clock)
    pending = PendingLogins(backend.panel, clock=clock)
    app = Litestar(
        route_handlers=[*PANEL_ROUTES, *PASSKEY_ROUTES],
        template_config=panel_template_config(),
        logging_config=None,
        debug=False,
    )
    app.state.panel = panel
    app.state.sso = SsoContext(registry, SsoLogins(registry, pending, operator_groups))
    # A service's rate limiter, limits off (as RECORDSEAL_RATE_LIMIT_SSO=off would set it).
    settings = Settings(data_dir=database.parent, rate_limit_login=None, rate_limit_sso=None)
    app.state.rate_limiter = limiter = RateLimiter.of(settings)
    app.state.passkey_config = PasskeyConfig.of(settings)  # the sign-in page's, as create_app
    rp = RelyingParty(app, panel, registry, pending, clock, keyring, database, portal)
    rp._closers.append(lambda: portal_context.__exit__(None, None, None))
    rp._closers.append(lambda: portal.call(backend.close))
    rp._closers.append(limiter.close)
    return rp


MakeRp = Callable[..., RelyingParty]


@pytest.fixture
def make_rp(tmp_path: Path) -> Iterator[MakeRp]:
    """``make_rp(policy, *, operator_groups=..., database=...)``: relying parties closed at
    the end of the test; each its own database unless ``database`` names a shared one."""
    made: list[RelyingParty] = []

    def make(
        policy: OutboundPolicy,
        *,
        operator_groups: frozenset[str] = OPERATOR_GROUPS,
        database: Path | None = None,
    ) -> RelyingParty:
        path = database or tmp_path / f"rp-{len(made)}" / "recordseal.sqlite3"
        rp = build_rp(path, policy, operator_groups=operator_groups)
        made.append(rp)
        return rp

    yield make
    for rp in made:
        rp.close()


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
def rp(make_rp: MakeRp, tls: LocalTls) -> RelyingParty:
    return make_rp(loopback_policy(tls))


@pytest.fixture
def client(rp: RelyingParty) -> Iterator[TestClient[Litestar]]:
    with rp.client() as test_client:
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
    organization = rp.call(rp.panel.tenants.get_organization, "acme", org)
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
    provider: SsoProvider = rp.call(register_provider, rp.registry, organization, form)
    return provider


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

"""An app made of the panel routes only, a seeded tenant store, the real panel store (SQLite in
a temporary directory), and cookie helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession, Role, TenantSession
from recordseal.panel.tenants import (
    FleetRef,
    InMemoryTenantStore,
    Organization,
    Tenant,
    TenantStore,
)
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from tests.panel_support import PanelDatabase

NOW = 1_800_000_000
LATER = NOW + 3600
JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def seeded_store() -> InMemoryTenantStore:
    store = InMemoryTenantStore()
    store.insert_tenant(Tenant("acme", "Acme Corp", contact_email="ops@acme.test"))
    store.insert_tenant(Tenant("globex", "<script>alert(1)</script> Globex", active=False))
    store.insert_organization(Organization("eng", "acme", "Engineering", "okta-acme"))
    store.insert_organization(Organization("ops", "acme", "Operations"))
    store.insert_organization(Organization("hq", "globex", "Globex HQ"))
    store.insert_fleet(FleetRef("fleet-a1", "eng", "acme"))
    store.insert_fleet(FleetRef("fleet-a2", "eng", "acme"))
    store.insert_fleet(FleetRef("fleet-g1", "hq", "globex"))
    return store


class SpyStore:
    """Delegates to a real store and records every call."""

    def __init__(self, inner: TenantStore) -> None:
        self.inner = inner
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def spy(*args: Any) -> Any:
            self.calls.append((name, args))
            return await method(*args)

        return spy


class Panel:
    """The test app plus helpers to mint cookies and send authenticated requests."""

    def __init__(
        self, store: Any, directory: Path, passkey_roles: dict[str, Role] | None = None
    ) -> None:
        self.keyring = CookieKeyring(SigningKey("test-key", b"k" * 32))
        self.database = PanelDatabase(directory, passkey_roles)
        self.context = PanelContext(
            tenants=store,
            keyring=self.keyring,
            store=self.database.store,
            clock=lambda: float(NOW),
        )
        self.app = Litestar(
            route_handlers=PANEL_ROUTES,
            template_config=panel_template_config(),
            logging_config=None,
            debug=False,
            lifespan=[self.database.lifespan],
        )
        self.app.state.panel = self.context

    def legacy(self, user: str = "root", exp: int = LATER, epoch: int | None = None) -> str:
        return self.keyring.issue(LegacySession(user, exp, epoch))

    def tenant(
        self,
        tenant: str = "acme",
        org: str = "eng",
        role: Role = "viewer",
        subject: str = "alice@acme.test",
        exp: int = LATER,
        epoch: int | None = None,
    ) -> str:
        return self.keyring.issue(TenantSession(subject, tenant, org, exp, role, epoch))

    @staticmethod
    def cookie(token: str, **headers: str) -> dict[str, str]:
        return {"Cookie": f"{COOKIE_NAME}={token}", **headers}


@pytest.fixture
def panel(tmp_path: Path) -> Panel:
    return Panel(seeded_store(), tmp_path, passkey_roles={"root": "operator"})


@pytest.fixture
def client(panel: Panel) -> Iterator[TestClient[Litestar]]:
    with TestClient(panel.app) as test_client:
        yield test_client

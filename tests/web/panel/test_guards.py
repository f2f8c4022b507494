"""The panel's checks are Litestar guards (web/panel/guards.py, docs/layers.md "The web layer").

The route table of the real application is walked: every panel route carries the session
guard, every mutating one the CSRF guard and a role guard (in that order), every route naming
a ``{tenant_id}`` the tenant-scope guard, and every sign-on POST a rate limit. A route added
without them fails here. Then the guards refuse, with the panel's problem codes, requests that
reach handlers which no longer check anything themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Controller, Litestar, Router, get, post
from litestar.params import FromPath
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from recordseal.settings import Settings
from recordseal.web.app import create_app
from recordseal.web.panel.guards import (
    MUTATING_METHODS,
    RoleGuard,
    TenantScope,
    operators_only,
    require_csrf,
    require_session,
    tenant_scope,
)
from recordseal.web.panel.passkeys import PASSKEY_ROUTES
from recordseal.web.panel.routes import PANEL_ROUTES, panel_router, panel_template_config
from recordseal.web.panel.session import csrf_token_for
from recordseal.web.problems import EXCEPTION_HANDLERS
from recordseal.web.ratelimit import RateLimited
from tests.web.panel.conftest import JSON, Panel, seeded_store

#: Routes that are not the panel's: the record API, the service's own (its public landing page
#: and icon among them), its documents, and the logs' tiles (read with a token or a session,
#: each checked by the route itself: tests/web/test_tiles.py).
NOT_PANEL_PREFIXES = ("/v1/", "/schema", "/static/", "/logs/")
NOT_PANEL = {"/", "/favicon.ico", "/health", "/readyz", "/metrics", "/verify-record"}
#: The panel's sign-on routes: they run before there is a session (docs/panel.md, docs/sso.md).
SIGN_ON = {
    ("GET", "/login"),
    ("POST", "/login/authenticate/start"),
    ("POST", "/login/authenticate/finish"),
    ("GET", "/login/register"),
    ("POST", "/login/register/start"),
    ("POST", "/login/register/finish"),
    ("GET", "/sso"),
    ("GET", "/sso/{provider_ref:str}/start"),
    ("GET", "/sso/{provider_ref:str}/callback"),
    ("POST", "/sso/{provider_ref:str}/callback"),
}


def unguarded(app: Litestar) -> list[str]:
    """What every panel route of ``app`` lacks, one line per missing guard."""
    findings: list[str] = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                findings += _missing(method, route.path, handler.resolve_guards())
    return findings


def _missing(method: str, path: str, guards: list[Any]) -> list[str]:
    where = f"{method} {path}"
    if path in NOT_PANEL or path.startswith(NOT_PANEL_PREFIXES):
        return []
    if (method, path) in SIGN_ON:
        limited = any(isinstance(guard, RateLimited) for guard in guards)
        return [] if method == "GET" or limited else [f"{where}: no rate limit"]
    order = {id(guard): position for position, guard in enumerate(guards)}
    if id(require_session) not in order:
        return [f"{where}: no session guard"]
    findings = []
    roles = [order[id(g)] for g in guards if isinstance(g, RoleGuard)]
    if method in MUTATING_METHODS:
        if order.get(id(require_csrf), -1) <= order[id(require_session)]:
            findings.append(f"{where}: no CSRF guard after the session guard")
        if not roles or min(roles) <= order.get(id(require_csrf), len(guards)):
            findings.append(f"{where}: no role guard after the CSRF guard")
    if "{tenant_id" in path:
        scopes = [order[id(g)] for g in guards if isinstance(g, TenantScope) and g.parameter]
        if not scopes or (roles and min(scopes) < min(roles)):
            findings.append(f"{where}: no tenant-scope guard (after the role guard)")
    return findings


def test_every_panel_route_of_the_application_carries_its_guards(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    assert unguarded(app) == []
    checked = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        for method in handler.http_methods - {"OPTIONS", "HEAD"}
        if not (route.path in NOT_PANEL or route.path.startswith(NOT_PANEL_PREFIXES))
        and (method, route.path) not in SIGN_ON
    }
    assert len(checked) >= 15  # the walk saw the panel's routes, mutating ones included
    assert {("GET", "/dashboard"), ("POST", "/logout"), ("POST", "/logout/everywhere")} < checked
    assert ("POST", "/tenants/{tenant_id:str}/tokens/{token_id:str}/revoke") in checked


class _Forgotten(Controller):
    """Routes a later change might add without their guards."""

    @post("/tenants/{tenant_id:str}/archive")
    async def archive(self, tenant_id: FromPath[str]) -> None: ...

    @get("/audit-log")
    async def audit_log(self) -> None: ...


class _HalfGuarded(Controller):
    @post("/tenants/{tenant_id:str}/rename", guards=[tenant_scope])
    async def rename(self, tenant_id: FromPath[str]) -> None: ...


def test_a_route_added_without_its_guards_is_found() -> None:
    inside = Router(
        path="/",
        route_handlers=[_HalfGuarded],
        guards=panel_router.guards,
        dependencies=panel_router.dependencies,
    )
    app = Litestar(
        route_handlers=[*PANEL_ROUTES, *PASSKEY_ROUTES, _Forgotten, inside],
        template_config=panel_template_config(),
    )
    assert sorted(unguarded(app)) == [
        "GET /audit-log: no session guard",
        "POST /tenants/{tenant_id:str}/archive: no session guard",
        "POST /tenants/{tenant_id:str}/rename: no role guard after the CSRF guard",
    ]


# -- the guards refuse before any handler runs ---------------------------------------------


class _Probe(Controller):
    """A mutation that checks nothing itself and counts the calls that reach it."""

    calls: list[str] = []  # noqa: RUF012

    @post("/tenants/{tenant_id:str}/probe", guards=[operators_only, tenant_scope])
    async def probe(self, tenant_id: FromPath[str]) -> dict[str, str]:
        _Probe.calls.append(tenant_id)
        return {"done": tenant_id}


def _with_csrf(panel: Panel, token: str) -> dict[str, str]:
    """JSON headers of a request with the session ``token`` and its CSRF token."""
    return {**JSON, **panel.cookie(token, **{"X-CSRF-Token": csrf_token_for(panel.keyring, token)})}


@pytest.fixture
def probed(tmp_path: Path) -> Iterator[tuple[TestClient[Litestar], Panel]]:
    panel = Panel(seeded_store(), tmp_path, passkey_roles={"root": "operator"})
    guarded = Router(
        path="/",
        route_handlers=[_Probe],
        guards=panel_router.guards,
        dependencies=panel_router.dependencies,
        exception_handlers=panel_router.exception_handlers,
    )
    panel.app = Litestar(
        route_handlers=[*PANEL_ROUTES, guarded],
        template_config=panel_template_config(),
        lifespan=[panel.database.lifespan],
    )
    panel.app.state.panel = panel.context
    _Probe.calls.clear()
    with TestClient(panel.app) as client:
        yield client, panel


def test_the_guards_refuse_before_a_handler_that_checks_nothing(
    probed: tuple[TestClient[Litestar], Panel],
) -> None:
    client, panel = probed
    operator = panel.tenant("acme", role="operator")
    viewer = panel.tenant("acme", role="viewer", subject="vera@acme.test")
    refusals = [
        ("acme", JSON, 401, "unauthenticated"),
        ("acme", panel.cookie(operator, **JSON), 403, "csrf_invalid"),
        ("acme", panel.cookie(operator, **JSON, **{"X-CSRF-Token": "x"}), 403, "csrf_invalid"),
        ("acme", _with_csrf(panel, viewer), 403, "forbidden_role"),
        ("globex", _with_csrf(panel, operator), 403, "forbidden_tenant"),
    ]
    for tenant, headers, status, code in refusals:
        answer = client.post(f"/tenants/{tenant}/probe", headers=headers)
        assert (answer.status_code, answer.json()["code"]) == (status, code), code
    assert _Probe.calls == []  # no refused request reached the handler
    metrics = panel.context.metrics
    assert (metrics["csrf_rejected"], metrics["forbidden_role"]) == (2, 1)
    assert metrics["forbidden_cross_tenant"] == 1

    allowed = client.post("/tenants/acme/probe", headers=_with_csrf(panel, operator))
    assert allowed.status_code == 201 and allowed.json() == {"done": "acme"}
    assert _Probe.calls == ["acme"]


def test_token_mutations_are_refused_by_their_guards(
    client: TestClient[Litestar], panel: Panel
) -> None:
    """The token routes check neither CSRF nor role themselves; this app has no token
    service at all, so a request the guards let through would fail with a 500."""
    viewer = panel.tenant("acme", role="viewer")
    operator = panel.tenant("acme", role="operator", subject="olga@acme.test")
    for path in ("/tenants/acme/tokens", "/tenants/acme/tokens/t-1/revoke"):
        refusals = [
            (path, panel.cookie(operator, **JSON), "csrf_invalid"),
            (path, _with_csrf(panel, viewer), "forbidden_role"),
            (path.replace("acme", "globex"), _with_csrf(panel, operator), "forbidden_tenant"),
        ]
        for target, headers, code in refusals:
            answer = client.post(target, headers=headers, json={})
            assert (answer.status_code, answer.json()["code"]) == (403, code), (target, code)


def test_options_is_answered_without_a_session(client: TestClient[Litestar]) -> None:
    """Litestar's own answer to OPTIONS (the allowed methods) passes the session guard, as on
    every other route of the service: it shows no panel data."""
    for path, allowed in (("/tenants", "GET, OPTIONS"), ("/logout", "OPTIONS, POST")):
        answer = client.options(path, follow_redirects=False)
        assert (answer.status_code, answer.headers["allow"]) == (204, allowed)


def test_sign_on_without_a_rate_limiter_is_a_wiring_error_not_unlimited() -> None:
    """The rate limit guard needs the typed state's limiter: missing, the ceremony fails
    (500 naming nothing to the client) instead of running without a limit."""
    app = Litestar(route_handlers=PASSKEY_ROUTES, exception_handlers=dict(EXCEPTION_HANDLERS))
    with TestClient(app) as client:
        answer = client.post("/login/authenticate/start", json={})
    assert (answer.status_code, answer.json()["code"]) == (500, "internal_error")

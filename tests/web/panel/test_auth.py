"""Session requirement (spec 5.1): browsers go to /login, API clients get 401 problem+json."""

from __future__ import annotations

from pathlib import Path

from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME
from tests.web.panel.conftest import HTML, JSON, NOW, Panel

ROUTES = ["/tenants", "/tenants/acme", "/tenants/acme/orgs/eng"]


def test_unauthenticated_browser_is_redirected_to_login(client: TestClient[Litestar]) -> None:
    for path in ROUTES:
        response = client.get(path, headers=HTML, follow_redirects=False)
        assert response.status_code == 303, path
        assert response.headers["location"] == "/login"


def test_unauthenticated_api_client_gets_401_problem(
    client: TestClient[Litestar], panel: Panel
) -> None:
    for path in ROUTES:
        response = client.get(path, headers=JSON)
        assert response.status_code == 401, path
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == "unauthenticated"
    assert panel.context.metrics["unauthenticated"] == len(ROUTES)


def test_expired_cookie_is_unauthenticated(client: TestClient[Litestar], panel: Panel) -> None:
    expired = panel.tenant(exp=NOW)
    response = client.get("/tenants", headers=panel.cookie(expired, **JSON))
    assert response.status_code == 401
    browser = client.get("/tenants", headers=panel.cookie(expired, **HTML), follow_redirects=False)
    assert browser.status_code == 303
    assert browser.headers["location"] == "/login"
    # the stale cookie is cleared
    assert browser.headers["set-cookie"].startswith(f"{COOKIE_NAME}=;")
    assert "Max-Age=0" in browser.headers["set-cookie"]


def test_tampered_cookie_is_unauthenticated(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.tenant(tenant="acme", role="operator")
    payload, key_id, mac = token.split(".")
    # flip one MAC character
    flipped = mac[:-2] + ("A" if mac[-2] != "A" else "B") + mac[-1]
    for bad in (f"{payload}.{key_id}.{flipped}", f"{payload}.other.{mac}", "garbage", ""):
        response = client.get("/tenants", headers=panel.cookie(bad, **JSON))
        assert response.status_code == 401, bad


def test_cookie_signed_with_unknown_key_is_unauthenticated(
    client: TestClient[Litestar], panel: Panel
) -> None:
    from recordseal.panel.cookies import CookieKeyring, SigningKey
    from recordseal.panel.sessions import LegacySession

    stranger = CookieKeyring(SigningKey("test-key", b"x" * 32))
    token = stranger.issue(LegacySession("root", NOW + 60))
    assert client.get("/tenants", headers=panel.cookie(token, **JSON)).status_code == 401


def test_valid_cookie_is_accepted(client: TestClient[Litestar], panel: Panel) -> None:
    response = client.get("/tenants", headers=panel.cookie(panel.tenant(), **JSON))
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert "Accept" in response.headers["vary"]


def test_panel_handlers_win_over_the_service_exception_handlers(tmp_path: Path) -> None:
    """Wired next to the service's app-wide handlers (as in ``create_app``), the panel's own
    ``PanelDenied`` handler still answers: redirect, problem+json and HTML pages stay right."""
    import msgspec
    from litestar.exceptions import HTTPException

    from recordseal.web import problems
    from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
    from tests.web.panel.conftest import seeded_store

    panel = Panel(seeded_store(), tmp_path)
    app = Litestar(
        route_handlers=PANEL_ROUTES,
        template_config=panel_template_config(),
        exception_handlers={
            msgspec.ValidationError: problems.validation_error_handler,
            HTTPException: problems.http_error_handler,
            Exception: problems.failure_handler,
        },
        logging_config=None,
        lifespan=[panel.database.lifespan],
    )
    app.state.panel = panel.context
    with TestClient(app) as client:
        assert client.get("/tenants", headers=HTML, follow_redirects=False).status_code == 303
        assert client.get("/tenants", headers=JSON).status_code == 401
        token = panel.tenant("acme")
        page = client.get("/tenants/globex", headers=panel.cookie(token, **HTML))
        assert page.status_code == 403
        assert page.headers["content-type"].startswith("text/html")


def test_missing_panel_state_is_a_server_error() -> None:
    from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config

    app = Litestar(
        route_handlers=PANEL_ROUTES, template_config=panel_template_config(), logging_config=None
    )
    with TestClient(app) as client:
        assert client.get("/tenants", headers=JSON).status_code == 500

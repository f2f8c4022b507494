"""Sign-out, sign-out everywhere, CSRF and the viewer role gate (spec 5, 7 rules 2-3)."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.web.panel.session import csrf_token_for
from tests.web.panel.conftest import HTML, JSON, Panel


def _csrf(panel: Panel, token: str) -> str:
    return csrf_token_for(panel.keyring, token)


def _form_csrf(client: TestClient[Litestar], panel: Panel, token: str) -> str:
    page = client.get("/tenants", headers=panel.cookie(token, **HTML)).text
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert match is not None
    return match.group(1)


def test_logout_clears_cookie_for_browser(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.tenant("acme", role="viewer")
    csrf = _form_csrf(client, panel, token)
    assert csrf == _csrf(panel, token)
    response = client.post(
        "/logout",
        data={"csrf_token": csrf},
        headers=panel.cookie(token, **HTML),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=;")
    assert "Max-Age=0" in cookie


def test_logout_json_client_with_header(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.legacy("someone")  # a legacy viewer may sign out
    csrf = client.get("/tenants", headers=panel.cookie(token, **JSON)).json()["session"][
        "csrf_token"
    ]
    response = client.post("/logout", headers=panel.cookie(token, **JSON, **{"X-CSRF-Token": csrf}))
    assert response.status_code == 200
    assert response.json() == {"signed_out": True}
    assert "Max-Age=0" in response.headers["set-cookie"]


def test_post_without_or_with_wrong_csrf_is_403(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.tenant("acme", role="operator")
    other = _csrf(panel, panel.tenant("acme", role="operator", subject="bob"))
    attempts = [
        {"headers": panel.cookie(token, **JSON)},
        {"headers": panel.cookie(token, **JSON, **{"X-CSRF-Token": "wrong"})},
        {"headers": panel.cookie(token, **JSON, **{"X-CSRF-Token": other})},
        {"headers": panel.cookie(token, **JSON), "data": {"csrf_token": ""}},
        {"headers": panel.cookie(token, **JSON), "data": {"csrf_token": other}},
    ]
    for path in ("/logout", "/logout/everywhere"):
        for attempt in attempts:
            response = client.post(path, **attempt)  # type: ignore[arg-type]
            assert response.status_code == 403, (path, attempt)
            assert response.json()["code"] == "csrf_invalid"
    page = client.post("/logout", headers=panel.cookie(token, **HTML), data={"csrf_token": "x"})
    assert page.status_code == 403
    assert page.headers["content-type"].startswith("text/html")
    assert panel.database.epochs() == {}
    assert panel.context.metrics["csrf_rejected"] == 2 * len(attempts) + 1


def test_unauthenticated_post_is_401_not_csrf(client: TestClient[Litestar]) -> None:
    response = client.post("/logout", headers=JSON)
    assert response.status_code == 401
    browser = client.post("/logout/everywhere", headers=HTML, follow_redirects=False)
    assert browser.status_code == 303
    assert browser.headers["location"] == "/login"


def test_viewer_cannot_sign_out_everywhere(client: TestClient[Litestar], panel: Panel) -> None:
    for token in (panel.tenant("acme", role="viewer"), panel.legacy("unlisted-passkey-user")):
        headers = panel.cookie(token, **JSON, **{"X-CSRF-Token": _csrf(panel, token)})
        response = client.post("/logout/everywhere", headers=headers)
        assert response.status_code == 403
        assert response.json()["code"] == "forbidden_role"
    assert panel.database.epochs() == {}
    assert panel.context.metrics["forbidden_role"] == 2


def _alive(client: TestClient[Litestar], panel: Panel, cookies: dict[str, str]) -> set[str]:
    return {
        name
        for name, token in cookies.items()
        if client.get("/tenants", headers=panel.cookie(token, **JSON)).status_code == 200
    }


def test_a_tenant_operator_signs_out_its_own_tenant_only(
    client: TestClient[Litestar], panel: Panel
) -> None:
    """An sso operator of acme (operator only because acme's IdP says so) ends every session
    of acme, in every organization, and leaves other tenants' and legacy sessions valid."""
    operator = panel.tenant("acme", role="operator")
    cookies = {
        "acme operator": operator,
        "acme ops viewer": panel.tenant("acme", "ops", role="viewer", subject="bob"),
        "acme no epoch": panel.tenant("acme", role="viewer", subject="carol", epoch=None),
        "globex viewer": panel.tenant("globex", "hq", role="viewer"),
        "legacy root": panel.legacy("root"),
    }
    assert _alive(client, panel, cookies) == set(cookies)

    response = client.post(
        "/logout/everywhere",
        data={"csrf_token": _form_csrf(client, panel, operator)},
        headers=panel.cookie(operator, **HTML),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    assert "Max-Age=0" in response.headers["set-cookie"]
    assert panel.database.epochs() == {"acme": 1}

    assert _alive(client, panel, cookies) == {"globex viewer", "legacy root"}
    fresh = panel.tenant("acme", role="viewer", epoch=1)
    assert client.get("/tenants", headers=panel.cookie(fresh, **JSON)).status_code == 200


def test_a_legacy_operator_admin_signs_out_everyone(
    client: TestClient[Litestar], panel: Panel
) -> None:
    token = panel.legacy("root")  # "root" has an operator passkey
    cookies = {
        "root": token,
        "other legacy": panel.legacy("someone"),
        "acme operator": panel.tenant("acme", role="operator"),
        "globex viewer": panel.tenant("globex", "hq", role="viewer"),
    }
    assert _alive(client, panel, cookies) == set(cookies)
    headers = panel.cookie(token, **JSON, **{"X-CSRF-Token": _csrf(panel, token)})
    response = client.post("/logout/everywhere", headers=headers)
    assert response.status_code == 200
    assert response.json() == {"signed_out": True, "signout_epoch": 1, "scope": "all"}
    assert panel.database.epochs() == {"": 1}
    assert _alive(client, panel, cookies) == set()
    fresh = {"root": panel.legacy("root", epoch=1), "acme": panel.tenant("acme", epoch=1)}
    assert _alive(client, panel, fresh) == {"root", "acme"}


def test_a_tenant_operator_signs_out_as_json(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.tenant("globex", "hq", role="operator")
    headers = panel.cookie(token, **JSON, **{"X-CSRF-Token": _csrf(panel, token)})
    response = client.post("/logout/everywhere", headers=headers)
    assert response.status_code == 200
    assert response.json() == {
        "signed_out": True,
        "signout_epoch": 1,
        "scope": "tenant",
        "tenant": "globex",
    }


def test_csrf_token_is_not_the_cookie_mac(panel: Panel) -> None:
    token = panel.tenant("acme")
    assert _csrf(panel, token) != token.rsplit(".", 1)[1]
    assert _csrf(panel, token) != _csrf(panel, panel.tenant("acme", subject="bob"))

"""``GET /dashboard``: where a sign-on lands when its return URL was missing or not local
(docs/sso.md, "Flows"). A tenant-scoped session goes to its tenant's page, a legacy one to
``/tenants``."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Request, get
from litestar.response import Redirect

from recordseal.web.panel.session import PRIVATE_HEADERS, Principal


@get("/dashboard", name="panel_dashboard", include_in_schema=False)
async def dashboard(request: Request[Any, Any, Any], panel_principal: Principal) -> Redirect:
    """303 to the session's home page."""
    tenant = panel_principal.tenant_id
    target = f"/tenants/{quote(tenant, safe='')}" if tenant else "/tenants"
    return Redirect(target, status_code=303, headers=PRIVATE_HEADERS)


DASHBOARD_ROUTES = [dashboard]

"""Tenant views (docs/panel.md, "Views and errors"), ``TenantController``: ``/tenants``,
``/tenants/{id}``, ``/tenants/{id}/orgs/{org}``, and ``/dashboard``, where a sign-on lands when
its return URL was missing or not local (docs/sso.md, "Flows").

A tenant-scoped session sees only its own tenant; a legacy session sees all. Asking for
another tenant's id is refused with 403 *before* the store is consulted (the ``tenant_scope``
guard, ``web/panel/guards.py``), so the answer is no oracle for which tenants exist. A missing
tenant or organization is 404. The two stay apart in logs (``panel.denied`` with
``reason=cross_tenant`` / ``panel.not_found``, both INFO) and in the metric
``recordseal_panel_denials_total`` (``status`` 403 / 404).

Each route answers JSON when the client prefers ``application/json`` and HTML otherwise
(``PanelCall.render``, ``web/panel/call.py``). The
pages carry the operator-admin's forms (a new tenant, freezing, a new organization), which
post to ``web/panel/tenant_admin.py``; the data of each page is built by one function
(:func:`tenants_page`, :func:`tenant_page`) that those routes reuse to show a refused form
again.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Response, get
from litestar.params import FromPath
from litestar.response import Redirect

from recordseal.panel.live import window_start
from recordseal.panel.tenants import FleetRef, Organization, OrganizationNotFound, TenantNotFound
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.guards import tenant_scope
from recordseal.web.panel.session import PRIVATE_HEADERS, Principal


async def tenants_page(call: PanelCall) -> dict[str, Any]:
    """The data of ``/tenants``: the tenants this session may see, its own (tenant-scoped)
    or all (legacy)."""
    tenants = call.context.tenants
    own = call.principal.tenant_id
    if own is None:
        return {"tenants": await tenants.list_tenants()}
    try:
        return {"tenants": [await tenants.get_tenant(own)]}
    except TenantNotFound:
        return {"tenants": []}


async def tenant_page(call: PanelCall, tenant_id: str) -> dict[str, Any]:
    """The data of ``/tenants/{id}`` (the scope guard ran first); 404 for a missing one."""
    tenants = call.context.tenants
    try:
        tenant = await tenants.get_tenant(tenant_id)
        organizations: list[Organization] = await tenants.list_organizations(tenant_id)
    except TenantNotFound:
        raise call.not_found("tenant") from None
    return {
        "tenant": tenant,
        "organizations": organizations,
        "fences": list(call.context.fences(tenant_id)),
    }


async def tenant_figures(call: PanelCall) -> dict[str, Any]:
    """What the tenant list shows beside each tenant (its streams, records and last ingest:
    the live view's summaries, from ``store.activity``, no record read), by tenant id; none
    when the panel has no activity store."""
    activity = call.context.activity
    now = call.context.clock()
    if activity is None:
        return {"figures": {}, "now": now}
    summaries = await activity.service_activity(window_start(now))
    return {"figures": {summary.tenant: summary for summary in summaries}, "now": now}


class TenantController(DomainController):
    """What a session sees of its tenants: read-only, for every role."""

    @get("/tenants", name="panel_tenants")
    async def list_tenants(self, call: Call) -> Response[Any]:
        """The tenants this session may see: its own (tenant-scoped) or all (legacy)."""
        page = await tenant_figures(call)
        return call.render("panel/tenants.html", await tenants_page(call), page=page)

    @get("/tenants/{tenant_id:str}", name="panel_tenant", guards=[tenant_scope])
    async def tenant_detail(self, call: Call, tenant_id: FromPath[str]) -> Response[Any]:
        """One tenant with its organizations; 403 for another tenant's id, 404 if missing."""
        return call.render("panel/tenant.html", await tenant_page(call, tenant_id))

    @get(
        "/tenants/{tenant_id:str}/orgs/{org_id:str}",
        name="panel_organization",
        guards=[tenant_scope],
    )
    async def organization_detail(
        self, call: Call, tenant_id: FromPath[str], org_id: FromPath[str]
    ) -> Response[Any]:
        """One organization with its fleets, each with its latest anchor and witness status
        (``fleet_status``, keyed by fleet id); the same 403 rule, 404 for a missing tenant or
        org."""
        tenants, fleet_status = call.context.tenants, call.context.fleet_status
        try:
            tenant = await tenants.get_tenant(tenant_id)
            organization = await tenants.get_organization(tenant_id, org_id)
            fleets: list[FleetRef] = await tenants.list_fleets(tenant_id, org_id)
        except TenantNotFound:
            raise call.not_found("tenant") from None
        except OrganizationNotFound:
            raise call.not_found("organization") from None
        statuses = {}
        if fleet_status is not None:
            statuses = {fleet.fleet_id: await fleet_status(fleet) for fleet in fleets}
        data = {
            "tenant": tenant,
            "organization": organization,
            "fleets": fleets,
            "fleet_status": statuses,
        }
        return call.render("panel/organization.html", data)

    @get("/dashboard", name="panel_dashboard")
    async def dashboard(self, panel_principal: Principal) -> Redirect:
        """303 to the session's home page: its tenant's (tenant-scoped), else ``/tenants``."""
        tenant = panel_principal.tenant_id
        target = f"/tenants/{quote(tenant, safe='')}" if tenant else "/tenants"
        return Redirect(target, status_code=303, headers=PRIVATE_HEADERS)

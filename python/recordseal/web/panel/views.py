"""Tenant views (docs/panel.md, "Views and errors"), ``TenantController``: ``/tenants``,
``/tenants/{id}``, ``/tenants/{id}/orgs/{org}``, and ``/dashboard``, where a sign-on lands when
its return URL was missing or not local (docs/sso.md, "Flows").

A tenant-scoped session sees only its own tenant; a legacy session sees all. Asking for
another tenant's id is refused with 403 *before* the store is consulted (the ``tenant_scope``
guard, ``web/panel/guards.py``), so the answer is no oracle for which tenants exist. A missing
tenant or organization is 404. The two stay apart in logs (``panel.denied`` with
``reason=cross_tenant`` / ``panel.not_found``, both INFO) and in the metric
``recordseal_panel_denials_total`` (``status`` 403 / 404).

Each route answers JSON when the client prefers ``application/json`` and HTML otherwise. The
pages carry the operator-admin's forms (a new tenant, freezing, a new organization), which
post to ``web/panel/tenant_admin.py``; the data of each page is built by one function
(:func:`tenants_page`, :func:`tenant_page`) that those routes reuse to show a refused form
again.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import msgspec
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Redirect, Template

from recordseal.panel.tenants import (
    FleetRef,
    Organization,
    OrganizationNotFound,
    Tenant,
    TenantNotFound,
)
from recordseal.web.controller import DomainController
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.guards import tenant_scope
from recordseal.web.panel.session import (
    PRIVATE_HEADERS,
    PanelDenied,
    PanelPrincipal,
    Principal,
    wants_json,
)

log = logging.getLogger("recordseal.panel.web")


def _session_json(principal: PanelPrincipal) -> dict[str, Any]:
    return {
        "kind": principal.kind,
        "subject": principal.subject,
        "role": principal.role,
        "tenant_id": principal.tenant_id,
        "org_id": principal.org_id,
        "csrf_token": principal.csrf_token,
    }


def render(
    request: Request[Any, Any, Any],
    principal: PanelPrincipal,
    template: str,
    data: dict[str, Any],
    status: int = 200,
    page: dict[str, Any] | None = None,
) -> Response[Any]:
    """``data`` as JSON or as the page ``template``; ``page`` holds what only the page shows
    (a refused form's message and values)."""
    if wants_json(request):
        body = {**msgspec.to_builtins(data), "session": _session_json(principal)}
        return Response(
            msgspec.json.encode(body),
            status_code=status,
            media_type="application/json",
            headers=PRIVATE_HEADERS,
        )
    return Template(
        template_name=template,
        context={**data, **(page or {}), "principal": principal},
        headers=PRIVATE_HEADERS,
        status_code=status,
    )


async def tenants_page(context: PanelContext, principal: PanelPrincipal) -> dict[str, Any]:
    """The data of ``/tenants``: the tenants this session may see, its own (tenant-scoped)
    or all (legacy)."""
    tenants: list[Tenant]
    if principal.tenant_id is None:
        tenants = await context.tenants.list_tenants()
    else:
        try:
            tenants = [await context.tenants.get_tenant(principal.tenant_id)]
        except TenantNotFound:
            tenants = []
    return {"tenants": tenants}


async def tenant_page(
    context: PanelContext, principal: PanelPrincipal, tenant_id: str, path: str
) -> dict[str, Any]:
    """The data of ``/tenants/{id}`` (the scope guard ran first); 404 for a missing one."""
    try:
        tenant = await context.tenants.get_tenant(tenant_id)
        organizations: list[Organization] = await context.tenants.list_organizations(tenant_id)
    except TenantNotFound:
        raise not_found(context, principal, "tenant", path) from None
    return {
        "tenant": tenant,
        "organizations": organizations,
        "fences": list(context.fences(tenant_id)),
    }


def not_found(
    context: PanelContext, principal: PanelPrincipal, what: str, path: str
) -> PanelDenied:
    context.count("not_found")
    log.info("panel.not_found", extra={"kind": what, "subject": principal.subject, "path": path})
    return PanelDenied(404, f"{what}_not_found", f"no such {what}", principal=principal)


async def tenant_or_404(
    context: PanelContext, principal: PanelPrincipal, tenant_id: str, path: str
) -> Tenant:
    """The tenant (the ``tenant_scope`` guard ran first), or the 404 of a missing one."""
    try:
        return await context.tenants.get_tenant(tenant_id)
    except TenantNotFound:
        raise not_found(context, principal, "tenant", path) from None


class TenantController(DomainController):
    """What a session sees of its tenants: read-only, for every role."""

    @get("/tenants", name="panel_tenants")
    async def list_tenants(
        self,
        request: Request[Any, Any, Any],
        panel_principal: Principal,
        panel: NamedDependency[PanelContext],
    ) -> Response[Any]:
        """The tenants this session may see: its own (tenant-scoped) or all (legacy)."""
        data = await tenants_page(panel, panel_principal)
        return render(request, panel_principal, "panel/tenants.html", data)

    @get(
        "/tenants/{tenant_id:str}",
        name="panel_tenant",
        guards=[tenant_scope],
    )
    async def tenant_detail(
        self,
        request: Request[Any, Any, Any],
        panel_principal: Principal,
        panel: NamedDependency[PanelContext],
        tenant_id: FromPath[str],
    ) -> Response[Any]:
        """One tenant with its organizations; 403 for another tenant's id, 404 if missing."""
        data = await tenant_page(panel, panel_principal, tenant_id, request.url.path)
        return render(request, panel_principal, "panel/tenant.html", data)

    @get(
        "/tenants/{tenant_id:str}/orgs/{org_id:str}",
        name="panel_organization",
        guards=[tenant_scope],
    )
    async def organization_detail(
        self,
        request: Request[Any, Any, Any],
        panel_principal: Principal,
        panel: NamedDependency[PanelContext],
        tenant_id: FromPath[str],
        org_id: FromPath[str],
    ) -> Response[Any]:
        """One organization with its fleets, each with its latest anchor and witness status
        (``fleet_status``, keyed by fleet id); the same 403 rule, 404 for a missing tenant or
        org."""
        path = request.url.path
        try:
            tenant = await panel.tenants.get_tenant(tenant_id)
            organization = await panel.tenants.get_organization(tenant_id, org_id)
            fleets: list[FleetRef] = await panel.tenants.list_fleets(tenant_id, org_id)
        except TenantNotFound:
            raise not_found(panel, panel_principal, "tenant", path) from None
        except OrganizationNotFound:
            raise not_found(panel, panel_principal, "organization", path) from None
        statuses = {}
        if panel.fleet_status is not None:
            statuses = {fleet.fleet_id: await panel.fleet_status(fleet) for fleet in fleets}
        return render(
            request,
            panel_principal,
            "panel/organization.html",
            {
                "tenant": tenant,
                "organization": organization,
                "fleets": fleets,
                "fleet_status": statuses,
            },
        )

    @get("/dashboard", name="panel_dashboard")
    async def dashboard(self, panel_principal: Principal) -> Redirect:
        """303 to the session's home page: its tenant's (tenant-scoped), else ``/tenants``."""
        tenant = panel_principal.tenant_id
        target = f"/tenants/{quote(tenant, safe='')}" if tenant else "/tenants"
        return Redirect(target, status_code=303, headers=PRIVATE_HEADERS)

"""Tenant views (docs/panel.md, "Views and errors"): ``/tenants``, ``/tenants/{id}``,
``/tenants/{id}/orgs/{org}``.

A tenant-scoped session sees only its own tenant; a legacy session sees all. Asking for
another tenant's id is refused with 403 *before* the store is consulted, so the answer is
no oracle for which tenants exist. A missing tenant or organization is 404. The two stay
apart in logs (``panel.denied`` with ``reason=cross_tenant`` / ``panel.not_found``, both INFO)
and in the metric ``recordseal_panel_denials_total`` (``status`` 403 / 404).

Each route answers JSON when the client prefers ``application/json`` and HTML otherwise.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.params import FromPath
from litestar.response import Template

from recordseal.panel.tenants import (
    FleetRef,
    Organization,
    OrganizationNotFound,
    Tenant,
    TenantNotFound,
)
from recordseal.web.panel.context import PanelContext, panel_context
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
) -> Response[Any]:
    if wants_json(request):
        body = {**msgspec.to_builtins(data), "session": _session_json(principal)}
        return Response(
            msgspec.json.encode(body), media_type="application/json", headers=PRIVATE_HEADERS
        )
    return Template(
        template_name=template,
        context={**data, "principal": principal},
        headers=PRIVATE_HEADERS,
    )


def check_tenant_scope(
    context: PanelContext,
    principal: PanelPrincipal,
    tenant_id: str | None,
    path: str,
    detail: str = "this session is scoped to another tenant",
) -> None:
    """The cross-tenant rule; runs before any store call. ``tenant_id`` None asks for
    something of no tenant (a legacy fleet's), which only a legacy session may read."""
    if principal.tenant_id is not None and principal.tenant_id != tenant_id:
        context.count("forbidden_cross_tenant")
        log.info(
            "panel.denied",
            extra={
                "reason": "cross_tenant",
                "subject": principal.subject,
                "session_tenant": principal.tenant_id,
                "requested_tenant": tenant_id,
                "path": path,
            },
        )
        raise PanelDenied(403, "forbidden_tenant", detail, principal=principal)


def not_found(
    context: PanelContext, principal: PanelPrincipal, what: str, path: str
) -> PanelDenied:
    context.count("not_found")
    log.info("panel.not_found", extra={"kind": what, "subject": principal.subject, "path": path})
    return PanelDenied(404, f"{what}_not_found", f"no such {what}", principal=principal)


async def tenant_or_404(
    context: PanelContext, principal: PanelPrincipal, tenant_id: str, path: str
) -> Tenant:
    """The tenant (after :func:`check_tenant_scope`), or the 404 of a missing one."""
    try:
        return await context.tenants.get_tenant(tenant_id)
    except TenantNotFound:
        raise not_found(context, principal, "tenant", path) from None


@get("/tenants", name="panel_tenants", tags=["panel"], include_in_schema=False)
async def list_tenants(
    request: Request[Any, Any, Any], panel_principal: Principal
) -> Response[Any]:
    """The tenants this session may see: its own (tenant-scoped) or all (legacy)."""
    context = panel_context(request)
    tenants: list[Tenant]
    if panel_principal.tenant_id is None:
        tenants = await context.tenants.list_tenants()
    else:
        try:
            tenants = [await context.tenants.get_tenant(panel_principal.tenant_id)]
        except TenantNotFound:
            tenants = []
    return render(request, panel_principal, "panel/tenants.html", {"tenants": tenants})


@get("/tenants/{tenant_id:str}", name="panel_tenant", tags=["panel"], include_in_schema=False)
async def tenant_detail(
    request: Request[Any, Any, Any], panel_principal: Principal, tenant_id: FromPath[str]
) -> Response[Any]:
    """One tenant with its organizations; 403 for another tenant's id, 404 if missing."""
    context = panel_context(request)
    check_tenant_scope(context, panel_principal, tenant_id, request.url.path)
    try:
        tenant = await context.tenants.get_tenant(tenant_id)
        organizations: list[Organization] = await context.tenants.list_organizations(tenant_id)
    except TenantNotFound:
        raise not_found(context, panel_principal, "tenant", request.url.path) from None
    return render(
        request,
        panel_principal,
        "panel/tenant.html",
        {"tenant": tenant, "organizations": organizations},
    )


@get(
    "/tenants/{tenant_id:str}/orgs/{org_id:str}",
    name="panel_organization",
    tags=["panel"],
    include_in_schema=False,
)
async def organization_detail(
    request: Request[Any, Any, Any],
    panel_principal: Principal,
    tenant_id: FromPath[str],
    org_id: FromPath[str],
) -> Response[Any]:
    """One organization with its fleets, each with its latest anchor and witness status
    (``fleet_status``, keyed by fleet id); the same 403 rule, 404 for a missing tenant or org."""
    context = panel_context(request)
    check_tenant_scope(context, panel_principal, tenant_id, request.url.path)
    try:
        tenant = await context.tenants.get_tenant(tenant_id)
        organization = await context.tenants.get_organization(tenant_id, org_id)
        fleets: list[FleetRef] = await context.tenants.list_fleets(tenant_id, org_id)
    except TenantNotFound:
        raise not_found(context, panel_principal, "tenant", request.url.path) from None
    except OrganizationNotFound:
        raise not_found(context, panel_principal, "organization", request.url.path) from None
    statuses = {}
    if context.fleet_status is not None:
        statuses = {fleet.fleet_id: await context.fleet_status(fleet) for fleet in fleets}
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


VIEW_ROUTES = [list_tenants, tenant_detail, organization_detail]

"""The tenant hierarchy changed from the panel (docs/panel.md, "Tenants, organizations,
fleets"), ``TenantAdminController``:

- ``POST /tenants``: a new tenant (``id``, ``display_name``, optional ``contact_email``);
- ``POST /tenants/{tenant_id}/freeze`` and ``/unfreeze``: read-only, and back;
- ``POST /tenants/{tenant_id}/orgs``: a new organization (``id``, ``display_name``).

Each takes a form (the pages' own, with the CSRF field) or JSON (with the ``X-CSRF-Token``
header), and passes the panel's guards in order: session, CSRF, the operator-admin role (a
passkey operator's session: a sign-on session acts inside its one tenant), then the tenant
scope. The rules and the audit line are ``services/tenant_admin.py``'s. A browser is sent to
the tenant's page (303); a JSON client gets the tenant or organization (201 when made). A
refused input is 422 naming the field and the rule, a taken id 409 (``tenant_exists``,
``organization_exists``), a frozen tenant's new organization 409 ``tenant_inactive``, a
missing tenant 404; a browser sees the page again with the refusal beside the form.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import msgspec
from litestar import Request, Response, post
from litestar.params import FromPath
from litestar.response import Redirect

from recordseal.services.errors import NotFound, ServiceError
from recordseal.services.tenant_admin import Actor, TenantAdmin
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.guards import operator_admins_only, tenant_scope
from recordseal.web.panel.session import PRIVATE_HEADERS, PanelDenied, PanelPrincipal
from recordseal.web.panel.views import tenant_page, tenants_page
from recordseal.web.problems import STATUS


class _TenantIn(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    display_name: str
    contact_email: str | None = None


class _OrganizationIn(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    display_name: str


async def _body(
    request: Request[Any, Any, Any], principal: PanelPrincipal, shape: type[Any], fields: str
) -> dict[str, str]:
    """The submitted members as strings: a form's, or a JSON object's (read like every JSON
    body, web/bodies.py; 400 ``request_invalid`` when it is not of ``shape``)."""
    if not is_json_media_type(request.content_type):
        form = await request.form()
        return {name: str(form.get(name) or "") for name in shape.__struct_fields__}
    raw = await request.body()
    try:
        check_json_text(raw)
        decoded = msgspec.json.decode(raw, type=shape, strict=True)
    except (ServiceError, msgspec.MsgspecError):
        raise PanelDenied(
            400, "request_invalid", f"the body is not {fields}", principal=principal
        ) from None
    return {name: getattr(decoded, name) or "" for name in shape.__struct_fields__}


def _actor(principal: PanelPrincipal) -> Actor:
    return Actor(principal.subject, "panel")


def _admin(context: PanelContext) -> TenantAdmin:
    return TenantAdmin(context.tenants, context.tenant_changed)


def _denied(error: ServiceError, principal: PanelPrincipal) -> PanelDenied:
    return PanelDenied(
        STATUS[error.kind], error.code, str(error), principal=principal, field=error.field
    )


def _to_tenant(tenant_id: str) -> Redirect:
    return Redirect(
        f"/tenants/{quote(tenant_id, safe='')}", status_code=303, headers=PRIVATE_HEADERS
    )


class TenantAdminController(DomainController):
    """New tenants and organizations, freezing and unfreezing: operator-admins only."""

    @post("/tenants", name="panel_tenant_create", guards=[operator_admins_only])
    async def create_tenant(self, call: Call) -> Response[Any]:
        """A new tenant, active (a tenant registered only by its API tokens gets the name)."""
        principal = call.principal
        entered = await _body(
            call.request, principal, _TenantIn, '{"id", "display_name"[, "contact_email"]}'
        )
        try:
            tenant = await _admin(call.context).create_tenant(
                entered["id"], entered["display_name"], entered["contact_email"], _actor(principal)
            )
        except ServiceError as error:
            if call.wants_json:
                raise _denied(error, principal) from None
            data = await tenants_page(call)
            page = {"tenant_error": error, "entered": entered}
            return call.render("panel/tenants.html", data, STATUS[error.kind], page)
        if call.wants_json:
            return call.render("panel/tenants.html", {"tenant": tenant}, 201)
        return _to_tenant(tenant.id)

    @post(
        "/tenants/{tenant_id:str}/freeze",
        name="panel_tenant_freeze",
        guards=[operator_admins_only, tenant_scope],
    )
    async def freeze(self, call: Call, tenant_id: FromPath[str]) -> Response[Any]:
        """Make the tenant read-only: no new records, streams, tokens or organizations."""
        return await self._set_active(call, tenant_id, False)

    @post(
        "/tenants/{tenant_id:str}/unfreeze",
        name="panel_tenant_unfreeze",
        guards=[operator_admins_only, tenant_scope],
    )
    async def unfreeze(self, call: Call, tenant_id: FromPath[str]) -> Response[Any]:
        """Make a frozen tenant writable again."""
        return await self._set_active(call, tenant_id, True)

    async def _set_active(self, call: PanelCall, tenant_id: str, active: bool) -> Response[Any]:
        try:
            tenant, changed = await _admin(call.context).set_active(
                tenant_id, active, _actor(call.principal)
            )
        except NotFound:
            raise call.not_found("tenant") from None
        if call.wants_json:
            return call.render("panel/tenant.html", {"tenant": tenant, "changed": changed})
        return _to_tenant(tenant.id)

    @post(
        "/tenants/{tenant_id:str}/orgs",
        name="panel_organization_create",
        guards=[operator_admins_only, tenant_scope],
    )
    async def create_organization(self, call: Call, tenant_id: FromPath[str]) -> Response[Any]:
        """A new organization of an active tenant."""
        principal = call.principal
        entered = await _body(call.request, principal, _OrganizationIn, '{"id", "display_name"}')
        try:
            organization = await _admin(call.context).create_organization(
                tenant_id, entered["id"], entered["display_name"], _actor(principal)
            )
        except NotFound:
            raise call.not_found("tenant") from None
        except ServiceError as error:
            if call.wants_json:
                raise _denied(error, principal) from None
            data = await tenant_page(call, tenant_id)
            page = {"organization_error": error, "entered": entered}
            return call.render("panel/tenant.html", data, STATUS[error.kind], page)
        if call.wants_json:
            return call.render("panel/organization.html", {"organization": organization}, 201)
        return _to_tenant(tenant_id)

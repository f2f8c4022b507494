"""API tokens of the record service, managed by operators from the panel (issue 6).

``GET /tenants/{tenant}/tokens`` lists a tenant's tokens (never the token itself, only its
id, label and dates). ``POST`` there creates one and shows it once; ``POST
/tenants/{tenant}/tokens/{token_id}/revoke`` revokes one. Both mutations pass the panel's
session, CSRF and operator checks (``panel_principal``), and the cross-tenant rule runs
before anything is looked up. A frozen tenant (``active`` false, docs/panel.md, "Sessions") gets no
new token
(409 ``tenant_inactive``); its tokens can still be revoked, since that only takes access
away. A revoked token stops working at once in this process and within the token cache time
(5 s) in the others.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.params import FromPath

from recordseal.panel.tenants import Tenant
from recordseal.services.errors import ServiceError
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.panel.context import panel_context
from recordseal.web.panel.session import PanelDenied, PanelPrincipal, Principal
from recordseal.web.panel.views import check_tenant_scope, not_found, render, tenant_or_404
from recordseal.web.services import services_of

MAX_LABEL = 128


class _TokenIn(msgspec.Struct, forbid_unknown_fields=True):
    label: str = ""


async def _json_label(request: Request[Any, Any, Any], principal: PanelPrincipal) -> str:
    """``{"label": ...}``, read like every JSON body (web/bodies.py); 400 otherwise."""
    raw = await request.body()
    try:
        check_json_text(raw)
        return msgspec.json.decode(raw, type=_TokenIn, strict=True).label
    except (ServiceError, msgspec.MsgspecError):
        raise PanelDenied(
            400, "request_invalid", 'the body is not {"label": string}', principal=principal
        ) from None


async def _page(
    request: Request[Any, Any, Any],
    principal: PanelPrincipal,
    tenant: Tenant,
    *,
    new_token: str | None = None,
    status: int = 200,
) -> Response[Any]:
    """The token page of a tenant the caller's scope was already checked for."""
    tokens = services_of(request).tokens
    response = render(
        request,
        principal,
        "panel/tokens.html",
        {"tenant": tenant, "tokens": await tokens.list(tenant.id), "new_token": new_token},
    )
    response.status_code = status
    return response


@get("/tenants/{tenant_id:str}/tokens", name="panel_tokens", include_in_schema=False)
async def list_tokens(
    request: Request[Any, Any, Any], panel_principal: Principal, tenant_id: FromPath[str]
) -> Response[Any]:
    """The tenant's API tokens: id, label, created, revoked."""
    context = panel_context(request)
    check_tenant_scope(context, panel_principal, tenant_id, request.url.path)
    tenant = await tenant_or_404(context, panel_principal, tenant_id, request.url.path)
    return await _page(request, panel_principal, tenant)


@post("/tenants/{tenant_id:str}/tokens", name="panel_token_create", include_in_schema=False)
async def create_token(
    request: Request[Any, Any, Any], panel_principal: Principal, tenant_id: FromPath[str]
) -> Response[Any]:
    """Create a token (operators); the answer shows it once, only its hash is kept."""
    context = panel_context(request)
    check_tenant_scope(context, panel_principal, tenant_id, request.url.path)
    tenant = await tenant_or_404(context, panel_principal, tenant_id, request.url.path)
    if not tenant.active:
        raise PanelDenied(
            409,
            "tenant_inactive",
            "the tenant is frozen read-only: no new API tokens",
            principal=panel_principal,
        )
    if is_json_media_type(request.content_type):
        label = (await _json_label(request, panel_principal)).strip()
    else:
        label = str((await request.form()).get("label") or "").strip()
    if len(label) > MAX_LABEL or any(ord(c) < 0x20 for c in label):
        raise PanelDenied(
            422,
            "label_invalid",
            f"a label is at most {MAX_LABEL} characters, no control characters",
            principal=panel_principal,
        )
    tokens = services_of(request).tokens
    try:
        token = await tokens.create(tenant_id, label)
    except ServiceError as error:
        raise PanelDenied(422, error.code, str(error), principal=panel_principal) from None
    return await _page(request, panel_principal, tenant, new_token=token, status=201)


@post(
    "/tenants/{tenant_id:str}/tokens/{token_id:str}/revoke",
    name="panel_token_revoke",
    include_in_schema=False,
)
async def revoke_token(
    request: Request[Any, Any, Any],
    panel_principal: Principal,
    tenant_id: FromPath[str],
    token_id: FromPath[str],
) -> Response[Any]:
    """Revoke a token (operators); 404 when the tenant has no live token with this id."""
    context = panel_context(request)
    check_tenant_scope(context, panel_principal, tenant_id, request.url.path)
    tokens = services_of(request).tokens
    if not await tokens.revoke(tenant_id, token_id):
        raise not_found(context, panel_principal, "token", request.url.path)
    tenant = await tenant_or_404(context, panel_principal, tenant_id, request.url.path)
    return await _page(request, panel_principal, tenant)


TOKEN_ROUTES = [list_tokens, create_token, revoke_token]

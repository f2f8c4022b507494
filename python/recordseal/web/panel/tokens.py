"""API tokens of the record service, managed by operators from the panel.

``GET /tokens`` lists the tokens of every tenant that holds any (a tenant-scoped session: its
own tenant's only); every such tenant has a row in the tenant store, since making a token for a
new tenant id (``recordseal token create --tenant T``) registers the tenant
(``storage/hierarchy.py``). ``GET /tenants/{tenant}/tokens`` lists one tenant's tokens (never
the token itself, only its id, label and dates, last use included). ``POST`` there creates one
and shows it once; ``POST /tenants/{tenant}/tokens/{token_id}/revoke`` revokes one.
``TokenController`` holds the routes: both mutations pass the panel's session, CSRF and
operator guards (``web/panel/guards.py``), and the cross-tenant guard runs before anything is
looked up. A frozen tenant (``active`` false, docs/panel.md, "Freezing a tenant") gets no new
token (409 ``tenant_inactive``); its tokens can still be revoked, since that only takes access
away.
A revoked token stops working at once in this process and within the token cache time (1 s)
in every other.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath

from recordseal.panel.tenants import Tenant
from recordseal.services.errors import ServiceError
from recordseal.services.tokens import TokenService
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.guards import operators_only, tenant_scope
from recordseal.web.panel.session import PanelDenied, PanelPrincipal
from recordseal.web.problems import STATUS
from recordseal.web.state import provide_tokens

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
    call: PanelCall,
    tokens: TokenService,
    tenant: Tenant,
    *,
    new_token: str | None = None,
    status: int = 200,
) -> Response[Any]:
    """The token page of a tenant the caller's scope was already checked for."""
    data = {"tenant": tenant, "tokens": await tokens.list(tenant.id), "new_token": new_token}
    return call.render("panel/tokens.html", data, status)


class TokenController(DomainController):
    """The record API's tokens: listed by every role, created and revoked by operators."""

    dependencies = {"tokens": Provide(provide_tokens, sync_to_thread=False)}  # noqa: RUF012

    @get("/tokens", name="panel_all_tokens")
    async def all_tokens(self, call: Call, tokens: NamedDependency[TokenService]) -> Response[Any]:
        """The tokens of every tenant that holds any (a tenant-scoped session: its own
        tenant's), under each tenant's display name."""
        rows = await tokens.list(call.principal.tenant_id)
        tenants_now = await call.context.tenants.list_tenants()
        names = {tenant.id: tenant.display_name for tenant in tenants_now}
        groups: dict[str, list[Any]] = {}
        for row in rows:
            groups.setdefault(row.tenant, []).append(row)
        tenants = [
            {"id": tenant_id, "display_name": names.get(tenant_id, tenant_id), "tokens": group}
            for tenant_id, group in groups.items()
        ]
        return call.render("panel/all_tokens.html", {"tenants": tenants})

    @get(
        "/tenants/{tenant_id:str}/tokens",
        name="panel_tokens",
        guards=[tenant_scope],
    )
    async def list_tokens(
        self, call: Call, tokens: NamedDependency[TokenService], tenant_id: FromPath[str]
    ) -> Response[Any]:
        """The tenant's API tokens: id, label, created, last used, revoked."""
        return await _page(call, tokens, await call.tenant(tenant_id))

    @post(
        "/tenants/{tenant_id:str}/tokens",
        name="panel_token_create",
        guards=[operators_only, tenant_scope],
    )
    async def create_token(
        self, call: Call, tokens: NamedDependency[TokenService], tenant_id: FromPath[str]
    ) -> Response[Any]:
        """Create a token (operators); the answer shows it once, only its hash is kept."""
        request, principal = call.request, call.principal
        tenant = await call.tenant(tenant_id)
        if not tenant.active:  # refused before the body is read; the store refuses it too
            raise PanelDenied(
                409,
                "tenant_inactive",
                "the tenant is frozen read-only: no new API tokens",
                principal=principal,
            )
        if is_json_media_type(request.content_type):
            label = (await _json_label(request, principal)).strip()
        else:
            label = str((await request.form()).get("label") or "").strip()
        if len(label) > MAX_LABEL or any(ord(c) < 0x20 for c in label):
            raise PanelDenied(
                422,
                "label_invalid",
                f"a label is at most {MAX_LABEL} characters, no control characters",
                principal=principal,
            )
        try:
            token = await tokens.create(tenant_id, label)
        except ServiceError as error:
            status = STATUS[error.kind]  # 422 a label, 409 a freeze that came first
            raise PanelDenied(status, error.code, str(error), principal=principal) from None
        return await _page(call, tokens, tenant, new_token=token, status=201)

    @post(
        "/tenants/{tenant_id:str}/tokens/{token_id:str}/revoke",
        name="panel_token_revoke",
        guards=[operators_only, tenant_scope],
    )
    async def revoke_token(
        self,
        call: Call,
        tokens: NamedDependency[TokenService],
        tenant_id: FromPath[str],
        token_id: FromPath[str],
    ) -> Response[Any]:
        """Revoke a token (operators); 404 when the tenant has no live token with this id."""
        tenant = await call.tenant(tenant_id)
        if not await tokens.revoke(tenant_id, token_id):
            raise call.not_found("token")
        return await _page(call, tokens, tenant)

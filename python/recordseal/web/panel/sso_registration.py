"""Provider registration form of an organization (docs/sso.md), behind the panel session:
``SsoRegistrationController``.

- ``GET /tenants/{tenant}/orgs/{org}/sso``: the organization's providers (id, flavour, issuer,
  client id or audience, auth method; never a secret) and the registration form.
- ``POST /tenants/{tenant}/orgs/{org}/sso``: operators only (CSRF token required), form
  fields ``flavour`` (``code-exchange`` or ``jwt-bearer``), ``id``, ``issuer``, ``audience``,
  ``client_id``, ``client_secret``, ``redirect_uri``, ``token_endpoint_auth_method``,
  ``groups_claim``, urlencoded (browsers) or JSON. Discovery and the key set are loaded before
  anything is stored. Browsers get 303 back to the page; JSON clients 201 with the provider.
  Refusals: 422 ``registration_invalid`` (the field and rule, including a failed discovery),
  409 ``provider_duplicate``, 502 ``discovery_unreachable``; the browser sees the form again
  with the message and the entered values except the secret.
- ``POST /tenants/{tenant}/orgs/{org}/sso/{provider}/remove``: operators; unregisters one of
  this organization's providers (404 otherwise). Logins already started with it are refused
  at their callback. A provider registered in code at process start (SAML) is not removed
  here (409 ``provider_built_in``): each worker holds it and a restart brings it back.

The cross-tenant guard runs before the store is consulted, as on every tenant view; the
mutations pass the CSRF and operator guards (``web/panel/guards.py``). Who may
register or remove (decision; the organization is the sign-on boundary of docs/panel.md): an
operator with a legacy (passkey) session, for any organization, or an operator with an sso
session, for its own organization only; an sso operator of another organization of the same
tenant may look at the page but gets 403 ``forbidden_organization`` on a mutation, so one
organization cannot put its own identity provider in front of another's people. An id that
another organization declares as its ``sso_provider_ref`` is refused (422 on ``id``), so no
organization can take over the sign-on link of another one before that one registers.
A tenant with ``active`` false is frozen read-only (docs/panel.md, "Sessions"): its providers are
neither
registered nor removed (409 ``tenant_inactive``); its people still sign in and read.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Redirect

from recordseal.panel.sso.contract import SsoProvider
from recordseal.panel.sso.discovery import DiscoveryError
from recordseal.panel.sso.errors import RegistrationError
from recordseal.panel.sso.jwt_bearer import JwtBearerProvider
from recordseal.panel.sso.oidc import OidcCodeProvider
from recordseal.panel.sso.registration import RegistrationForm, register_provider
from recordseal.panel.sso.registry import ProviderRegistry
from recordseal.panel.tenants import Organization, OrganizationNotFound, Tenant, TenantNotFound
from recordseal.services.errors import ServiceError
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.guards import operators_only, tenant_scope
from recordseal.web.panel.session import PRIVATE_HEADERS, PanelDenied, PanelPrincipal
from recordseal.web.panel.sso import SsoContext
from recordseal.web.problems import answer_of, problem_answer

log = logging.getLogger("recordseal.panel.web")
#: Who registered or removed which provider: the same audit logger as the sign-ons.
audit = logging.getLogger("recordseal.panel.audit")

_FORM_FIELDS = (
    "flavour",
    "id",
    "issuer",
    "audience",
    "client_id",
    "client_secret",
    "redirect_uri",
    "token_endpoint_auth_method",
    "groups_claim",
)


def describe(provider: SsoProvider) -> dict[str, Any]:
    """What the page and the JSON show of a provider: never its secret."""
    summary: dict[str, Any] = {"id": provider.id, "protocol": provider.protocol}
    if isinstance(provider, OidcCodeProvider):
        config = provider.config
        summary |= {
            "flavour": "code-exchange",
            "issuer": config.issuer,
            "client_id": config.client_id,
            "redirect_uri": config.redirect_uri,
            "token_endpoint_auth_method": config.token_endpoint_auth_method,
            "groups_claim": config.groups_claim,
        }
    elif isinstance(provider, JwtBearerProvider):
        summary |= {
            "flavour": "jwt-bearer",
            "issuer": provider.config.issuer,
            "audience": provider.config.audience,
        }
    return summary


async def _organization(
    call: PanelCall, tenant_id: str, org_id: str
) -> tuple[Tenant, Organization]:
    """The organization of the path (the ``tenant_scope`` guard ran first), or a 404."""
    try:
        tenant = await call.context.tenants.get_tenant(tenant_id)
        organization = await call.context.tenants.get_organization(tenant_id, org_id)
    except TenantNotFound:
        raise call.not_found("tenant") from None
    except OrganizationNotFound:
        raise call.not_found("organization") from None
    return tenant, organization


def may_manage(principal: PanelPrincipal, tenant: Tenant, organization_id: str) -> bool:
    """Whether ``principal`` may register and remove the organization's providers."""
    return tenant.active and principal.is_operator and principal.org_id in (None, organization_id)


def _check_manager(call: PanelCall, tenant: Tenant, organization: Organization) -> None:
    """Mutations: an sso session only manages its own organization's providers, and a frozen
    tenant's providers do not change (the role and CSRF guards already ran). Not a guard: it
    answers after the tenant and organization were found (404 first)."""
    principal = call.principal
    if principal.org_id is None or principal.org_id == organization.id:
        if not tenant.active:
            log.info(
                "panel.denied",
                extra={"reason": "tenant_inactive", "tenant": tenant.id, "path": call.path},
            )
            raise PanelDenied(
                409,
                "tenant_inactive",
                "the tenant is frozen read-only: its sign-on providers cannot change",
                principal=principal,
            )
        return
    call.context.count("forbidden_organization")
    log.info(
        "panel.denied",
        extra={
            "reason": "organization",
            "subject": principal.subject,
            "session_org": principal.org_id,
            "requested_org": organization.id,
            "path": call.path,
        },
    )
    raise PanelDenied(
        403,
        "forbidden_organization",
        "this session may only manage its own organization's sign-on",
        principal=principal,
    )


async def _declared_elsewhere(context: PanelContext, organization: Organization) -> set[str]:
    """The ``sso_provider_ref`` values declared by every other organization."""
    declared: set[str] = set()
    for tenant in await context.tenants.list_tenants():
        for other in await context.tenants.list_organizations(tenant.id):
            if (other.tenant_id, other.id) == (organization.tenant_id, organization.id):
                continue
            if other.sso_provider_ref:
                declared.add(other.sso_provider_ref)
    return declared


async def _page(
    call: PanelCall,
    registry: ProviderRegistry,
    tenant: Tenant,
    organization: Organization,
    *,
    error: RegistrationError | None = None,
    entered: dict[str, str] | None = None,
    status: int = 200,
) -> Response[Any]:
    providers = await registry.for_organization(tenant.id, organization.id)
    response = call.render(
        "panel/sso.html",
        {
            "tenant": tenant,
            "organization": organization,
            "providers": [describe(provider) for provider in providers],
            "error": {"field": error.field, "message": error.message} if error else None,
            "entered": entered or {},
            "may_manage": may_manage(call.principal, tenant, organization.id),
            "removable": [p.id for p in providers if not registry.built_in(p.id)],
        },
    )
    response.status_code = status
    return response


async def _submitted(request: Request[Any, Any, Any]) -> dict[str, str]:
    if is_json_media_type(request.content_type):
        raw = await request.body()
        try:
            check_json_text(raw)  # no repeated member, bounded nesting (web/bodies.py)
            body = msgspec.json.decode(raw)
        except (ServiceError, msgspec.DecodeError):
            raise RegistrationError("body", "is not valid JSON") from None
        if not isinstance(body, dict):
            raise RegistrationError("body", "must be a JSON object")
        source: Any = body
    else:
        source = await request.form()
    values: dict[str, str] = {}
    for name in _FORM_FIELDS:
        value = source.get(name)
        if value is not None and not isinstance(value, str):
            raise RegistrationError(name, "must be a string")
        values[name] = value or ""
    return values


async def _refused(
    call: PanelCall,
    registry: ProviderRegistry,
    tenant: Tenant,
    organization: Organization,
    refused: RegistrationError | DiscoveryError,
    entered: dict[str, str],
) -> Response[Any]:
    status, _, message, field = answer_of(refused)  # the one mapping (web/problems.py)
    error = RegistrationError(field or "", message or "")
    audit.info(
        "panel.sso_registration_refused",
        extra={"tenant": tenant.id, "org": organization.id, "field": error.field, "status": status},
    )
    if call.wants_json:
        response = problem_answer(refused)
        response.headers.update(PRIVATE_HEADERS)
        return response
    shown = {name: value for name, value in entered.items() if name != "client_secret"}
    return await _page(
        call, registry, tenant, organization, error=error, entered=shown, status=status
    )


def _audit(
    event: str, call: PanelCall, provider_id: str, tenant: Tenant, organization: Organization
) -> None:
    """The audit line of a provider registered or removed: which, where, by whom."""
    audit.info(
        event,
        extra={
            "provider": provider_id,
            "tenant": tenant.id,
            "org": organization.id,
            "by": call.principal.subject,
        },
    )


class SsoRegistrationController(DomainController):
    """An organization's sign-on providers: seen by every role of the tenant, registered and
    removed by operators (the organization's own, or legacy ones)."""

    @get("/tenants/{tenant_id:str}/orgs/{org_id:str}/sso", name="panel_sso", guards=[tenant_scope])
    async def sso_page(
        self,
        call: Call,
        sso: NamedDependency[SsoContext],
        tenant_id: FromPath[str],
        org_id: FromPath[str],
    ) -> Response[Any]:
        """The organization's sign-on providers and the registration form."""
        tenant, organization = await _organization(call, tenant_id, org_id)
        return await _page(call, sso.registry, tenant, organization)

    @post(
        "/tenants/{tenant_id:str}/orgs/{org_id:str}/sso",
        name="panel_sso_register",
        status_code=201,
        guards=[operators_only, tenant_scope],
    )
    async def sso_register(
        self,
        call: Call,
        sso: NamedDependency[SsoContext],
        tenant_id: FromPath[str],
        org_id: FromPath[str],
    ) -> Response[Any]:
        """Register a provider for the organization (operators)."""
        registry = sso.registry
        tenant, organization = await _organization(call, tenant_id, org_id)
        _check_manager(call, tenant, organization)
        entered: dict[str, str] = {}
        try:
            entered = await _submitted(call.request)
            form = RegistrationForm(**entered)
            reserved = await _declared_elsewhere(call.context, organization)
            provider = await register_provider(registry, organization, form, reserved=reserved)
        except (RegistrationError, DiscoveryError) as error:
            return await _refused(call, registry, tenant, organization, error, entered)
        _audit("panel.sso_registered", call, provider.id, tenant, organization)
        if call.wants_json:
            return Response(
                msgspec.json.encode(describe(provider)),
                status_code=201,
                media_type="application/json",
                headers=PRIVATE_HEADERS,
            )
        return Redirect(call.path, status_code=303, headers=PRIVATE_HEADERS)

    @post(
        "/tenants/{tenant_id:str}/orgs/{org_id:str}/sso/{provider_id:str}/remove",
        name="panel_sso_remove",
        status_code=200,
        guards=[operators_only, tenant_scope],
    )
    async def sso_remove(
        self,
        call: Call,
        sso: NamedDependency[SsoContext],
        tenant_id: FromPath[str],
        org_id: FromPath[str],
        provider_id: FromPath[str],
    ) -> Response[Any]:
        """Unregister one of the organization's providers (operators)."""
        registry = sso.registry
        tenant, organization = await _organization(call, tenant_id, org_id)
        _check_manager(call, tenant, organization)
        provider = await registry.resolve(provider_id)
        if provider is None or (provider.tenant_id, provider.organization_id) != (
            tenant.id,
            organization.id,
        ):
            raise call.not_found("provider")
        if registry.built_in(provider_id):
            # Registered in code at process start (SAML, ...): every worker registered it and a
            # restart registers it again, so removing it here would only split the workers.
            log.info(
                "panel.denied",
                extra={
                    "reason": "provider_built_in",
                    "provider": provider_id,
                    "path": call.path,
                },
            )
            raise PanelDenied(
                409,
                "provider_built_in",
                "this provider is registered at process start; change the deployment to remove it",
                principal=call.principal,
            )
        await registry.remove(provider_id)
        _audit("panel.sso_removed", call, provider_id, tenant, organization)
        if call.wants_json:
            return Response(
                msgspec.json.encode({"removed": provider_id}),
                media_type="application/json",
                headers=PRIVATE_HEADERS,
            )
        path = f"/tenants/{tenant.id}/orgs/{organization.id}/sso"
        return Redirect(path, status_code=303, headers=PRIVATE_HEADERS)

"""The panel's checks as Litestar guards (docs/panel.md, "Sessions"; docs/layers.md, "The web
layer").

A guard runs before the handler and before its dependencies; it refuses by raising
``PanelDenied`` (``web/panel/session.py``). They run in the order of the layers, router first:

- :func:`require_session`, on the panel's router (every panel route but the sign-on ones): a
  verified session, else 401 ``unauthenticated``;
- :func:`require_csrf`, on the router too: a mutating request (POST, PUT, PATCH, DELETE) must
  present the session's CSRF token, else 403 ``csrf_invalid``;
- a role guard on every mutating route, :data:`operators_only` (a viewer gets 403
  ``forbidden_role``), :data:`operator_admins_only` (the tenant hierarchy's changes: a legacy,
  passkey operator only, since a tenant-scoped session acts inside one tenant; others get 403
  ``forbidden_role``) or :data:`any_role` (sign-out is every user's);
- :data:`tenant_scope` on every route naming a ``{tenant_id}``: a tenant-scoped session asking
  for another tenant gets 403 ``forbidden_tenant`` before anything is looked up, so the answer
  is no oracle for which tenants exist; :data:`tenantless` on a route of no tenant, which only
  a legacy session may read.

``tests/web/panel/test_guards.py`` walks the application's route table: a panel route without
these guards fails it.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import Role
from recordseal.web.observe import note_tenant
from recordseal.web.panel.context import PanelContext, panel_context
from recordseal.web.panel.session import PanelDenied, PanelPrincipal, principal_in, principal_of

log = logging.getLogger("recordseal.panel.web")

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")

Connection = ASGIConnection[Any, Any, Any, Any]


async def require_session(connection: Connection, _: BaseRouteHandler) -> None:
    """The verified principal of the session cookie, kept on the connection.

    ``OPTIONS`` passes: Litestar answers it itself with the route's allowed methods (204,
    ``Allow``), no panel data, as for every route of the service."""
    if connection.scope.get("method") == "OPTIONS":
        return
    context = panel_context(connection)
    cookie = connection.cookies.get(COOKIE_NAME)
    session = await context.verify(cookie) if cookie else None
    if cookie is None or session is None:
        context.count("unauthenticated")
        raise PanelDenied(
            401, "unauthenticated", "sign in to use the panel", clear_cookie=bool(cookie)
        )
    principal = await principal_of(context, cookie, session)
    note_tenant(connection.scope, principal.tenant_id)
    connection.scope["user"] = principal


async def require_csrf(connection: Connection, _: BaseRouteHandler) -> None:
    """A mutating request presents the session's CSRF token (header first, else the form
    field), compared in constant time."""
    if connection.scope.get("method") not in MUTATING_METHODS:
        return
    principal = principal_in(connection)
    if await _csrf_ok(connection, principal.csrf_token):
        return
    panel_context(connection).count("csrf_rejected")
    log.info(
        "panel.denied",
        extra={"reason": "csrf", "path": connection.url.path, "subject": principal.subject},
    )
    raise PanelDenied(403, "csrf_invalid", "missing or wrong CSRF token", principal=principal)


async def _csrf_ok(connection: Connection, expected: str) -> bool:
    presented = connection.headers.get(CSRF_HEADER)
    if (
        presented is None
        and isinstance(connection, Request)
        and connection.content_type[0] in _FORM_TYPES
    ):
        value = (await connection.form()).get(CSRF_FIELD)
        presented = value if isinstance(value, str) else None
    if not presented:
        return False
    return hmac.compare_digest(presented.encode("utf-8", "replace"), expected.encode("ascii"))


@dataclass(frozen=True)
class RoleGuard:
    """The least role a route needs; every mutating panel route declares one. ``admin``: the
    operator must also be an operator-admin, a legacy session, which sees every tenant."""

    role: Role
    admin: bool = False

    async def __call__(self, connection: Connection, _: BaseRouteHandler) -> None:
        principal = principal_in(connection)
        allowed = principal.is_operator_admin if self.admin else principal.is_operator
        if self.role == "viewer" or allowed:
            return
        panel_context(connection).count("forbidden_role")
        log.info(
            "panel.denied",
            extra={
                "reason": "role",
                "path": connection.url.path,
                "subject": principal.subject,
                "role": principal.role,
            },
        )
        needed = (
            "an operator-admin (a passkey operator's session: sign-on sessions act inside"
            " one tenant)"
            if self.admin
            else "the operator role"
        )
        raise PanelDenied(403, "forbidden_role", f"this action needs {needed}", principal=principal)


#: Mutations of operators (token create and revoke, sign-on providers, sign-out everywhere).
operators_only = RoleGuard("operator")
#: Changes to the tenant hierarchy (tenants, their state, organizations).
operator_admins_only = RoleGuard("operator", admin=True)
#: Mutations every signed-in user may make (signing out).
any_role = RoleGuard("viewer")


@dataclass(frozen=True)
class TenantScope:
    """The cross-tenant rule, before any store call: the route's ``{tenant_id}`` path
    parameter (``parameter`` None: a route of no tenant, a legacy fleet's) must be the
    session's tenant, unless the session is a legacy one, which sees every tenant."""

    parameter: str | None = "tenant_id"
    detail: str = "this session is scoped to another tenant"

    async def __call__(self, connection: Connection, _: BaseRouteHandler) -> None:
        principal = principal_in(connection)
        tenant_id = None if self.parameter is None else connection.path_params[self.parameter]
        check_tenant_scope(
            panel_context(connection), principal, tenant_id, connection.url.path, self.detail
        )


def check_tenant_scope(
    context: PanelContext,
    principal: PanelPrincipal,
    tenant_id: str | None,
    path: str,
    detail: str = "this session is scoped to another tenant",
) -> None:
    """The cross-tenant rule; ``tenant_id`` None asks for something of no tenant (a legacy
    fleet's), which only a legacy session may read."""
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


#: Routes naming a ``{tenant_id}``.
tenant_scope = TenantScope()
#: The service-wide views (every tenant's figures): legacy sessions only, whose view is the
#: operator-admin one (all tenants visible); a tenant-scoped session sees its own tenant's.
all_tenants = TenantScope(
    None, "this page shows every tenant; a tenant-scoped session sees its own tenant's"
)
#: Routes of no tenant: legacy sessions only.
tenantless = TenantScope(
    None, "this log belongs to no tenant; a tenant-scoped session cannot read it"
)

"""``PanelCall``: one request to a panel route behind the session, as its handler sees it
(docs/panel.md, "Views and errors").

It holds the request, the principal the session guard verified and the panel's context, which
every handler and helper of the panel needs together. Handlers take it as the dependency
``call`` (:data:`Call`, provided on the panel's router by :func:`provide_call`) and answer
through it: the page or its JSON (:meth:`PanelCall.render`), the 404 of something missing
(:meth:`PanelCall.not_found`, :meth:`PanelCall.tenant`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeAlias

import msgspec
from litestar import Request, Response
from litestar.di import NamedDependency
from litestar.params import SkipValidation
from litestar.response import Template

from recordseal.panel.tenants import Tenant, TenantNotFound
from recordseal.web.panel.context import PanelContext, panel_context
from recordseal.web.panel.session import (
    PRIVATE_HEADERS,
    PanelDenied,
    PanelPrincipal,
    principal_in,
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


@dataclass(frozen=True)
class PanelCall:
    """The request, its verified principal and the panel's context."""

    request: Request[Any, Any, Any]
    principal: PanelPrincipal
    context: PanelContext

    @property
    def path(self) -> str:
        return self.request.url.path

    @property
    def wants_json(self) -> bool:
        """Content negotiation: JSON when the client prefers ``application/json``."""
        return wants_json(self.request)

    def render(
        self,
        template: str,
        data: dict[str, Any],
        status: int = 200,
        page: dict[str, Any] | None = None,
    ) -> Response[Any]:
        """``data`` as JSON or as the page ``template``; ``page`` holds what only the page
        shows (a refused form's message and values)."""
        if self.wants_json:
            body = {**msgspec.to_builtins(data), "session": _session_json(self.principal)}
            return Response(
                msgspec.json.encode(body),
                status_code=status,
                media_type="application/json",
                headers=PRIVATE_HEADERS,
            )
        return Template(
            template_name=template,
            context={**data, **(page or {}), "principal": self.principal},
            headers=PRIVATE_HEADERS,
            status_code=status,
        )

    def not_found(self, what: str) -> PanelDenied:
        """The 404 of a missing ``what`` (counted and logged apart from a 403)."""
        self.context.count("not_found")
        log.info(
            "panel.not_found",
            extra={"kind": what, "subject": self.principal.subject, "path": self.path},
        )
        return PanelDenied(404, f"{what}_not_found", f"no such {what}", principal=self.principal)

    async def tenant(self, tenant_id: str) -> Tenant:
        """The tenant (the ``tenant_scope`` guard ran first), or the 404 of a missing one."""
        try:
            return await self.context.tenants.get_tenant(tenant_id)
        except TenantNotFound:
            raise self.not_found("tenant") from None


def provide_call(request: Request[Any, Any, Any]) -> PanelCall:
    """Dependency ``call``: this request, the principal ``require_session`` verified and
    ``app.state.panel``."""
    return PanelCall(request, principal_in(request), panel_context(request))


# How handlers declare it: built from the guard's principal, so it skips validation.
Call: TypeAlias = NamedDependency[SkipValidation[PanelCall]]

"""Sign-out (docs/sso.md), ``SignOutController``: ``POST /logout`` and ``/logout/everywhere``.

Both pass the panel's session and CSRF guards (``web/panel/guards.py``), so both need the CSRF
token (form field ``csrf_token`` or header ``X-CSRF-Token``). ``/logout`` is open to every role
(``any_role``) and clears this browser's cookie; the token itself stays valid until its
``exp`` (cookies carry no id to revoke one by one). ``/logout/everywhere`` is for operators
only (``operators_only``) and raises the sign-out epoch of the caller's scope
(``panel/signout.py``): a legacy (passkey) operator-admin ends every session of every tenant;
a tenant-scoped (sso) operator ends the sessions of its own tenant only, leaving other
tenants' and legacy sessions valid. Either way this session ends too. Issuers stamp new
cookies with the current epoch.

Browsers get a 303 redirect to ``/login``; JSON clients get 200 with a small JSON body.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Response, post
from litestar.response import Redirect

from recordseal.panel.cookies import clear_cookie_header
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.guards import any_role, operators_only
from recordseal.web.panel.session import LOGIN_PATH, PRIVATE_HEADERS

log = logging.getLogger("recordseal.panel.web")


def _signed_out(call: PanelCall, body: dict[str, Any]) -> Response[Any]:
    headers = {**PRIVATE_HEADERS, "Set-Cookie": clear_cookie_header()}
    if call.wants_json:
        return Response(
            msgspec.json.encode(body),
            status_code=200,
            media_type="application/json",
            headers=headers,
        )
    return Redirect(LOGIN_PATH, status_code=303, headers=headers)


class SignOutController(DomainController):
    """Ending sessions: this browser's (every role), or every session of the caller's scope
    (operators)."""

    @post(
        "/logout",
        name="panel_logout",
        status_code=200,
        guards=[any_role],
    )
    async def logout(self, call: Call) -> Response[Any]:
        """Clears this browser's session cookie."""
        principal = call.principal
        log.info("panel.signout", extra={"subject": principal.subject, "kind": principal.kind})
        return _signed_out(call, {"signed_out": True})

    @post(
        "/logout/everywhere",
        name="panel_logout_everywhere",
        status_code=200,
        guards=[operators_only],
    )
    async def logout_everywhere(self, call: Call) -> Response[Any]:
        """Operators only: every session of the caller's scope issued before now ends (every
        tenant's for a legacy operator-admin, its own tenant's for a tenant-scoped operator)."""
        principal = call.principal
        tenant = principal.tenant_id
        epoch = await call.context.sign_out_everywhere(tenant)
        log.warning(
            "panel.signout_everywhere",
            extra={
                "subject": principal.subject,
                "kind": principal.kind,
                "scope": "all" if tenant is None else f"tenant:{tenant}",
                "new_epoch": epoch,
            },
        )
        body: dict[str, Any] = {"signed_out": True, "signout_epoch": epoch, "scope": "all"}
        if tenant is not None:
            body.update(scope="tenant", tenant=tenant)
        return _signed_out(call, body)

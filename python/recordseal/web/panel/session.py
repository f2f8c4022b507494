"""The panel's session, its principal and its refusals (docs/panel.md, "Sessions").

The checks themselves are Litestar guards (``web/panel/guards.py``): ``require_session`` on
every panel route but the sign-on ones reads the cookie ``COOKIE_NAME``, verifies it with the
keyring and against the sign-out epochs of its scopes in the panel's store
(``panel/signout.py``), and keeps the :class:`PanelPrincipal` on the connection; the CSRF,
role and tenant-scope guards refuse what the principal may not do. Handlers take the principal
as the ``panel_principal`` dependency (:func:`panel_principal`). A refusal is a
``PanelDenied``, which ``panel_denied_handler`` turns into:

- no, expired, tampered or signed-out cookie: an API client (``Accept: application/json``)
  gets 401 problem+json, code ``unauthenticated``; a browser gets a 303 redirect to
  ``/login`` (and the stale cookie is cleared);
- a mutating request (POST, PUT, PATCH, DELETE) without a valid CSRF token: 403,
  code ``csrf_invalid``;
- a mutating request by a viewer on a route for operators: 403, code ``forbidden_role``.

Roles: a tenant-scoped (sso) session carries its role; a legacy (passkey) session takes its
role from its passkeys in the panel's store, read on every request, viewer when it has none
(fail closed).

CSRF (synchronizer token bound to the session cookie)::

    csrf_token = b64u(HMAC-SHA-256(active cookie key,
                                   key_id || 0x00 || "recordseal-panel-csrf-v1" || 0x00 || cookie))

computed with ``CookieKeyring.sign_payload`` (only the MAC part is kept). The prefix keeps the
value apart from any cookie MAC: a CSRF token never is, nor reveals, a session signature, and
the input (no ``|``) never decodes as a session payload. Pages render it into every form as
the hidden field ``csrf_token``; JSON clients send it in the header ``X-CSRF-Token`` (the
JSON answer of ``GET /tenants`` carries it as ``session.csrf_token``). A mutating request
must present it (header first, else the urlencoded/multipart form field) and it is compared
with ``hmac.compare_digest``. A cross-site page can neither read the value nor set the
header. The token changes with the cookie; rotating the active cookie key invalidates forms
already rendered (reload the page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.params import SkipValidation
from litestar.response import Redirect, Template

from recordseal import metrics
from recordseal.panel.cookies import CookieKeyring, clear_cookie_header
from recordseal.panel.errors import PanelRefusal
from recordseal.panel.roles import can_mutate
from recordseal.panel.sessions import LegacySession, Role, Session
from recordseal.web.observe import note_problem
from recordseal.web.panel.context import PanelContext
from recordseal.web.problems import problem_answer

CSRF_CONTEXT = b"recordseal-panel-csrf-v1\x00"
LOGIN_PATH = "/login"

# Every panel answer is per-user: never cached, and its shape depends on Accept.
PRIVATE_HEADERS = {"Cache-Control": "no-store", "Vary": "Accept, Cookie"}


@dataclass(frozen=True)
class PanelPrincipal:
    """The signed-in user of one request. ``tenant_id`` is None for a legacy session."""

    kind: Literal["legacy", "sso"]
    subject: str
    role: Role
    tenant_id: str | None
    org_id: str | None
    csrf_token: str

    @property
    def is_operator(self) -> bool:
        return self.role == "operator"

    @property
    def is_operator_admin(self) -> bool:
        """An operator of a legacy (passkey) session: every tenant is its to manage."""
        return self.is_operator and self.kind == "legacy"


# How handlers declare the dependency: the session guard built the value, so it skips validation.
Principal: TypeAlias = NamedDependency[SkipValidation[PanelPrincipal]]


class PanelDenied(PanelRefusal):
    """A refused panel request; ``panel_denied_handler`` renders it for the client (its
    problem+json from ``web/problems.py``, a page or a redirect for a browser)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        principal: PanelPrincipal | None = None,
        clear_cookie: bool = False,
        field: str | None = None,
    ) -> None:
        super().__init__(status, code, detail, field)
        self.principal = principal
        self.clear_cookie = clear_cookie


def wants_json(request: Request[Any, Any, Any]) -> bool:
    """Content negotiation: JSON when the client prefers ``application/json``, else HTML."""
    choice = request.accept.best_match(
        ["text/html", "application/json", "application/problem+json"], default="text/html"
    )
    return choice != "text/html"


def csrf_token_for(keyring: CookieKeyring, cookie: str) -> str:
    """The CSRF token bound to the session cookie ``cookie`` (see the module docstring)."""
    signed = keyring.sign_payload(CSRF_CONTEXT + cookie.encode("ascii", "replace"))
    return signed.rsplit(".", 1)[1]


async def role_of(context: PanelContext, session: Session) -> Role:
    """A tenant-scoped session's own role; a legacy one's passkey role, read now."""
    if isinstance(session, LegacySession):
        passkey_role = await context.passkey_role(session.user_id)
        return "operator" if can_mutate(session, passkey_role) else "viewer"
    return "operator" if can_mutate(session) else "viewer"


async def principal_of(context: PanelContext, cookie: str, session: Session) -> PanelPrincipal:
    csrf = csrf_token_for(context.keyring, cookie)
    role = await role_of(context, session)
    if isinstance(session, LegacySession):
        return PanelPrincipal("legacy", session.user_id, role, None, None, csrf)
    return PanelPrincipal("sso", session.subject, role, session.tenant_id, session.org_id, csrf)


def panel_principal(request: Request[Any, Any, Any]) -> PanelPrincipal:
    """Dependency: the principal the ``require_session`` guard verified for this request."""
    return principal_in(request)


def principal_in(connection: ASGIConnection[Any, Any, Any, Any]) -> PanelPrincipal:
    """The connection's principal; a RuntimeError when no session guard ran (wiring)."""
    principal = connection.scope.get("user")
    if not isinstance(principal, PanelPrincipal):
        raise RuntimeError("no panel principal: the route lacks the require_session guard")
    return principal


def panel_denied_handler(request: Request[Any, Any, Any], error: PanelDenied) -> Response[Any]:
    """Exception handler: problem+json for API clients, a redirect or HTML page for browsers."""
    metrics.PANEL_DENIALS.labels(str(error.status), error.code).inc()
    note_problem(request.scope, error.code)
    response: Response[Any]
    if wants_json(request):
        response = problem_answer(error)
    elif error.status == 401:
        response = Redirect(LOGIN_PATH, status_code=303)
    else:
        response = error_page(error.status, error.code, error.detail, error.principal)
    for name, value in PRIVATE_HEADERS.items():
        response.headers[name] = value
    if error.clear_cookie:
        response.headers["Set-Cookie"] = clear_cookie_header()
    return response


TITLES = {403: "Forbidden", 404: "Not found"}


def error_page(status: int, code: str, detail: str, principal: PanelPrincipal | None) -> Template:
    return Template(
        template_name="panel/error.html",
        context={
            "title": TITLES.get(status, "Error"),
            "status": status,
            "code": code,
            "detail": detail,
            "principal": principal,
        },
        status_code=status,
    )

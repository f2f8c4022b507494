"""Single sign-on routes (docs/sso.md, "Flows"): ``SsoController``, outside the session guard.

- ``GET /sso?provider=<id>``: the login page's organization form; 303 to the start below.
- ``GET /sso/{provider_ref}/start?return_url=...``: unknown provider 404 (problem+json);
  SAML or OIDC 307 to the IdP (for the JWT-bearer flavour, to the panel's own callback through
  the identity-aware proxy); WebAuthn-via-provider: JSON ``{kind: "challenge", state_nonce,
  challenge}`` (base64). ``return_url`` must be a panel-local path, else ``/dashboard``.
- ``GET /sso/{provider_ref}/callback?code=...&state=...``: the nonce is ``state``; the query
  string (form-urlencoded, plus ``assertion=<token>`` when the request carries
  ``Authorization: Bearer <token>`` from a proxy) is base64-encoded into ``callback_data``.
  Success: the session cookie and 303 to the return URL.
- ``POST /sso/{provider_ref}/callback`` with JSON ``{state_nonce, callback_data}``
  (``callback_data`` base64). Success: the cookie and ``{"ok": true, "redirect": ...}``.

Start sets the cookie ``BINDING_COOKIE`` (a random value, kept when the browser already has a
well-formed one, so logins in several tabs work; 10 minutes, ``Secure``, ``HttpOnly``,
``SameSite=Lax``); both callback shapes hand its value to the completion path, which refuses
a callback from a browser without it (login CSRF, see ``recordseal.panel.sso.login``).

Start and both callback shapes count against the ``sso`` rate limit of the client's address
(their ``RateLimited`` guard, web/ratelimit.py; 429 problem+json with ``Retry-After`` past it).

Both shapes go through ``SsoLogins.complete`` (docs/sso.md, "Flows" seven steps). Failures answer
the
status of docs/sso.md with an empty body; a body that is not a JSON object with string members
answers 400 (``InvalidProtocol``) before any nonce is read. Sessions are tenant-scoped
(``<subject>|<tenant>|<org>|<exp>|r=<role>|g=<epoch>``) and last ``SESSION_LIFETIME``.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath
from litestar.response import Redirect as RedirectResponse

from recordseal.identifiers import IDENTIFIER
from recordseal.panel.cookies import set_cookie_header
from recordseal.panel.sessions import PayloadError, TenantSession
from recordseal.panel.sso.contract import Challenge
from recordseal.panel.sso.errors import Internal, InvalidProtocol, LoginError
from recordseal.panel.sso.login import SignedIn, SsoLogins, UnknownProvider
from recordseal.panel.sso.nonces import NONCE_LIFETIME, PendingLogins
from recordseal.panel.sso.provider_store import SecretBox
from recordseal.panel.sso.registry import ProviderRegistry
from recordseal.panel.sso.settings import SsoSettings
from recordseal.services.errors import ServiceError
from recordseal.storage.panel import PanelStore
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.controller import DomainController
from recordseal.web.panel.context import PanelContext, provide_panel
from recordseal.web.panel.session import PRIVATE_HEADERS
from recordseal.web.problems import problem_answer
from recordseal.web.ratelimit import RateLimited
from recordseal.web.state import typed_state

log = logging.getLogger("recordseal.panel.web")

SESSION_LIFETIME = 8 * 3600
BINDING_COOKIE = "__Host-recordseal-sso-binding"
_BINDING = re.compile(r"[A-Za-z0-9_-]{43}")


@dataclass
class SsoContext:
    """The registry and the login service of one process, kept on ``app.state.sso``."""

    registry: ProviderRegistry
    logins: SsoLogins


def build_sso_context(settings: SsoSettings, store: PanelStore, box: SecretBox) -> SsoContext:
    """The service's context: pending sign-ins and providers in the panel's store (client
    secrets sealed by ``box``), shared by every worker and host."""
    registry = ProviderRegistry(settings.outbound, store, box)
    pending = PendingLogins(store)
    return SsoContext(registry, SsoLogins(registry, pending, settings.operator_groups))


def provide_sso(state: State) -> SsoContext:
    """Dependency ``sso``: ``app.state.sso``; a RuntimeError names the missing wiring."""
    return typed_state(state, "sso", SsoContext)


class _PostedCallback(msgspec.Struct):
    state_nonce: str | None = None
    callback_data: str | None = None


def _binding_of(request: Request[Any, Any, Any]) -> str | None:
    value = request.cookies.get(BINDING_COOKIE)
    return value if value is not None and _BINDING.fullmatch(value) else None


def _binding_cookie(binding: str) -> str:
    """``__Host-`` requires Secure, Path=/ and no Domain; Lax is sent on the IdP's redirect."""
    return (
        f"{BINDING_COOKIE}={binding}; Max-Age={NONCE_LIFETIME}; Path=/; Secure; HttpOnly;"
        " SameSite=Lax"
    )


def _provider_not_found(error: UnknownProvider) -> Response[Any]:
    response = problem_answer(error)
    response.headers.update(PRIVATE_HEADERS)
    return response


def _empty(status: int) -> Response[Any]:
    return Response(b"", status_code=status, headers=PRIVATE_HEADERS, media_type="text/plain")


async def _session_cookie(
    panel: PanelContext, logins: SsoLogins, signed_in: SignedIn, provider_ref: str
) -> str | None:
    """Step 7's cookie; None (audited as Internal) when a provider answered a tenant or
    organization id the cookie cannot carry."""
    principal = signed_in.principal
    session = TenantSession(
        principal.subject_id,
        principal.tenant_id,
        principal.organization_id,
        int(panel.clock()) + SESSION_LIFETIME,
        signed_in.role,
        await panel.current_epoch(),
    )
    try:
        token = panel.keyring.issue(session)
    except PayloadError as exc:
        logins.refused(provider_ref, Internal(f"cookie refused: {exc}"))
        return None
    return set_cookie_header(token, SESSION_LIFETIME)


def _forwarded_token(request: Request[Any, Any, Any]) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _sign_in(
    request: Request[Any, Any, Any],
    panel: PanelContext,
    logins: SsoLogins,
    provider_ref: str,
    state_nonce: str | None,
    callback_data: str | None,
) -> tuple[SignedIn, dict[str, str]] | Response[Any]:
    """Both callback shapes end here: the completion path, then the session cookie; the
    signed-in login and the headers to answer with, or the (empty) refusal."""
    try:
        signed_in = await logins.complete(
            provider_ref, state_nonce, callback_data, _binding_of(request)
        )
    except LoginError as error:
        return _empty(error.status)
    cookie = await _session_cookie(panel, logins, signed_in, provider_ref)
    if cookie is None:
        return _empty(500)
    return signed_in, {**PRIVATE_HEADERS, "Set-Cookie": cookie}


class SsoController(DomainController):
    """Sign-on with an organization's identity provider; public (no session yet)."""

    include_in_schema = False

    dependencies = {  # noqa: RUF012
        "sso": Provide(provide_sso, sync_to_thread=False),
        "panel": Provide(provide_panel, sync_to_thread=False),
    }

    @get("/sso", name="panel_sso_entry")
    async def sso_entry(self, request: Request[Any, Any, Any]) -> Response[Any]:
        """The login page's form: ``?provider=<id>`` is sent on to ``/sso/<id>/start`` (303);
        a value that is not an identifier answers 404 like an unknown provider."""
        provider = request.query_params.get("provider", "").strip()
        if not IDENTIFIER.fullmatch(provider):
            return _provider_not_found(UnknownProvider(provider))
        target = f"/sso/{provider}/start"
        return_url = request.query_params.get("return_url")
        if return_url:
            target += "?" + urlencode({"return_url": return_url})
        return RedirectResponse(target, status_code=303, headers=PRIVATE_HEADERS)

    @get(
        "/sso/{provider_ref:str}/start",
        name="panel_sso_start",
        guards=[RateLimited("sso")],
    )
    async def sso_start(
        self,
        request: Request[Any, Any, Any],
        sso: NamedDependency[SsoContext],
        provider_ref: FromPath[str],
    ) -> Response[Any]:
        """Begin a login with the organization's provider."""
        return_url = request.query_params.get("return_url")
        binding = _binding_of(request) or secrets.token_urlsafe(32)
        try:
            started = await sso.logins.start(provider_ref, return_url, binding)
        except UnknownProvider as error:
            return _provider_not_found(error)
        except LoginError as error:
            return _empty(error.status)
        headers = {**PRIVATE_HEADERS, "Set-Cookie": _binding_cookie(binding)}
        if isinstance(started.result, Challenge):
            body = {
                "kind": "challenge",
                "state_nonce": started.nonce,
                "challenge": base64.b64encode(started.result.challenge).decode("ascii"),
            }
            return Response(
                msgspec.json.encode(body), media_type="application/json", headers=headers
            )
        return RedirectResponse(started.result.target, status_code=307, headers=headers)

    @get(
        "/sso/{provider_ref:str}/callback",
        name="panel_sso_callback",
        guards=[RateLimited("sso")],
    )
    async def sso_callback(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        sso: NamedDependency[SsoContext],
        provider_ref: FromPath[str],
    ) -> Response[Any]:
        """The IdP's redirect back (``code`` and ``state``, or ``error``)."""
        items = list(request.query_params.multi_items())
        token = _forwarded_token(request)
        if token is not None:
            items.append(("assertion", token))
        callback_data = base64.b64encode(urlencode(items).encode("utf-8")).decode("ascii")
        state = request.query_params.get("state")
        outcome = await _sign_in(request, panel, sso.logins, provider_ref, state, callback_data)
        if isinstance(outcome, Response):
            return outcome
        signed_in, headers = outcome
        return RedirectResponse(signed_in.return_url, status_code=303, headers=headers)

    @post(
        "/sso/{provider_ref:str}/callback",
        name="panel_sso_callback_post",
        status_code=200,
        guards=[RateLimited("sso")],
    )
    async def sso_callback_post(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        sso: NamedDependency[SsoContext],
        provider_ref: FromPath[str],
    ) -> Response[Any]:
        """A client's callback: JSON ``{state_nonce, callback_data}``, read like every JSON body
        (web/bodies.py: no repeated member, bounded nesting, strict types)."""
        logins = sso.logins
        try:
            if not is_json_media_type(request.content_type):
                raise InvalidProtocol("the body must be application/json")
            raw = await request.body()
            try:
                check_json_text(raw)
                posted = msgspec.json.decode(raw, type=_PostedCallback, strict=True)
            except (ServiceError, msgspec.MsgspecError):
                raise InvalidProtocol("the body is not a JSON object of strings") from None
        except InvalidProtocol as error:
            logins.refused(provider_ref, error)
            return _empty(error.status)
        outcome = await _sign_in(
            request, panel, logins, provider_ref, posted.state_nonce, posted.callback_data
        )
        if isinstance(outcome, Response):
            return outcome
        signed_in, headers = outcome
        return Response(
            msgspec.json.encode({"ok": True, "redirect": signed_in.return_url}),
            media_type="application/json",
            headers=headers,
        )

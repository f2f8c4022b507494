"""Passkey sign-in of the operator panel (docs/panel.md).

Routes (``PasskeyController``):

- ``GET /login``: the sign-in page; its script asks ``POST /login/authenticate/start`` for
  options, calls ``navigator.credentials.get`` and posts the answer to
  ``POST /login/authenticate/finish``.
- ``GET /login/register?token=...``: the one-time registration page of a link made by
  ``create_registration_link``; its script uses ``POST /login/register/start`` ``{token}``,
  ``navigator.credentials.create`` and ``POST /login/register/finish``. A malformed or
  unknown link answers 400, a used or expired one 410, each with a page saying so.

Both finish steps answer ``{"ok": true, "redirect": "/tenants"}`` with a legacy (2-field)
session cookie ``<user_id>|<exp>|g=<epoch>`` valid 8 hours; the session guard reads the
passkey's stored role from the panel's store on every request, in every worker and host.
Any failure of an authentication finish (unknown, used or expired state, unknown
credential, bad signature or origin) answers 401 with an empty body (docs/panel.md, "Views and
errors").

The ceremonies are py_webauthn's; user verification is required. Challenges are kept in the
panel's store (``PasskeyStore``) under a random state id, single use, 5 minutes, so a
ceremony started through one worker or host finishes through any other. The relying party id is
``RECORDSEAL_PANEL_RP_ID`` (default ``localhost``). The expected origin is derived from the
request (scheme and ``Host``) and accepted only if it is listed in
``RECORDSEAL_PANEL_ORIGINS`` (comma-separated), or, when that is unset, if its host is the
relying party id (any port; plain http only for ``localhost``).

Wiring: the ``PasskeyStore`` is the panel context's (``PanelContext.passkeys``, dependency
``panel``); the dependency ``passkey_config`` is the typed state's ``PasskeyConfig``, built
from the settings (``web/panel/passkey_config.py``). All POST routes here take JSON only (a
cross-site form cannot send it without a CORS preflight; another media type is 415), and the
browser's origin is checked again inside the signed client data. Every ceremony request counts
against the ``login`` rate limit of its address (the ``RateLimited`` guard, web/ratelimit.py;
429 problem+json with ``Retry-After`` past it). A refused step raises ``_Refused``; the
controller's exception handler logs the reason and answers its status with an empty body.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.response import Template
from litestar.types import ControllerRouterHandler
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import parse_authentication_credential_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from recordseal.panel.cookies import set_cookie_header
from recordseal.panel.errors import PanelError
from recordseal.panel.passkey_store import (
    CeremonyKind,
    LinkGone,
    LinkStatus,
    PendingCeremony,
    hash_token,
)
from recordseal.panel.sessions import LegacySession, Role
from recordseal.services.errors import ServiceError
from recordseal.web.bodies import check_json_text, is_json_media_type
from recordseal.web.controller import DomainController
from recordseal.web.panel.context import PanelContext, provide_panel
from recordseal.web.panel.passkey_config import (
    PasskeyConfig,
    create_registration_link,
    link_base_url,
    provide_passkey_config,
)
from recordseal.web.panel.session import PRIVATE_HEADERS
from recordseal.web.ratelimit import RateLimited

log = logging.getLogger("recordseal.panel.web")

SESSION_LIFETIME = 8 * 3600
AFTER_SIGN_IN = "/tenants"
RP_NAME = "recordseal operator panel"
CEREMONY_TIMEOUT_MS = 120_000

__all__ = [
    "PASSKEY_ROUTES",
    "PasskeyConfig",
    "PasskeyController",
    "create_registration_link",
    "link_base_url",
]


# -- plumbing --------------------------------------------------------------------------


class _Refused(PanelError):
    """A refused ceremony step: ``status`` is its answer (400, 401 or 415, with an empty body
    on purpose: a failed ceremony tells an attacker nothing), ``reason`` the rule it broke for
    the trace log only (the origin or the check that failed; never a secret or a credential's
    bytes)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class _StartRegistration(msgspec.Struct, forbid_unknown_fields=True):
    token: str


class _Finish(msgspec.Struct):
    state: str
    credential: dict[str, Any]


def _expected_origin(request: Request[Any, Any, Any], config: PasskeyConfig) -> str:
    """``scheme://host`` of this request, if configured; the Origin header must agree."""
    host = request.headers.get("host", "")
    origin = f"{request.url.scheme}://{host}"
    if not host or not config.accepts(origin):
        raise _Refused(400, f"origin {origin!r} is not configured for rp id {config.rp_id!r}")
    sent = request.headers.get("origin")
    if sent is not None and sent != origin:
        raise _Refused(400, f"Origin header {sent!r} differs from {origin!r}")
    return origin


def _require_json(request: Request[Any, Any, Any]) -> None:
    if not is_json_media_type(request.content_type):
        raise _Refused(415, "the body must be application/json")


async def _json_body(request: Request[Any, Any, Any], kind: type[Any]) -> Any:
    """The body as ``kind``: JSON only, read by the core's reader first (no repeated member,
    bounded nesting), then decoded strictly (web/bodies.py)."""
    _require_json(request)
    raw = await request.body()
    try:
        check_json_text(raw)
        return msgspec.json.decode(raw, type=kind, strict=True)
    except (ServiceError, msgspec.MsgspecError):
        raise _Refused(400, "malformed JSON body") from None


def _json(body: dict[str, Any], status: int = 200, cookie: str | None = None) -> Response[Any]:
    headers = dict(PRIVATE_HEADERS)
    if cookie is not None:
        headers["Set-Cookie"] = cookie
    return Response(
        msgspec.json.encode(body),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _empty(status: int) -> Response[Any]:
    return Response(b"", status_code=status, headers=PRIVATE_HEADERS)


def _options_json(options: Any) -> Any:
    return msgspec.json.decode(options_to_json(options))


async def _sign_in(context: PanelContext, user_id: str, role: Role) -> Response[Any]:
    exp = int(context.clock()) + SESSION_LIFETIME
    epoch = await context.current_epoch()
    token = context.keyring.issue(LegacySession(user_id, exp, epoch=epoch))
    log.info("panel.passkey_signin", extra={"subject": user_id, "role": role})
    return _json(
        {"ok": True, "redirect": AFTER_SIGN_IN},
        cookie=set_cookie_header(token, SESSION_LIFETIME),
    )


_LINK_PROBLEMS: dict[LinkStatus, tuple[int, str, str]] = {
    "unknown": (400, "Invalid registration link", "This registration link is not valid."),
    "used": (410, "Registration link used", "This registration link has already been used."),
    "expired": (410, "Registration link expired", "This registration link has expired."),
}


def _link_problem(status: LinkStatus) -> tuple[int, str, str]:
    return _LINK_PROBLEMS.get(status, _LINK_PROBLEMS["unknown"])


def _link_refusal(status: LinkStatus) -> Response[Any]:
    """The JSON answer of a ceremony step whose registration link is not (or no longer)
    valid: 400 or 410, naming the link's status."""
    code, _title, detail = _link_problem(status)
    return _json({"error": status, "detail": detail}, status=code)


def _refused_answer(_: Request[Any, Any, Any], refused: _Refused) -> Response[Any]:
    """The controller's answer to every refused ceremony step: logged with its reason,
    answered with its status and an empty body."""
    log.info("panel.passkey_refused", extra={"reason": refused.reason})
    return _empty(refused.status)


def _ceremony(path: str, name: str) -> post:
    """The route of a ceremony step: a POST counted against the ``login`` rate limit."""
    return post(path, name=name, guards=[RateLimited("login")])


async def _challenge_answered(
    request: Request[Any, Any, Any],
    context: PanelContext,
    config: PasskeyConfig,
    kind: CeremonyKind,
) -> tuple[str, _Finish, PendingCeremony]:
    """The first steps of a finish: the expected origin, the answer, and the challenge it
    answers, taken from the store (single use); 401 for an unknown, used or expired state."""
    origin = _expected_origin(request, config)
    body: _Finish = await _json_body(request, _Finish)
    pending = await context.passkeys.take_challenge(body.state, kind)
    if pending is None:
        raise _Refused(401, "unknown, used or expired state")
    return origin, body, pending


# -- routes ----------------------------------------------------------------------------


class PasskeyController(DomainController):
    """Passkey sign-in and one-time registration; public (no session yet), every ceremony
    request rate-limited (``login``)."""

    include_in_schema = False

    dependencies = {  # noqa: RUF012
        "panel": Provide(provide_panel, sync_to_thread=False),
        "passkey_config": Provide(provide_passkey_config, sync_to_thread=False),
    }
    exception_handlers = {_Refused: _refused_answer}  # noqa: RUF012

    @get("/login", name="panel_login")
    async def login_page(
        self,
        panel: NamedDependency[PanelContext],
        passkey_config: NamedDependency[PasskeyConfig],
    ) -> Template:
        """The sign-in page; while no passkey is registered, it says how the first operator
        gets a registration link (the command, with this install's data directory)."""
        first = None if await panel.store.has_passkeys() else passkey_config.link_command
        return Template(
            template_name="panel/login.html",
            context={"first_link_command": first},
            headers=PRIVATE_HEADERS,
        )

    @_ceremony("/login/authenticate/start", "panel_passkey_auth_start")
    async def authenticate_start(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        passkey_config: NamedDependency[PasskeyConfig],
    ) -> Response[Any]:
        """Options for ``navigator.credentials.get`` (discoverable credentials, UV required)."""
        _expected_origin(request, passkey_config)
        _require_json(request)
        options = generate_authentication_options(
            rp_id=passkey_config.rp_id,
            timeout=CEREMONY_TIMEOUT_MS,
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        state = await panel.passkeys.put_challenge("authenticate", options.challenge)
        return _json({"state": state, "options": _options_json(options)})

    @_ceremony("/login/authenticate/finish", "panel_passkey_auth_finish")
    async def authenticate_finish(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        passkey_config: NamedDependency[PasskeyConfig],
    ) -> Response[Any]:
        """Verifies the assertion; 401 with an empty body for every failure."""
        store = panel.passkeys
        origin, body, pending = await _challenge_answered(
            request, panel, passkey_config, "authenticate"
        )
        try:
            parsed = parse_authentication_credential_json(body.credential)
        except (WebAuthnException, ValueError, TypeError, KeyError):
            raise _Refused(401, "malformed credential") from None
        credential = await store.credential(parsed.raw_id)
        if credential is None:
            raise _Refused(401, "unknown credential")
        try:
            verified = verify_authentication_response(
                credential=parsed,
                expected_challenge=pending.challenge,
                expected_rp_id=passkey_config.rp_id,
                expected_origin=origin,
                credential_public_key=credential.public_key,
                credential_current_sign_count=credential.sign_count,
                require_user_verification=True,
            )
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            raise _Refused(401, f"assertion rejected: {exc}") from None
        user_handle = parsed.response.user_handle
        if user_handle is not None and user_handle != credential.user_id.encode("utf-8"):
            raise _Refused(401, "user handle does not match the credential")
        await store.update_sign_count(credential.credential_id, verified.new_sign_count)
        return await _sign_in(panel, credential.user_id, credential.role)

    @get("/login/register", name="panel_register")
    async def register_page(
        self, request: Request[Any, Any, Any], panel: NamedDependency[PanelContext]
    ) -> Template:
        """The one-time registration page; 400 or 410 with an explanation for a bad link."""
        token = request.query_params.get("token", "")
        status, _role = await panel.passkeys.link_status(token) if token else ("unknown", None)
        if status != "valid":
            code, title, detail = _link_problem(status)
            return Template(
                template_name="panel/login_error.html",
                context={"title": title, "detail": detail, "status": code},
                status_code=code,
                headers=PRIVATE_HEADERS,
            )
        return Template(
            template_name="panel/register.html",
            context={"token": token},
            headers=PRIVATE_HEADERS,
        )

    @_ceremony("/login/register/start", "panel_passkey_register_start")
    async def register_start(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        passkey_config: NamedDependency[PasskeyConfig],
    ) -> Response[Any]:
        """Options for ``navigator.credentials.create`` for a new user of a valid link."""
        store = panel.passkeys
        _expected_origin(request, passkey_config)
        body: _StartRegistration = await _json_body(request, _StartRegistration)
        status, role = await store.link_status(body.token)
        if status != "valid" or role is None:
            return _link_refusal(status)
        user_id = f"{role}-{secrets.token_hex(6)}"
        options = generate_registration_options(
            rp_id=passkey_config.rp_id,
            rp_name=RP_NAME,
            user_name=user_id,
            user_id=user_id.encode("utf-8"),
            user_display_name=f"recordseal {role} ({user_id})",
            timeout=CEREMONY_TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
        )
        state = await store.put_challenge(
            "register", options.challenge, user_id=user_id, token_hash=hash_token(body.token)
        )
        return _json({"state": state, "options": _options_json(options)})

    @_ceremony("/login/register/finish", "panel_passkey_register_finish")
    async def register_finish(
        self,
        request: Request[Any, Any, Any],
        panel: NamedDependency[PanelContext],
        passkey_config: NamedDependency[PasskeyConfig],
    ) -> Response[Any]:
        """Verifies the attestation, consumes the link, stores the passkey and signs in."""
        origin, body, pending = await _challenge_answered(
            request, panel, passkey_config, "register"
        )
        if pending.user_id is None or pending.token_hash is None:
            raise _Refused(401, "unknown, used or expired state")
        try:
            verified = verify_registration_response(
                credential=msgspec.json.encode(body.credential).decode("utf-8"),
                expected_challenge=pending.challenge,
                expected_rp_id=passkey_config.rp_id,
                expected_origin=origin,
                require_user_verification=True,
            )
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            raise _Refused(401, f"attestation rejected: {exc}") from None
        try:
            role = await panel.passkeys.register_with_link(
                pending.token_hash,
                pending.user_id,
                verified.credential_id,
                verified.credential_public_key,
                verified.sign_count,
            )
        except LinkGone as gone:
            return _link_refusal(gone.status)
        log.info("panel.passkey_registered", extra={"subject": pending.user_id, "role": role})
        return await _sign_in(panel, pending.user_id, role)


PASSKEY_ROUTES: list[ControllerRouterHandler] = [PasskeyController]

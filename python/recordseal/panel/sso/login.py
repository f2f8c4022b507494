"""Sign-on attempts: start, and the one completion path of both callback shapes (docs/sso.md,
"Flows").

``SsoLogins.start`` resolves the provider (``UnknownProvider`` -> 404), guards the return URL,
asks the provider to begin, and stores a single-use nonce with the provider reference, the
return URL and the provider's stash. ``SsoLogins.complete`` runs, in this order:

1. read the nonce (missing: ``InvalidNonce``);
2. consume it from the pending map, whatever happens next (unknown, used or expired:
   ``InvalidNonce``);
3. check the callback's provider reference equals the one stored at start, and that the
   callback comes from the browser that called start (its binding value, below); else
   ``InvalidNonce``;
4. re-resolve the provider, which may have been removed since start (``InvalidCallback``);
5. base64-decode ``callback_data`` (RFC 4648 standard alphabet, padding required;
   otherwise ``InvalidProtocol``);
6. complete login with the provider;
7. map the principal's groups to a role (operator when a group is an operator group, else
   viewer) and answer what the web layer needs to issue the tenant-scoped cookie.

Browser binding (decision, beyond docs/sso.md, "Flows"; RFC 6749 section 10.12, OAuth 2.0 Security
BCP
section 4.7): ``start`` receives a random binding value that the web layer keeps in a cookie
of the starting browser, and the pending map keeps its hash beside the nonce. A callback must
present the same value. Without it, someone could start a login, sign in at the IdP as
themselves, and send the callback URL (code and state) to a victim, whose browser would then
be signed into the panel as that someone (login CSRF). The check belongs to step 3 (the nonce
must belong to this callback) and runs after the nonce is consumed, so a foreign callback
burns the nonce.

Every failure is audited on ``recordseal.panel.audit`` with the provider reference, the error
kind and the HTTP status, never the reason; the reason goes only to the trace log
(``recordseal.panel.sso.trace``, DEBUG). ``Internal`` failures are audited at ERROR with
``escalate=yes``. Successes are audited with subject, tenant, organization and role.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from recordseal.panel.errors import PanelError
from recordseal.panel.roles import role_for
from recordseal.panel.sessions import PayloadError, Role, check_subject
from recordseal.panel.sso.contract import BeginResult, Principal, PrincipalError
from recordseal.panel.sso.errors import (
    Internal,
    InvalidCallback,
    InvalidNonce,
    InvalidProtocol,
    LoginError,
)
from recordseal.panel.sso.nonces import PendingLogins, binding_hash
from recordseal.panel.sso.registry import ProviderRegistry

audit = logging.getLogger("recordseal.panel.audit")
trace = logging.getLogger("recordseal.panel.sso.trace")

DEFAULT_RETURN_URL = "/dashboard"
RETURN_URL_MAX_CHARS = 2048


class UnknownProvider(PanelError):
    """No provider is registered under ``provider`` (docs/sso.md: 404)."""

    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.provider = provider


def safe_return_url(value: str | None) -> str:
    """``value`` if it is a panel-local path, else ``/dashboard`` (docs/sso.md, "Flows").

    Local means: starts with one ``/`` (not ``//``), no scheme or host, no backslash, no
    whitespace or control character (browsers drop or reinterpret those), at most 2048
    characters.
    """
    if not value or len(value) > RETURN_URL_MAX_CHARS:
        return DEFAULT_RETURN_URL
    if not value.startswith("/") or value.startswith("//"):
        return DEFAULT_RETURN_URL
    if "\\" in value or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in value):
        return DEFAULT_RETURN_URL
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return DEFAULT_RETURN_URL
    return value


@dataclass(frozen=True)
class Started:
    nonce: str
    result: BeginResult
    return_url: str


@dataclass(frozen=True)
class SignedIn:
    principal: Principal
    role: Role
    return_url: str


def decode_callback_data(value: str | None) -> bytes:
    if value is None:
        raise InvalidProtocol("callback_data is missing")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise InvalidProtocol("callback_data is not base64") from None


class SsoLogins:
    """Start and complete sso logins against the registry and the pending map."""

    def __init__(
        self,
        registry: ProviderRegistry,
        pending: PendingLogins,
        operator_groups: Collection[str],
    ) -> None:
        self.registry = registry
        self.pending = pending
        self.operator_groups = frozenset(operator_groups)

    async def start(self, provider_ref: str, return_url: str | None, binding: str) -> Started:
        """Begin a login for the browser whose binding value is ``binding``; a fault of the
        panel (the provider store or the pending map failing, a provider raising) is an
        audited ``Internal``."""
        try:
            return await self._start(provider_ref, return_url, binding)
        except (UnknownProvider, LoginError) as error:
            if isinstance(error, LoginError):
                self.refused(provider_ref, error)
            raise
        # Outermost boundary of a sign-in's start (docs/sso.md): any other fault (a provider,
        # the store) is an audited Internal, never an unexplained 500.
        except Exception as exc:
            internal = Internal(f"start raised {type(exc).__name__}")
            self.refused(provider_ref, internal)
            raise internal from None

    async def _start(self, provider_ref: str, return_url: str | None, binding: str) -> Started:
        provider = await self.registry.resolve(provider_ref)
        if provider is None:
            audit.info(
                "sso.start_refused",
                extra={"error": "unknown_provider", "provider": provider_ref, "status": 404},
            )
            raise UnknownProvider(provider_ref)
        target = safe_return_url(return_url)
        nonce = self.pending.new_nonce()
        result = await provider.begin_login(target, nonce)
        await self.pending.put(nonce, provider_ref, target, result.stash, binding)
        return Started(nonce, result, target)

    async def complete(
        self,
        provider_ref: str,
        state_nonce: str | None,
        callback_data: str | None,
        binding: str | None,
    ) -> SignedIn:
        """The one completion path of both callback shapes; ``binding`` is the calling
        browser's binding value (None: it presented none)."""
        try:
            return await self._complete(provider_ref, state_nonce, callback_data, binding)
        except LoginError as error:
            self.refused(provider_ref, error)
            raise
        # Outermost boundary of a sign-in's completion (docs/sso.md), as in ``start``.
        except Exception as exc:
            internal = Internal(f"completion raised {type(exc).__name__}")
            self.refused(provider_ref, internal)
            raise internal from None

    async def _complete(
        self,
        provider_ref: str,
        state_nonce: str | None,
        callback_data: str | None,
        binding: str | None,
    ) -> SignedIn:
        if not state_nonce:
            raise InvalidNonce("the callback carries no nonce")
        status, pending = await self.pending.take(state_nonce)
        if pending is None:
            raise InvalidNonce(f"the nonce is {status} (never issued, used, or expired)")
        if pending.provider_ref != provider_ref:
            raise InvalidNonce(
                f"the nonce was issued for provider {pending.provider_ref!r},"
                f" the callback is for {provider_ref!r}"
            )
        if (
            pending.binding is None
            or binding is None
            or not hmac.compare_digest(pending.binding, binding_hash(binding))
        ):
            raise InvalidNonce(
                "the callback comes from another browser than the one that started the login"
            )
        provider = await self.registry.resolve(provider_ref)
        if provider is None:
            raise InvalidCallback("the provider was removed after the login started")
        data = decode_callback_data(callback_data)
        principal = await provider.complete_login(data, state_nonce, pending.stash)
        if (principal.tenant_id, principal.organization_id) != (
            provider.tenant_id,
            provider.organization_id,
        ):
            raise Internal("the provider answered a principal of another organization")
        try:
            check_subject("subject_id", principal.subject_id)
        except (PayloadError, PrincipalError) as exc:
            raise InvalidCallback(f"subject refused: {exc}") from None
        role = role_for(principal.groups, self.operator_groups)
        audit.info(
            "sso.login",
            extra={
                "provider": provider_ref,
                "tenant": principal.tenant_id,
                "org": principal.organization_id,
                "subject": principal.subject_id,
                "role": role,
            },
        )
        return SignedIn(principal, role, pending.return_url)

    def refused(self, provider_ref: str, error: LoginError) -> None:
        """Audit a refusal (the reason only to the trace log)."""
        if isinstance(error, Internal):
            audit.error(
                "sso.login_refused",
                extra={
                    "provider": provider_ref,
                    "error": error.kind,
                    "status": error.status,
                    "escalate": "yes",
                },
            )
        else:
            audit.warning(
                "sso.login_refused",
                extra={"provider": provider_ref, "error": error.kind, "status": error.status},
            )
        trace.debug(
            "sso.login_refused",
            extra={"provider": provider_ref, "error": error.kind, "reason": error.reason},
        )

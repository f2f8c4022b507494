"""OIDC (docs/sso.md): what both flavours share (:class:`OidcProvider`, the callback's
parameters), and the code exchange flavour, where the panel is the OpenID Connect client
(the JWT-bearer flavour is ``jwt_bearer.py``).

- ``begin_login`` redirects to the authorization endpoint with ``response_type=code``,
  ``state`` and ``nonce`` set to the panel's state nonce, and PKCE S256 with a fresh verifier
  for every attempt (always on; nothing turns it off). The verifier is the ``stash``.
- ``complete_login`` reads the callback (``code`` and ``state``, or ``error``), refuses an
  echoed state that differs from the nonce (``InvalidNonce``), exchanges the code at the token
  endpoint with the verifier and the client's credentials, validates the ID token
  (``idtoken.verify_id_token``, nonce included) and maps its claims to a principal.

Client authentication at the token endpoint: ``client_secret_basic`` (default) sends
``Authorization: Basic base64(form(client_id) ":" form(client_secret))`` where ``form`` is
``application/x-www-form-urlencoded`` encoding, as RFC 6749 section 2.3.1 requires (authlib's
built-in encoder leaves the values raw, so a secret with ``:`` or ``+`` would break; the
encoder here is registered with authlib's ``ClientAuth`` instead). ``client_secret_post``
sends both in the form body. Protocol messages are built with authlib
(``prepare_grant_uri``, ``prepare_token_request``, RFC 7636 S256); every request goes through
the outbound guard. The IdP's error text (``error_description``) is never logged or echoed.
"""

from __future__ import annotations

import base64
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar
from urllib.parse import parse_qsl, quote_plus

import msgspec
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from recordseal.panel.sso.claims import principal_from
from recordseal.panel.sso.contract import Principal, ProtocolName, Redirect
from recordseal.panel.sso.errors import Internal, InvalidCallback, InvalidNonce, Network
from recordseal.panel.sso.idtoken import KeyCache, verify_id_token
from recordseal.panel.sso.outbound import OutboundError, OutboundPolicy, fetch

AuthMethod: TypeAlias = Literal["client_secret_basic", "client_secret_post"]
AUTH_METHODS: tuple[AuthMethod, ...] = ("client_secret_basic", "client_secret_post")
SCOPE = "openid email profile"
_ERROR_CODE = re.compile(r"[a-z_]{1,64}")


class OidcCodeConfig(
    msgspec.Struct, frozen=True, tag="oidc-code", tag_field="kind", forbid_unknown_fields=True
):
    """A registered code-exchange provider: the form's fields plus what discovery found."""

    id: str
    tenant_id: str
    organization_id: str
    issuer: str
    client_id: str
    client_secret: str
    redirect_uri: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algorithms: list[str]
    token_endpoint_auth_method: AuthMethod = "client_secret_basic"
    groups_claim: str | None = None
    jwks: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return (
            f"OidcCodeConfig(id={self.id!r}, issuer={self.issuer!r},"
            f" client_id={self.client_id!r}, client_secret=<hidden>)"
        )


def client_secret_basic_form(
    auth: Any, method: str, uri: str, headers: dict[str, str], body: str
) -> tuple[str, dict[str, str], str]:
    """RFC 6749 2.3.1: form-urlencode client id and secret, then base64 ``id:secret``."""
    pair = f"{quote_plus(auth.client_id, safe='')}:{quote_plus(auth.client_secret, safe='')}"
    headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return uri, headers, body


def new_code_verifier() -> str:
    """A fresh PKCE verifier: 86 characters of base64url (RFC 7636 allows 43 to 128)."""
    return secrets.token_urlsafe(64)


def idp_error_code(value: str | None) -> str:
    """The IdP's ``error`` for the trace log if it is a plain error code, else ``unlisted``."""
    return value if value and _ERROR_CODE.fullmatch(value) else "unlisted"


def parse_callback(callback_data: bytes) -> dict[str, str]:
    """The form-urlencoded callback parameters; a repeated parameter is refused."""
    try:
        text = callback_data.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text))
    except (UnicodeDecodeError, ValueError):
        raise InvalidCallback("the callback data is not form-urlencoded UTF-8") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            raise InvalidCallback(f"the callback repeats the parameter {name!r}")
        params[name] = value
    return params


class IssuerConfig(Protocol):
    """What a registered OIDC provider's config holds, in either flavour: its ids, its
    issuer and the issuer's keys."""

    @property
    def id(self) -> str: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def organization_id(self) -> str: ...
    @property
    def issuer(self) -> str: ...
    @property
    def jwks_uri(self) -> str: ...
    @property
    def algorithms(self) -> list[str]: ...
    @property
    def jwks(self) -> dict[str, Any] | None: ...


ConfigT = TypeVar("ConfigT", bound=IssuerConfig)


class OidcProvider(Generic[ConfigT]):
    """One organization's OIDC provider, either flavour: its registered config, the issuer's
    key set (``KeyCache``), and the principal of an ID token that passes every check."""

    protocol: ProtocolName = "oidc"

    def __init__(
        self,
        config: ConfigT,
        policy: OutboundPolicy,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.id = config.id
        self.tenant_id = config.tenant_id
        self.organization_id = config.organization_id
        self.policy = policy
        self.clock = clock
        self.keys = KeyCache(policy, config.jwks_uri, config.jwks, clock)

    async def principal_of(
        self, id_token: str, *, audience: str, nonce: str | None, groups_claim: str | None
    ) -> Principal:
        """The principal of a valid ID token of the issuer (``idtoken.verify_id_token``);
        InvalidCallback naming the failed check otherwise."""
        claims = await verify_id_token(
            id_token,
            self.keys,
            algorithms=self.config.algorithms,
            issuer=self.config.issuer,
            audience=audience,
            nonce=nonce,
            now=self.clock(),
        )
        return principal_from(claims, self.tenant_id, self.organization_id, groups_claim)


class OidcCodeProvider(OidcProvider[OidcCodeConfig]):
    """One organization's OIDC provider in the code-exchange flavour."""

    def __repr__(self) -> str:
        return f"OidcCodeProvider({self.config!r})"

    async def begin_login(self, return_url: str, state_nonce: str) -> Redirect:
        verifier = new_code_verifier()
        target = prepare_grant_uri(
            self.config.authorization_endpoint,
            self.config.client_id,
            "code",
            redirect_uri=self.config.redirect_uri,
            scope=SCOPE,
            state=state_nonce,
            nonce=state_nonce,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        return Redirect(str(target), stash=verifier)

    async def complete_login(
        self, callback_data: bytes, state_nonce: str, stash: str | None
    ) -> Principal:
        params = parse_callback(callback_data)
        if "error" in params:
            raise InvalidCallback(f"the IdP answered error={idp_error_code(params['error'])}")
        if not secrets.compare_digest(
            params.get("state", "").encode("utf-8"), state_nonce.encode("utf-8")
        ):
            raise InvalidNonce("the state echoed by the IdP differs from the nonce")
        code = params.get("code")
        if not code:
            raise InvalidCallback("the callback has no code")
        if not stash:
            raise Internal("no PKCE verifier was stored with the nonce")
        id_token = await self._exchange(code, stash)
        return await self.principal_of(
            id_token,
            audience=self.config.client_id,
            nonce=state_nonce,
            groups_claim=self.config.groups_claim,
        )

    async def _exchange(self, code: str, verifier: str) -> str:
        config = self.config
        body = prepare_token_request(
            "authorization_code",
            code=code,
            redirect_uri=config.redirect_uri,
            code_verifier=verifier,
        )
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        method: Any = (
            client_secret_basic_form
            if config.token_endpoint_auth_method == "client_secret_basic"
            else "client_secret_post"
        )
        auth = ClientAuth(config.client_id, config.client_secret, method)
        _, headers, body = auth.prepare("POST", config.token_endpoint, headers, body)
        try:
            response = await fetch(
                self.policy,
                "POST",
                config.token_endpoint,
                headers=headers,
                content=str(body).encode("utf-8"),
            )
        except OutboundError as exc:
            raise Network(f"token endpoint: {exc.reason}") from None
        answer = _json_object(response.body)
        if response.status in (400, 401):
            error = answer.get("error") if answer else None
            raise InvalidCallback(
                f"the token endpoint refused the grant (HTTP {response.status},"
                f" error={idp_error_code(error if isinstance(error, str) else None)})"
            )
        if response.status != 200:
            raise Network(f"the token endpoint answered HTTP {response.status}")
        id_token = answer.get("id_token") if answer else None
        if not isinstance(id_token, str):
            raise InvalidCallback("the token response has no id_token")
        return id_token


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, dict) else None

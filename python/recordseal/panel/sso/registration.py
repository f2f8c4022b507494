"""Provider registration through the panel's form (docs/sso.md).

``register_provider`` checks the submitted fields, runs OIDC Discovery against the issuer and
loads its key set (so a wrong issuer fails here, not at first login), then adds the provider
to the registry. Field rules:

- ``id``: the panel identifier rule; when the organization already names an
  ``sso_provider_ref``, the id must equal it; an id another organization declares as its
  ``sso_provider_ref`` (``reserved``) is refused;
- ``issuer``: an absolute ``https`` URL (``http`` only where the outbound guard allows it)
  without query or fragment; the discovery document must name exactly this issuer;
- JWT bearer: ``audience`` (1 to 512 characters);
- code exchange: ``client_id`` and ``client_secret`` (1 to 512 characters), ``redirect_uri``
  (absolute ``http(s)`` URL whose path is ``/sso/<id>/callback``), the token-endpoint auth
  method (``client_secret_basic`` by default, or ``client_secret_post``; refused when the
  discovery document does not offer it — a document that lists no methods offers only
  ``client_secret_basic``), an optional groups claim name (at most 128
  characters); discovery must give an authorization and a token endpoint, and if it lists
  PKCE methods, S256 must be among them.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal, TypeAlias
from urllib.parse import urlsplit

import msgspec

from recordseal.panel.sso.contract import SsoProvider
from recordseal.panel.sso.discovery import discover, fetch_key_set
from recordseal.panel.sso.errors import DuplicateProvider, RegistrationError
from recordseal.panel.sso.jwt_bearer import JwtBearerConfig
from recordseal.panel.sso.oidc import AUTH_METHODS, AuthMethod, OidcCodeConfig
from recordseal.panel.sso.provider_store import ProviderConfig
from recordseal.panel.sso.registry import ProviderRegistry, check_provider_id
from recordseal.panel.tenants import Organization

Flavour: TypeAlias = Literal["code-exchange", "jwt-bearer"]
FLAVOURS: tuple[Flavour, ...] = ("code-exchange", "jwt-bearer")
MAX_VALUE = 512
MAX_CLAIM_NAME = 128


class RegistrationForm(msgspec.Struct, frozen=True):
    """The form's fields; blank strings mean "not given"."""

    flavour: str
    id: str
    issuer: str
    audience: str = ""
    client_id: str = ""
    client_secret: str = msgspec.field(default="")
    redirect_uri: str = ""
    token_endpoint_auth_method: str = "client_secret_basic"
    groups_claim: str = ""

    def __repr__(self) -> str:
        return f"RegistrationForm(flavour={self.flavour!r}, id={self.id!r}, issuer={self.issuer!r})"


def _text(field: str, value: str, limit: int = MAX_VALUE, *, required: bool = True) -> str:
    value = value.strip()
    if required and not value:
        raise RegistrationError(field, "is required")
    if len(value) > limit:
        raise RegistrationError(field, f"is {len(value)} characters; the limit is {limit}")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise RegistrationError(field, "contains a control character")
    return value


def _url(field: str, value: str) -> str:
    value = _text(field, value, 2048)
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RegistrationError(field, "must be an absolute https URL")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise RegistrationError(field, "must have no query, fragment or credentials")
    return value


def _flavour(value: str) -> Flavour:
    for flavour in FLAVOURS:
        if value == flavour:
            return flavour
    raise RegistrationError("flavour", f"must be one of {', '.join(FLAVOURS)}")


def _auth_method(value: str) -> AuthMethod:
    for method in AUTH_METHODS:
        if (value.strip() or "client_secret_basic") == method:
            return method
    raise RegistrationError(
        "token_endpoint_auth_method", f"must be one of {', '.join(AUTH_METHODS)}"
    )


async def register_provider(
    registry: ProviderRegistry,
    organization: Organization,
    form: RegistrationForm,
    *,
    reserved: Collection[str] = (),
) -> SsoProvider:
    """Check ``form``, run discovery, load the key set, register; RegistrationError,
    DuplicateProvider or DiscoveryError (``network`` set when the IdP was unreachable)."""
    flavour = _flavour(form.flavour)
    provider_id = check_provider_id(form.id.strip())
    declared = organization.sso_provider_ref
    if declared and declared != provider_id:
        raise RegistrationError(
            "id", f"organization {organization.id!r} declares the provider {declared!r}"
        )
    if provider_id in reserved:
        raise RegistrationError("id", "is the sign-on reference of another organization")
    if await registry.resolve(provider_id) is not None:
        raise DuplicateProvider(provider_id)
    issuer = _url("issuer", form.issuer)
    config: ProviderConfig
    if flavour == "jwt-bearer":
        audience = _text("audience", form.audience)
        metadata = await discover(registry.policy, issuer)
        jwks = await fetch_key_set(registry.policy, metadata.jwks_uri)
        config = JwtBearerConfig(
            id=provider_id,
            tenant_id=organization.tenant_id,
            organization_id=organization.id,
            issuer=issuer,
            audience=audience,
            jwks_uri=metadata.jwks_uri,
            algorithms=list(metadata.pinned_algorithms()),
            jwks=jwks,
        )
    else:
        client_id = _text("client_id", form.client_id)
        client_secret = _text("client_secret", form.client_secret)
        redirect_uri = _url("redirect_uri", form.redirect_uri)
        if urlsplit(redirect_uri).path != f"/sso/{provider_id}/callback":
            raise RegistrationError("redirect_uri", f"its path must be /sso/{provider_id}/callback")
        method = _auth_method(form.token_endpoint_auth_method)
        groups_claim = _text("groups_claim", form.groups_claim, MAX_CLAIM_NAME, required=False)
        metadata = await discover(registry.policy, issuer)
        if not metadata.authorization_endpoint or not metadata.token_endpoint:
            raise RegistrationError(
                "issuer", "the discovery document lacks an authorization or token endpoint"
            )
        # OIDC Discovery 1.0 section 3: when the member is omitted, the default is
        # client_secret_basic alone.
        offered = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
        if method not in offered:
            raise RegistrationError(
                "token_endpoint_auth_method", f"the provider does not offer {method}"
            )
        pkce = metadata.code_challenge_methods_supported
        if pkce and "S256" not in pkce:
            raise RegistrationError("issuer", "the provider does not offer PKCE with S256")
        jwks = await fetch_key_set(registry.policy, metadata.jwks_uri)
        config = OidcCodeConfig(
            id=provider_id,
            tenant_id=organization.tenant_id,
            organization_id=organization.id,
            issuer=issuer,
            client_id=client_id,
            client_secret=client_secret,
            redirect_uri=redirect_uri,
            authorization_endpoint=metadata.authorization_endpoint,
            token_endpoint=metadata.token_endpoint,
            jwks_uri=metadata.jwks_uri,
            algorithms=list(metadata.pinned_algorithms()),
            token_endpoint_auth_method=method,
            groups_claim=groups_claim or None,
            jwks=jwks,
        )
    return await registry.register_config(config)

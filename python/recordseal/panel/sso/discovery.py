"""OpenID Connect Discovery 1.0 and the provider's key set, fetched through the outbound guard.

``discover(issuer)`` reads ``<issuer>/.well-known/openid-configuration`` and requires its
``issuer`` member to equal the configured issuer exactly (Discovery section 4.3), so a wrong
issuer fails at registration. The endpoints it names must be absolute URLs without fragment or
credentials, ``https`` unless the issuer itself is plain ``http`` (a test IdP the outbound
guard allows): the authorization endpoint is where browsers are sent, never fetched by the
panel, so the guard alone would not keep a ``javascript:`` or ``http`` URL out of it.
``fetch_key_set`` reads the JWKS at ``jwks_uri``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import msgspec
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from recordseal.panel.errors import PanelError
from recordseal.panel.sso.outbound import OutboundError, OutboundPolicy, fetch

WELL_KNOWN = "/.well-known/openid-configuration"

#: Signature algorithms the panel accepts at all; a provider is pinned to those of them its
#: discovery document lists (never ``none``, never a shared-secret HS* algorithm).
SUPPORTED_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")


class DiscoveryError(PanelError):
    """Discovery or the key set failed; ``reason`` is safe to show to the operator."""

    def __init__(self, reason: str, *, network: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.network = network


class ProviderMetadata(msgspec.Struct, frozen=True):
    """The members of a discovery document the panel uses."""

    issuer: str
    jwks_uri: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    id_token_signing_alg_values_supported: list[str] = msgspec.field(default_factory=list)
    token_endpoint_auth_methods_supported: list[str] = msgspec.field(default_factory=list)
    code_challenge_methods_supported: list[str] = msgspec.field(default_factory=list)

    def pinned_algorithms(self) -> tuple[str, ...]:
        offered = self.id_token_signing_alg_values_supported or ["RS256"]
        return tuple(alg for alg in SUPPORTED_ALGORITHMS if alg in offered)


async def _get_json(policy: OutboundPolicy, url: str, what: str) -> Any:
    try:
        response = await fetch(policy, "GET", url, headers={"Accept": "application/json"})
    except OutboundError as exc:
        raise DiscoveryError(f"{what} at {url}: {exc.reason}", network=True) from None
    if response.status != 200:
        raise DiscoveryError(f"{what} at {url} answered HTTP {response.status}", network=True)
    try:
        return msgspec.json.decode(response.body)
    except msgspec.DecodeError:
        raise DiscoveryError(f"{what} at {url} is not JSON") from None


async def discover(policy: OutboundPolicy, issuer: str) -> ProviderMetadata:
    """The issuer's discovery document, after checking that it names this issuer."""
    url = issuer.rstrip("/") + WELL_KNOWN
    document = await _get_json(policy, url, "the discovery document")
    try:
        metadata = msgspec.convert(document, ProviderMetadata)
    except msgspec.ValidationError as exc:
        raise DiscoveryError(f"the discovery document at {url} is invalid: {exc}") from None
    if metadata.issuer != issuer:
        raise DiscoveryError(
            f"the discovery document names issuer {metadata.issuer!r}, not {issuer!r}"
        )
    allowed = ("https", "http") if urlsplit(issuer).scheme == "http" else ("https",)
    for name in ("jwks_uri", "authorization_endpoint", "token_endpoint"):
        value = getattr(metadata, name)
        if value is None:
            continue
        parts = urlsplit(value)
        if (
            parts.scheme not in allowed
            or not parts.hostname
            or parts.fragment
            or parts.username is not None
            or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in value)
        ):
            raise DiscoveryError(
                f"the discovery document's {name} is not an absolute {allowed[0]} URL"
            )
    if not metadata.pinned_algorithms():
        raise DiscoveryError(
            "the provider signs ID tokens with none of " + ", ".join(SUPPORTED_ALGORITHMS)
        )
    return metadata


async def fetch_key_set(policy: OutboundPolicy, jwks_uri: str) -> dict[str, Any]:
    """The public keys of the JWKS document at ``jwks_uri`` (checked to import as a key set)."""
    document = await _get_json(policy, jwks_uri, "the key set")
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise DiscoveryError(f"the key set at {jwks_uri} has no 'keys' array")
    keys = {"keys": [key for key in document["keys"] if isinstance(key, dict)]}
    try:
        imported = KeySet.import_key_set(keys)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError) as exc:
        raise DiscoveryError(
            f"the key set at {jwks_uri} does not import ({type(exc).__name__})"
        ) from None
    # Only public members are kept (and stored): an IdP that publishes a private part by
    # mistake does not get it copied into the panel's provider store.
    return {"keys": [dict(key) for key in imported.as_dict(private=False)["keys"]]}

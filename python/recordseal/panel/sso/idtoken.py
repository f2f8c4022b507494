"""ID-token validation with joserfc (authlib's JOSE library): pinned algorithms, the issuer's
key set with rotation by key id, issuer, audience, expiry and nonce.

``KeyCache`` holds a provider's JWKS. A token naming a key id the cache does not hold makes it
fetch the key set again (the IdP rotated its keys); such refetches happen at most once per
``UNKNOWN_KID_REFETCH_SECONDS``, so tokens with made-up key ids cannot turn the panel into a
request amplifier.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from joserfc import jws, jwt
from joserfc.errors import ClaimError, JoseError
from joserfc.jwk import KeySet

from recordseal.panel.sso.discovery import DiscoveryError, fetch_key_set
from recordseal.panel.sso.errors import InvalidCallback, Network
from recordseal.panel.sso.outbound import OutboundPolicy

#: Clock skew tolerated on ``exp``, ``nbf`` and ``iat``.
LEEWAY_SECONDS = 60
UNKNOWN_KID_REFETCH_SECONDS = 30.0


class KeyCache:
    """A provider's published keys, refetched on an unknown key id (see the module docstring)."""

    def __init__(
        self,
        policy: OutboundPolicy,
        jwks_uri: str,
        jwks: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.jwks_uri = jwks_uri
        self.jwks = jwks
        self.clock = clock
        self._last_unknown_refetch: float | None = None

    def _kids(self) -> set[str]:
        keys = (self.jwks or {}).get("keys", [])
        return {str(key.get("kid")) for key in keys if isinstance(key, dict) and "kid" in key}

    async def refresh(self) -> None:
        try:
            self.jwks = await fetch_key_set(self.policy, self.jwks_uri)
        except DiscoveryError as exc:
            raise Network(f"key set: {exc.reason}") from None

    async def key_set(self, kid: str | None) -> KeySet:
        if self.jwks is None:
            await self.refresh()
        elif kid is not None and kid not in self._kids():
            now = self.clock()
            last = self._last_unknown_refetch
            if last is None or now - last >= UNKNOWN_KID_REFETCH_SECONDS:
                self._last_unknown_refetch = now
                await self.refresh()
        try:
            return KeySet.import_key_set(self.jwks)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError):
            raise InvalidCallback("the provider's key set does not import") from None


async def verify_id_token(
    token: str,
    keys: KeyCache,
    *,
    algorithms: Collection[str],
    issuer: str,
    audience: str,
    nonce: str | None,
    now: float,
) -> dict[str, Any]:
    """The claims of a valid ID token; InvalidCallback naming the failed check otherwise."""
    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, UnicodeError):
        raise InvalidCallback("the ID token is not a compact JWS") from None
    alg = header.get("alg")
    if alg not in algorithms:
        raise InvalidCallback(f"the ID token uses alg {alg!r}, not one of {sorted(algorithms)}")
    kid = header.get("kid")
    key_set = await keys.key_set(kid if isinstance(kid, str) else None)
    try:
        decoded = jwt.decode(token, key_set, algorithms=list(algorithms))
    except (JoseError, ValueError) as exc:
        reason = f"the ID token signature does not verify ({type(exc).__name__})"
        raise InvalidCallback(reason) from None
    claims = decoded.claims
    options: dict[str, Any] = {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": audience},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    if nonce is not None:
        options["nonce"] = {"essential": True, "value": nonce}
    registry = jwt.JWTClaimsRegistry(now=int(now), leeway=LEEWAY_SECONDS, **options)
    try:
        registry.validate(claims)
    except ClaimError as exc:
        reason = f"ID token claim refused: {exc.claim} ({type(exc).__name__})"
        raise InvalidCallback(reason) from None
    audiences = claims["aud"]
    if isinstance(audiences, list) and len(audiences) > 1 and claims.get("azp") != audience:
        raise InvalidCallback("the ID token has several audiences and azp is not this client")
    if nonce is not None and "azp" in claims and claims["azp"] != audience:
        # OIDC Core 3.1.3.7 rule 5, for tokens minted for this client (code exchange).
        raise InvalidCallback("the ID token's azp is another client")
    return claims

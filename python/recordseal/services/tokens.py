"""API tokens: created by an operator, shown once, stored as a SHA-256 hash, tenant-scoped."""

from __future__ import annotations

import hashlib
import re
import secrets
import time

from recordseal.clock import utc_now
from recordseal.identifiers import IDENTIFIER_RULE, is_identifier
from recordseal.services.errors import Invalid, Unauthenticated
from recordseal.storage.rows import TokenRow
from recordseal.storage.tokens import TokenStore

TOKEN_PREFIX = "rs_"
#: RFC 6750 section 2.1: ``"Bearer" 1*SP b64token``; the scheme is case-insensitive (RFC 9110
#: section 11.1), the token is b64token (RFC 6750) and compared exactly.
BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9._~+/-]+=*)")
#: Longer values are refused unread (a token is 46 characters).
MAX_AUTHORIZATION = 1024


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value, None if it is not one."""
    if not authorization or len(authorization) > MAX_AUTHORIZATION:
        return None
    match = BEARER.fullmatch(authorization.strip(" \t"))
    return match.group(1) if match else None


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def check_tenant_id(tenant: str) -> str:
    if not is_identifier(tenant):
        raise Invalid("tenant_invalid", f"a tenant id is {IDENTIFIER_RULE}", "tenant")
    return tenant


class TokenService:
    """Issues tokens and resolves a presented token to its tenant."""

    def __init__(self, store: TokenStore, cache_seconds: float = 5.0) -> None:
        self._store = store
        self._cache_seconds = cache_seconds
        self._cache: dict[bytes, tuple[str, float]] = {}

    async def create(self, tenant: str, label: str = "") -> str:
        """A new token for ``tenant``; the caller shows it once, only its hash is kept."""
        check_tenant_id(tenant)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self._store.add_token(token_hash(token), tenant, label, utc_now())
        return token

    async def list(self, tenant: str) -> list[TokenRow]:
        return await self._store.list_tokens(tenant)

    async def revoke(self, tenant: str, token_id: str) -> bool:
        """Revoke; this process forgets it at once, others within ``cache_seconds``."""
        revoked = await self._store.revoke_token(tenant, token_id, utc_now())
        if revoked:
            for digest in [d for d in self._cache if d[:8].hex() == token_id]:
                del self._cache[digest]
        return revoked

    async def tenant_of(self, authorization: str | None) -> str:
        """The tenant of a ``Bearer`` token, or Unauthenticated (the reason is not told)."""
        token = bearer_token(authorization)
        if token is None:
            raise Unauthenticated("unauthenticated", "a valid bearer token is required")
        digest = token_hash(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        tenant = await self._store.tenant_for_token(digest)
        if tenant is None:
            raise Unauthenticated("unauthenticated", "a valid bearer token is required")
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (tenant, now + self._cache_seconds)
        return tenant

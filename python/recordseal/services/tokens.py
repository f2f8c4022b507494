"""API tokens: created by an operator, shown once, stored as a SHA-256 hash, tenant-scoped."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import secrets
import time
from collections.abc import Callable

from recordseal.clock import utc_now
from recordseal.identifiers import IDENTIFIER_RULE, is_identifier
from recordseal.services.errors import Invalid, Unauthenticated, tenant_inactive
from recordseal.storage.rows import TokenRow
from recordseal.storage.tokens import TokenStore

log = logging.getLogger("recordseal.tokens")

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


#: How often a process writes a token's last use (per token): "last used" is to the minute.
LAST_USED_RESOLUTION = 60.0


class TokenService:
    """Issues tokens and resolves a presented token to its tenant.

    A verified token is trusted for ``cache_seconds`` (1 s by default) before the store is
    asked again, so a revocation made through any process holds in every process within that
    time. Each process records a token's last use at most once a minute, off the request's
    path (``mark_used`` after the answer).
    """

    def __init__(
        self,
        store: TokenStore,
        cache_seconds: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._cache_seconds = cache_seconds
        self._monotonic = monotonic
        self._cache: dict[bytes, tuple[str, float]] = {}
        #: token hash -> when this process last recorded its use (monotonic seconds)
        self._recorded: dict[bytes, float] = {}
        self._unrecorded: set[bytes] = set()
        self._recording: asyncio.Task[None] | None = None

    async def create(self, tenant: str, label: str = "") -> str:
        """A new token for ``tenant``; the caller shows it once, only its hash is kept. A
        tenant without a row is registered by it (``storage/hierarchy.py``); a frozen tenant
        gets none (409 ``tenant_inactive``)."""
        check_tenant_id(tenant)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        if not await self._store.add_token(token_hash(token), tenant, label, utc_now()):
            raise tenant_inactive("no new API tokens")
        return token

    async def list(self, tenant: str | None = None) -> list[TokenRow]:
        """The tokens of ``tenant``, or of every tenant."""
        return await self._store.list_tokens(tenant)

    async def revoke(self, tenant: str | None, token_id: str) -> int:
        """Revoke the live tokens with this id (of ``tenant`` when given); this process
        forgets them at once, others within ``cache_seconds``. Answers how many."""
        revoked = await self._store.revoke_token(tenant, token_id.lower(), utc_now())
        if revoked:
            for digest in [d for d in self._cache if d[:8].hex() == token_id.lower()]:
                del self._cache[digest]
        return revoked

    async def tenant_of(self, authorization: str | None) -> str:
        """The tenant of a ``Bearer`` token, or Unauthenticated (the reason is not told)."""
        token = bearer_token(authorization)
        if token is None:
            raise Unauthenticated("unauthenticated", "a valid bearer token is required")
        digest = token_hash(token)
        now = self._monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            self._used(digest, now)
            return cached[0]
        tenant = await self._store.tenant_for_token(digest)
        if tenant is None:
            raise Unauthenticated("unauthenticated", "a valid bearer token is required")
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (tenant, now + self._cache_seconds)
        self._used(digest, now)
        return tenant

    def _used(self, digest: bytes, now: float) -> None:
        """Note a use; write it (in the background) unless written in the last minute."""
        last = self._recorded.get(digest)
        if last is not None and now - last < LAST_USED_RESOLUTION:
            return
        if len(self._recorded) > 10_000:
            self._recorded.clear()
        self._recorded[digest] = now
        self._unrecorded.add(digest)
        if self._recording is None or self._recording.done():
            self._recording = asyncio.get_running_loop().create_task(self._record())

    async def _record(self) -> None:
        while self._unrecorded:
            batch = list(self._unrecorded)
            self._unrecorded.clear()
            try:
                await self._store.mark_used(batch, utc_now())
            # Outermost boundary of this background write (a task of its own that no request
            # awaits): a lost "last used" never fails a request, whatever the store raised.
            except Exception:
                log.warning("tokens.last_used_not_recorded", exc_info=True)

    async def drain(self) -> None:
        """Wait for the last-used times still being written (before the store closes)."""
        if self._recording is not None:
            await asyncio.gather(self._recording, return_exceptions=True)

"""The tokens part of the store: API tokens, kept as the SHA-256 of the token only."""

from __future__ import annotations

from typing import Protocol

from recordseal.storage.rows import TokenRow


class TokenStore(Protocol):
    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None: ...

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        """The tenant of a token that is not revoked, or None."""
        ...

    async def list_tokens(self, tenant: str) -> list[TokenRow]: ...

    async def revoke_token(self, tenant: str, token_id: str, now: str) -> bool:
        """Revoke the tenant's token whose id is ``token_id``; False if there is none."""
        ...

"""The tokens part of the store: API tokens, kept as the SHA-256 of the token only."""

from __future__ import annotations

from typing import Protocol

from recordseal.storage.rows import TokenRow


class TokenStore(Protocol):
    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> bool:
        """Store a token, in one transaction with its tenant's row: a tenant without one is
        registered (``storage/hierarchy.py``, source ``implicit``), so every tenant holding
        tokens has a row. False, and nothing stored, when the tenant is frozen."""
        ...

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        """The tenant of a token that is not revoked, or None."""
        ...

    async def list_tokens(self, tenant: str | None = None) -> list[TokenRow]:
        """The tokens of ``tenant`` (None: of every tenant), by tenant then creation."""
        ...

    async def revoke_token(self, tenant: str | None, token_id: str, now: str) -> int:
        """Revoke the live tokens whose id is ``token_id``, of ``tenant`` only when given;
        answers how many (0: none)."""
        ...

    async def mark_used(self, token_hashes: list[bytes], now: str) -> None:
        """Record that the tokens were used at ``now`` (a later time already kept stays)."""
        ...

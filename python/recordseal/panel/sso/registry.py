"""The provider registry (docs/sso.md), keyed by provider id.

Two kinds of entries share one id space:

- providers registered in code at process start (``register``): any object of the
  ``SsoProvider`` contract, SAML and WebAuthn-via-provider included; every process registers
  them alike, so they are kept in memory;
- providers registered through the panel's form (``register_config``): OIDC configurations,
  kept in the panel's store (``storage/panel.py``; secrets sealed, ``provider_store.py``), so
  every worker and every host sees a registration or removal at its next lookup.

Lookups read the store each time (one indexed row); the provider object built from a row is
kept while the row is unchanged, so its key set (and the at-most-once-per-30-s refetch on an
unknown key id) survives between logins. Registering an id that is already registered raises
``DuplicateProvider``; ids follow the panel's identifier rule.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from recordseal.identifiers import IDENTIFIER, IDENTIFIER_RULE
from recordseal.panel.sso.contract import PROTOCOLS, SsoProvider
from recordseal.panel.sso.errors import DuplicateProvider, RegistrationError
from recordseal.panel.sso.jwt_bearer import JwtBearerProvider
from recordseal.panel.sso.oidc import OidcCodeConfig, OidcCodeProvider
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.sso.provider_store import ProviderConfig, SecretBox, from_row, to_row
from recordseal.storage.panel import PanelStore, ProviderRow


def check_provider_id(provider_id: str) -> str:
    if not IDENTIFIER.fullmatch(provider_id):
        raise RegistrationError("id", f"{provider_id!r} is not an identifier: {IDENTIFIER_RULE}")
    return provider_id


class ProviderRegistry:
    """Providers by id (see the module docstring)."""

    def __init__(
        self,
        policy: OutboundPolicy,
        store: PanelStore,
        box: SecretBox,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.store = store
        self.box = box
        self.clock = clock
        self._coded: dict[str, SsoProvider] = {}
        #: provider id -> the row it was built from, the configuration and the provider
        self._built: dict[str, tuple[ProviderRow, ProviderConfig, SsoProvider]] = {}

    def build(self, config: ProviderConfig) -> SsoProvider:
        if isinstance(config, OidcCodeConfig):
            return OidcCodeProvider(config, self.policy, self.clock)
        return JwtBearerProvider(config, self.policy, self.clock)

    def _adopt(self, row: ProviderRow) -> tuple[ProviderConfig, SsoProvider]:
        kept = self._built.get(row.provider_id)
        if kept is not None and kept[0] == row:
            return kept[1], kept[2]
        config = from_row(row, self.box)
        provider = self.build(config)
        self._built[row.provider_id] = (row, config, provider)
        return config, provider

    async def register(self, provider: SsoProvider) -> None:
        """Add a provider built in code (kept in memory); DuplicateProvider if the id is taken."""
        check_provider_id(provider.id)
        if provider.protocol not in PROTOCOLS:
            raise RegistrationError("protocol", f"{provider.protocol!r} is not one of {PROTOCOLS}")
        if provider.id in self._coded or await self.store.provider(provider.id) is not None:
            raise DuplicateProvider(provider.id)
        self._coded[provider.id] = provider

    def built_in(self, provider_id: str) -> bool:
        """Whether the id is a provider registered in code (not removable from the panel)."""
        return provider_id in self._coded

    async def register_config(self, config: ProviderConfig) -> SsoProvider:
        """Add an OIDC provider configuration to the store; DuplicateProvider if taken."""
        check_provider_id(config.id)
        if config.id in self._coded:
            raise DuplicateProvider(config.id)
        row = to_row(config, self.box, self.clock())
        if not await self.store.add_provider(row):
            raise DuplicateProvider(config.id)
        return self._adopt(row)[1]

    async def remove(self, provider_id: str) -> bool:
        """Unregister a provider; False when no provider has this id."""
        if self._coded.pop(provider_id, None) is not None:
            return True
        self._built.pop(provider_id, None)
        return await self.store.remove_provider(provider_id, self.clock())

    async def resolve(self, provider_id: str) -> SsoProvider | None:
        """The provider registered under ``provider_id`` now, or None."""
        coded = self._coded.get(provider_id)
        if coded is not None:
            return coded
        row = await self.store.provider(provider_id)
        if row is None:
            self._built.pop(provider_id, None)
            return None
        return self._adopt(row)[1]

    async def config(self, provider_id: str) -> ProviderConfig | None:
        """The stored configuration of a provider registered through the panel, or None."""
        if provider_id in self._coded:
            return None
        row = await self.store.provider(provider_id)
        return self._adopt(row)[0] if row is not None else None

    async def for_organization(self, tenant_id: str, organization_id: str) -> list[SsoProvider]:
        """The organization's providers: those registered in code, then the stored ones."""
        stored = [
            self._adopt(row)[1]
            for row in await self.store.providers()
            if (row.tenant, row.organization) == (tenant_id, organization_id)
        ]
        coded = [
            provider
            for provider in self._coded.values()
            if provider.tenant_id == tenant_id and provider.organization_id == organization_id
        ]
        return [*coded, *stored]

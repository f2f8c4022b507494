"""The provider registry (docs/sso.md), keyed by provider id.

Two kinds of entries share one id space:

- providers registered in code at process start (``register``): any object of the
  ``SsoProvider`` contract, SAML and WebAuthn-via-provider included; kept in memory;
- providers registered through the panel's form (``register_config``): OIDC configurations,
  kept in the ``ProviderStore`` file when one is configured, else in memory (they vanish on
  restart). With a file, every lookup first re-reads it if another process changed it.

Registering an id that is already registered raises ``DuplicateProvider``; ids follow the
panel's identifier rule (1 to 64 of letters, digits, ``.``, ``_``, ``-``).
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
from recordseal.panel.sso.provider_store import ProviderConfig, ProviderStore


def check_provider_id(provider_id: str) -> str:
    if not IDENTIFIER.fullmatch(provider_id):
        raise RegistrationError("id", f"{provider_id!r} is not an identifier: {IDENTIFIER_RULE}")
    return provider_id


class ProviderRegistry:
    """Providers by id (see the module docstring)."""

    def __init__(
        self,
        policy: OutboundPolicy,
        store: ProviderStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.store = store
        self.clock = clock
        self._coded: dict[str, SsoProvider] = {}
        self._configs: dict[str, ProviderConfig] = {}
        self._built: dict[str, SsoProvider] = {}
        self._sync()

    def build(self, config: ProviderConfig) -> SsoProvider:
        if isinstance(config, OidcCodeConfig):
            return OidcCodeProvider(config, self.policy, self.clock)
        return JwtBearerProvider(config, self.policy, self.clock)

    def _sync(self) -> None:
        if self.store is None or not self.store.changed():
            return
        self._adopt(self.store.load())

    def _adopt(self, configs: list[ProviderConfig]) -> None:
        fresh: dict[str, ProviderConfig] = {config.id: config for config in configs}
        built: dict[str, SsoProvider] = {}
        for provider_id, config in fresh.items():
            kept = self._built.get(provider_id)
            same = self._configs.get(provider_id) == config
            built[provider_id] = kept if kept is not None and same else self.build(config)
        self._configs = fresh
        self._built = built

    def register(self, provider: SsoProvider) -> None:
        """Add a provider built in code (kept in memory); DuplicateProvider if the id is taken."""
        check_provider_id(provider.id)
        if provider.protocol not in PROTOCOLS:
            raise RegistrationError("protocol", f"{provider.protocol!r} is not one of {PROTOCOLS}")
        self._sync()
        if provider.id in self._coded or provider.id in self._configs:
            raise DuplicateProvider(provider.id)
        self._coded[provider.id] = provider

    def register_config(self, config: ProviderConfig) -> SsoProvider:
        """Add an OIDC provider configuration, persisted when a store file is configured."""
        check_provider_id(config.id)
        if config.id in self._coded:
            raise DuplicateProvider(config.id)
        if self.store is None:
            if config.id in self._configs:
                raise DuplicateProvider(config.id)
            self._adopt([*self._configs.values(), config])
        else:
            with self.store.update() as configs:
                if any(existing.id == config.id for existing in configs):
                    raise DuplicateProvider(config.id)
                configs.append(config)
                updated = list(configs)
            self._adopt(updated)
        return self._built[config.id]

    def remove(self, provider_id: str) -> bool:
        """Unregister a provider; False when no provider has this id."""
        if self._coded.pop(provider_id, None) is not None:
            return True
        if self.store is None:
            if provider_id not in self._configs:
                return False
            self._adopt([c for c in self._configs.values() if c.id != provider_id])
            return True
        with self.store.update() as configs:
            before = len(configs)
            configs[:] = [c for c in configs if c.id != provider_id]
            removed = len(configs) != before
            updated = list(configs)
        self._adopt(updated)
        return removed

    def resolve(self, provider_id: str) -> SsoProvider | None:
        """The provider registered under ``provider_id`` now, or None."""
        self._sync()
        return self._coded.get(provider_id) or self._built.get(provider_id)

    def config(self, provider_id: str) -> ProviderConfig | None:
        self._sync()
        return self._configs.get(provider_id)

    def for_organization(self, tenant_id: str, organization_id: str) -> list[SsoProvider]:
        self._sync()
        return [
            provider
            for provider in (*self._coded.values(), *self._built.values())
            if provider.tenant_id == tenant_id and provider.organization_id == organization_id
        ]

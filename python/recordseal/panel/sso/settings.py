"""Sign-on settings, taken from the service's settings (docs/configuration.md).

- ``RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS``: IdP groups whose members sign in as operators,
  separated by commas or semicolons; unset means every sso login is a viewer (fail closed).
- ``RECORDSEAL_PANEL_PROVIDER_STORE_PATH``: a provider file (the format of earlier versions)
  whose providers are added to the database at start when it never held them; providers
  registered through the panel live in the database either way (docs/sso.md).
- ``RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW``: comma-separated networks (CIDR) the panel may call
  although they are not public (loopback, private, link-local); unset means none.
- ``RECORDSEAL_PANEL_SSO_CA_FILE``: a PEM file of the certificate authorities trusted for the
  identity providers' TLS (an IdP under a private CA); unset means the certifi bundle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.settings import Settings


@dataclass(frozen=True)
class SsoSettings:
    operator_groups: frozenset[str] = frozenset()
    provider_store_path: Path | None = None
    outbound: OutboundPolicy = field(default_factory=OutboundPolicy)

    @classmethod
    def of(cls, settings: Settings) -> SsoSettings:
        return cls(
            operator_groups=frozenset(settings.panel_sso_operator_groups),
            provider_store_path=settings.panel_provider_store_path,
            outbound=OutboundPolicy(
                settings.panel_sso_outbound_allow, ca_file=settings.panel_sso_ca_file
            ),
        )

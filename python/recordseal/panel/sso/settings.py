"""Sign-on settings, read from the environment in one place.

- ``RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS``: IdP groups whose members sign in as operators,
  separated by commas or semicolons; unset means every sso login is a viewer (fail closed).
- ``RECORDSEAL_PANEL_PROVIDER_STORE_PATH``: the JSON file that keeps providers registered
  through the panel; unset means they are kept in memory and vanish on restart.
- ``RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW``: comma-separated networks (CIDR) the panel may call
  although they are not public (loopback, private, link-local); unset means none.
- ``RECORDSEAL_PANEL_SSO_CA_FILE``: a PEM file of the certificate authorities trusted for the
  identity providers' TLS (an IdP under a private CA); unset means the certifi bundle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recordseal.panel.roles import operator_groups
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.sso.provider_store import PROVIDER_STORE_ENV


@dataclass(frozen=True)
class SsoSettings:
    operator_groups: frozenset[str] = frozenset()
    provider_store_path: Path | None = None
    outbound: OutboundPolicy = field(default_factory=OutboundPolicy)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> SsoSettings:
        path = environ.get(PROVIDER_STORE_ENV, "").strip()
        return cls(
            operator_groups=operator_groups(environ),
            provider_store_path=Path(path) if path else None,
            outbound=OutboundPolicy.from_env(environ),
        )

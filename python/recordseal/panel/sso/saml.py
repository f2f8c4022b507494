"""SAML 2.0 sign-on: the contract and the registry accept it; no SAML provider ships here.

A SAML provider is any ``SsoProvider`` whose ``protocol`` is ``"saml"``. Its ``begin_login``
answers a ``Redirect`` to the IdP's SSO service carrying the panel's ``state_nonce`` as
``RelayState``; its ``complete_login`` receives the POST callback's ``callback_data`` (the
base64 ``SAMLResponse`` as posted by the browser, form-urlencoded with ``RelayState``), must
raise ``InvalidNonce`` when ``RelayState`` differs from ``state_nonce`` (docs/sso.md), and
answers a principal whose ``subject_id`` is the assertion's NameID.

Operator steps (docs/sso.md), written out in ``docs/sso.md``:

1. obtain the IdP's SAML metadata (entity id, SSO service URL, signing certificate);
2. configure a provider in a build that enables a SAML implementation (a build-time feature:
   none is included in this package, so there is no SAML form in the panel);
3. register it at process start with ``register_saml_provider(registry, provider)``;
4. set the organization's ``sso_provider_ref`` in the bootstrap file to the provider's id.
"""

from __future__ import annotations

from recordseal.panel.sso.contract import SsoProvider
from recordseal.panel.sso.errors import RegistrationError
from recordseal.panel.sso.registry import ProviderRegistry

#: Whether this build carries a SAML implementation (it does not; see the module docstring).
SAML_IMPLEMENTATION_AVAILABLE = False


async def register_saml_provider(registry: ProviderRegistry, provider: SsoProvider) -> None:
    """Register a SAML provider built by a SAML-enabled build, at process start.

    Raises ``RegistrationError`` when ``provider`` is not a SAML provider and
    ``DuplicateProvider`` when its id is taken.
    """
    if provider.protocol != "saml":
        raise RegistrationError("protocol", f"{provider.protocol!r} is not 'saml'")
    await registry.register(provider)

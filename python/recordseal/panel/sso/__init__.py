"""Per-organization single sign-on (docs/sso.md): the provider contract,
the registry, pending login nonces, OIDC code exchange and JWT bearer, the SAML contract.

Nothing here imports the web layer; ``recordseal.web.panel.sso`` serves the routes.
"""

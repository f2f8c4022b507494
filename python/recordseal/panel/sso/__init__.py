"""Per-organization single sign-on (spec 2.6-2.9, 3, 4.2, 4.3, 5, 7): the provider contract,
the registry, pending login nonces, OIDC code exchange and JWT bearer, the SAML contract.

Nothing here imports the web layer; ``recordseal.web.panel.sso`` serves the routes.
"""

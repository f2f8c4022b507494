"""The operator panel's web layer (docs/panel.md, "Views and errors"): one controller per
domain (tenant views, tokens, sign-on providers, transparency files, sign-out; the sign-on and
passkey ceremonies), the session, CSRF, role and tenant-scope checks as guards (``guards``).

Wire it with ``routes.PANEL_ROUTES``, ``passkeys.PASSKEY_ROUTES`` and
``routes.panel_template_config()``, and set ``app.state.panel`` (a ``context.PanelContext``),
``app.state.sso`` and ``app.state.passkey_config`` in the application's lifespan.
"""

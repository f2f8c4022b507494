"""The operator panel's web layer (docs/panel.md, "Views and errors"): tenant views, sign-out, CSRF.

Wire it with ``routes.PANEL_ROUTES`` and ``routes.panel_template_config()``, and set
``app.state.panel`` to a ``context.PanelContext`` in the application's lifespan.
"""

"""The operator panel's web layer (spec 4.1, 5, 7): tenant views, sign-out, CSRF.

Wire it with ``routes.PANEL_ROUTES`` and ``routes.panel_template_config()``, and set
``app.state.panel`` to a ``context.PanelContext`` in the application's lifespan.
"""

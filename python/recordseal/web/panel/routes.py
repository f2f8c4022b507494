"""What the application wires in: ``PANEL_ROUTES`` and ``panel_template_config()``.

``PANEL_ROUTES`` holds one ``Router`` at ``/`` that carries the panel's own dependency
(``panel_principal``) and exception handler (``PanelDenied``), plus the sign-on routes
(``/sso/...``, no session needed), so nothing else is needed at app level beyond the template
config, ``app.state.panel`` (a ``PanelContext``) and ``app.state.sso`` (an ``SsoContext``).
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.di import Provide
from litestar.handlers import HTTPRouteHandler
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from recordseal.web.panel.dashboard import DASHBOARD_ROUTES
from recordseal.web.panel.session import PanelDenied, panel_denied_handler, panel_principal
from recordseal.web.panel.signout import SIGNOUT_ROUTES
from recordseal.web.panel.sso import SSO_ROUTES
from recordseal.web.panel.sso_registration import SSO_REGISTRATION_ROUTES
from recordseal.web.panel.tokens import TOKEN_ROUTES
from recordseal.web.panel.transparency import TRANSPARENCY_ROUTES
from recordseal.web.panel.views import VIEW_ROUTES

TEMPLATE_DIRECTORY = Path(__file__).parent / "templates"
#: The panel's style sheet and passkey script: pages allow no inline script or style
#: (web/headers.py), so they load these from the panel's own origin.
STATIC_DIRECTORY = Path(__file__).parents[1] / "static" / "panel"
STATIC_PATH = "/static/panel"

panel_router = Router(
    path="/",
    route_handlers=[
        *VIEW_ROUTES,
        *SIGNOUT_ROUTES,
        *TOKEN_ROUTES,
        *DASHBOARD_ROUTES,
        *SSO_REGISTRATION_ROUTES,
        *TRANSPARENCY_ROUTES,
    ],
    dependencies={"panel_principal": Provide(panel_principal)},
    exception_handlers={PanelDenied: panel_denied_handler},
    tags=["panel"],
)

# The sign-on routes sit outside the router: they run before there is a session.
PANEL_ROUTES: list[Router | HTTPRouteHandler] = [
    panel_router,
    *SSO_ROUTES,
    create_static_files_router(
        path=STATIC_PATH, directories=[STATIC_DIRECTORY], include_in_schema=False
    ),
]


def panel_template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja templates of the panel (autoescaping on); names are ``panel/<page>.html``."""
    return TemplateConfig(directory=TEMPLATE_DIRECTORY, engine=JinjaTemplateEngine)

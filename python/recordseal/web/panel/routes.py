"""What the application wires in: ``PANEL_ROUTES`` and ``panel_template_config()``.

``PANEL_ROUTES`` holds one ``Router`` at ``/`` that carries the panel's own dependency
(``panel_principal``) and exception handler (``PanelDenied``), so nothing else is needed at
app level beyond the template config and ``app.state.panel`` (a ``PanelContext``).
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.di import Provide
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.template.config import TemplateConfig

from recordseal.web.panel.session import PanelDenied, panel_denied_handler, panel_principal
from recordseal.web.panel.signout import SIGNOUT_ROUTES
from recordseal.web.panel.tokens import TOKEN_ROUTES
from recordseal.web.panel.transparency import TRANSPARENCY_ROUTES
from recordseal.web.panel.views import VIEW_ROUTES

TEMPLATE_DIRECTORY = Path(__file__).parent / "templates"

panel_router = Router(
    path="/",
    route_handlers=[*VIEW_ROUTES, *SIGNOUT_ROUTES, *TOKEN_ROUTES, *TRANSPARENCY_ROUTES],
    dependencies={"panel_principal": Provide(panel_principal)},
    exception_handlers={PanelDenied: panel_denied_handler},
    tags=["panel"],
)

PANEL_ROUTES = [panel_router]


def panel_template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja templates of the panel (autoescaping on); names are ``panel/<page>.html``."""
    return TemplateConfig(directory=TEMPLATE_DIRECTORY, engine=JinjaTemplateEngine)

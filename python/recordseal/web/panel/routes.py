"""What the application wires in: ``PANEL_ROUTES`` and ``panel_template_config()`` (and
``passkeys.PASSKEY_ROUTES``; docs/layers.md, "The web layer").

``PANEL_ROUTES`` holds one ``Router`` at ``/`` with the panel's controllers (tenant views,
the tenant hierarchy's changes, tokens, sign-on providers, transparency files, sign-out). The
router carries the guards every one of its routes passes (``require_session``, then
``require_csrf`` for mutations: ``web/panel/guards.py``), the panel's dependencies (``call``,
the request with its principal and context, ``web/panel/call.py``; ``panel_principal`` and
``panel`` apart) and its exception handler (``PanelDenied``). Beside it are the sign-on
controllers, which run before there is a session (``SsoController``; the passkey ceremonies,
``passkeys.PASSKEY_ROUTES``, come with the passkey configuration), and the panel's static files.
The application's typed state provides ``app.state.panel`` (a ``PanelContext``),
``app.state.sso`` (an ``SsoContext``) and ``app.state.passkey_config``.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.di import Provide
from litestar.handlers import HTTPRouteHandler
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler

from recordseal.web.panel.call import provide_call
from recordseal.web.panel.context import provide_panel
from recordseal.web.panel.figures import FILTERS
from recordseal.web.panel.guards import require_csrf, require_session
from recordseal.web.panel.live import LiveController
from recordseal.web.panel.session import PanelDenied, panel_denied_handler, panel_principal
from recordseal.web.panel.signout import SignOutController
from recordseal.web.panel.sso import SsoController, provide_sso
from recordseal.web.panel.sso_registration import SsoRegistrationController
from recordseal.web.panel.stream_records import StreamRecordsController
from recordseal.web.panel.tenant_admin import TenantAdminController
from recordseal.web.panel.tokens import TokenController
from recordseal.web.panel.transparency import TransparencyController
from recordseal.web.panel.views import TenantController
from recordseal.web.site import site_nav

TEMPLATE_DIRECTORY = Path(__file__).parent / "templates"
#: The panel's style sheet and passkey script: pages allow no inline script or style
#: (web/headers.py), so they load these from the panel's own origin.
STATIC_DIRECTORY = Path(__file__).parents[1] / "static" / "panel"
STATIC_PATH = "/static/panel"

panel_router = Router(
    path="/",
    route_handlers=[
        TenantController,
        TenantAdminController,
        SignOutController,
        TokenController,
        SsoRegistrationController,
        TransparencyController,
        LiveController,
        StreamRecordsController,
    ],
    guards=[require_session, require_csrf],
    dependencies={
        "panel_principal": Provide(panel_principal, sync_to_thread=False),
        "call": Provide(provide_call, sync_to_thread=False),
        "panel": Provide(provide_panel, sync_to_thread=False),
        "sso": Provide(provide_sso, sync_to_thread=False),
    },
    exception_handlers={PanelDenied: panel_denied_handler},
    tags=["panel"],
    include_in_schema=False,
)

# The sign-on routes sit outside the router: they run before there is a session.
PANEL_ROUTES: list[Router | HTTPRouteHandler | ControllerRouterHandler] = [
    panel_router,
    SsoController,
    create_static_files_router(
        path=STATIC_PATH, directories=[STATIC_DIRECTORY], include_in_schema=False
    ),
]


def panel_template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja templates of the panel (autoescaping on); names are ``panel/<page>.html``. Their
    header is the site's (``site_nav``, ``web/site.py``) and their numbers are for people
    (the filters of ``web/panel/figures.py``)."""
    return TemplateConfig(
        directory=TEMPLATE_DIRECTORY, engine=JinjaTemplateEngine, engine_callback=_site_globals
    )


def _site_globals(engine: JinjaTemplateEngine) -> None:
    engine.engine.globals["site_nav"] = site_nav
    engine.engine.filters.update(FILTERS)

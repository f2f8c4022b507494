"""``RecordServicePlugin``: the one object that assembles the record service's application.

Built the way litestar-fullstack's ``server/core.py`` builds its application: one Litestar
``InitPluginProtocol`` plugin registers the routes (one controller per domain), the exception
handlers (``web/problems.py``), the OpenAPI configuration and its schema plugins, the panel's
templates, the response headers and the lifespan. The lifespan builds the worker's parts
(``web/assembly.py``), puts them on the typed state (``web/state.py``), starts the background
tasks under their supervisor (``web/background.py``) and, at shutdown, stops and closes
everything in order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

from recordseal.fleet.manifest import FleetManifest, load_manifest
from recordseal.panel.bootstrap import store_from_seed
from recordseal.panel.sso.settings import SsoSettings
from recordseal.settings import Settings
from recordseal.web.assembly import assemble
from recordseal.web.headers import security_headers
from recordseal.web.ingest import IngestController
from recordseal.web.landing import LandingController
from recordseal.web.openapi import DocumentedAsPlugin, JsonSchemaFormatPlugin, openapi_config
from recordseal.web.ops import READY_STATE, ServiceController
from recordseal.web.panel.passkeys import PASSKEY_ROUTES
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from recordseal.web.problems import EXCEPTION_HANDLERS
from recordseal.web.proofs import proof_controller
from recordseal.web.records import RecordController
from recordseal.web.streams import StreamController
from recordseal.web.tiles import TileController
from recordseal.web.verify import static_files, verify_controller


class RecordServicePlugin(InitPluginProtocol):
    """Routes, dependencies' state, exception handlers and lifespan of the record service."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Checked now, not in the lifespan: an inconsistent seed file stops the start at once,
        # with a BootstrapError naming the file and the identifier (docs/panel.md, "The seed
        # file"). It is loaded into the database in the lifespan, where a conflict with it
        # stops the start.
        store_from_seed(settings.panel_tenant_seed)
        # Likewise the fleet manifest: an invalid one stops the start with a ManifestError
        # naming the file, the line and the key (docs/fleets.md, "The manifest").
        self.manifest = (
            load_manifest(settings.fleet_manifest) if settings.fleet_manifest else FleetManifest()
        )
        self.sso = SsoSettings.of(settings)

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        settings = self.settings
        app_config.route_handlers.extend(
            [
                LandingController,
                ServiceController,
                # In this order, the OpenAPI document lists streams, ingest, then stored records.
                StreamController,
                IngestController,
                RecordController,
                verify_controller(settings.max_bundle_bytes),
                static_files,
                proof_controller(settings.max_bundle_bytes),
                TileController,
                *PANEL_ROUTES,
                *PASSKEY_ROUTES,
            ]
        )
        app_config.template_config = panel_template_config()
        app_config.exception_handlers.update(EXCEPTION_HANDLERS)
        app_config.lifespan.append(self.lifespan)
        app_config.request_max_body_size = settings.max_body_bytes
        app_config.openapi_config = openapi_config()
        # Right after this plugin, where they stood when create_app listed them: before
        # Litestar's default schema plugins.
        here = app_config.plugins.index(self) + 1
        app_config.plugins[here:here] = [DocumentedAsPlugin(), JsonSchemaFormatPlugin()]
        app_config.before_send.append(security_headers)
        # One logging setup for every process (recordseal.logs), not Litestar's own.
        app_config.logging_config = None
        app_config.debug = False
        return app_config

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        """The worker's parts built and installed, its background tasks running while it
        serves; at shutdown: not ready, tasks stopped, everything closed in order."""
        worker = await assemble(self.settings, self.manifest, self.sso)
        worker.install(app.state, self.settings)
        worker.tasks.start()
        app.state[READY_STATE] = True
        try:
            yield
        finally:
            app.state[READY_STATE] = False
            await worker.close(app.state)

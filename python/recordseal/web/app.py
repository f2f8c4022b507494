"""``create_app()``: the Litestar application of the record service.

Everything the application is made of is registered by one plugin, ``RecordServicePlugin``
(``web/plugin.py``): the per-domain controllers (docs/layers.md, "The web layer"), the
exception handlers, the OpenAPI document and the lifespan that builds the worker's typed state
(``web/assembly.py``, ``web/state.py``) and supervises its background tasks
(``web/background.py``).
"""

from __future__ import annotations

from litestar import Litestar

from recordseal.settings import Settings, from_env
from recordseal.web.ingest_gate import IngestGate
from recordseal.web.observe import RequestObserver
from recordseal.web.plugin import RecordServicePlugin
from recordseal.web.unread_body import CloseUnreadBodies


def create_app(settings: Settings | None = None) -> Litestar:
    """The application; state (store, keys, services) is opened in its lifespan."""
    settings = settings or from_env()
    app = Litestar(plugins=[RecordServicePlugin(settings)])
    # The ingest routes ahead of the router (web/ingest_gate.py); around both, the connection
    # closed after an answer given before the body was read (web/unread_body.py); the observer
    # outside everything, so every request is logged and counted, those no route matches too.
    gate = IngestGate(app.asgi_handler, app, settings.max_body_bytes)
    app.asgi_handler = RequestObserver(CloseUnreadBodies(gate), access_log=settings.access_log)
    return app

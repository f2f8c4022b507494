"""ASGI app for the passkey browser test: the full service app plus ``PASSKEY_ROUTES``.

Until ``create_app`` wires the passkey routes itself, this module registers them on the built
app and puts the ``PasskeyStore`` on ``app.state``. The data directory is the one named by
``RECORDSEAL_DATA_DIR``; the tenant seed file by ``RECORDSEAL_PANEL_TENANT_SEED``.
"""

from __future__ import annotations

import os
from pathlib import Path

from recordseal.settings import from_env
from recordseal.web.app import create_app
from recordseal.web.panel.passkeys import PASSKEY_ROUTES, passkey_context

DATA_DIR = Path(os.environ["RECORDSEAL_DATA_DIR"])

app = create_app(from_env(data_dir=DATA_DIR, seal_interval=0))
if not any(route.path == "/login" for route in app.routes):
    for handler in PASSKEY_ROUTES:
        app.register(handler)
app.state.passkey_store = passkey_context(DATA_DIR)

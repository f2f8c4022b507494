"""ASGI app for the browser test: VERIFY_ROUTES with a fixed verification context.

The key directory and trust store are read from the files named by
``RECORDSEAL_VERIFY_KEYS`` and ``RECORDSEAL_VERIFY_TRUST``.
"""

from __future__ import annotations

import os
from pathlib import Path

from litestar import Litestar

from recordseal.verify import load_key_directory, load_trust_store
from recordseal.web.verify import VERIFY_ROUTES

KEYS = load_key_directory(Path(os.environ["RECORDSEAL_VERIFY_KEYS"]).read_bytes())
TRUST = load_trust_store(Path(os.environ["RECORDSEAL_VERIFY_TRUST"]).read_bytes())

app = Litestar(route_handlers=VERIFY_ROUTES)
app.state.verification_context = lambda: (KEYS, TRUST)

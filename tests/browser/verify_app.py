"""ASGI app for the browser tests: the verify routes with a fixed verification context.

The key directory and trust store are read from the files named by
``RECORDSEAL_VERIFY_KEYS`` and ``RECORDSEAL_VERIFY_TRUST``; ``GET /v1/keys`` and
``GET /v1/trust`` serve those files as the service does, for the page's opt-in fetches.
"""

from __future__ import annotations

import os
from pathlib import Path

from litestar import Litestar, Response, get
from litestar.static_files import create_static_files_router

from recordseal.services.verification import OnlineVerifier
from recordseal.settings import Settings
from recordseal.verify import (
    KeyDirectory,
    TrustStore,
    load_key_directory,
    load_trust_store,
)
from recordseal.web.panel.routes import STATIC_DIRECTORY, STATIC_PATH
from recordseal.web.problems import EXCEPTION_HANDLERS
from recordseal.web.verify import static_files, verify_controller

KEYS_FILE = Path(os.environ["RECORDSEAL_VERIFY_KEYS"])
TRUST_FILE = Path(os.environ["RECORDSEAL_VERIFY_TRUST"])
KEYS = load_key_directory(KEYS_FILE.read_bytes())
TRUST = load_trust_store(TRUST_FILE.read_bytes())


@get("/v1/keys")
async def keys() -> Response[bytes]:
    return Response(KEYS_FILE.read_bytes(), media_type="application/json")


@get("/v1/trust")
async def trust() -> Response[bytes]:
    return Response(TRUST_FILE.read_bytes(), media_type="application/json")


async def context() -> tuple[KeyDirectory, TrustStore]:
    return KEYS, TRUST


app = Litestar(
    route_handlers=[
        verify_controller(Settings().max_bundle_bytes),
        static_files,
        # the site's style sheet, which every public page loads (web/site.py)
        create_static_files_router(path=STATIC_PATH, directories=[STATIC_DIRECTORY]),
        keys,
        trust,
    ],
    exception_handlers=dict(EXCEPTION_HANDLERS),
)
app.state.verifier = OnlineVerifier(context)

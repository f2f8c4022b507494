"""An ASGI application whose startup never finishes, for tests/web/test_orphan_guard.py:
it arms supervision on import as ``recordseal.web.asgi`` does, and when granian has begun its
lifespan startup it writes its pid to the file ``STALLED_MARKER`` names (whole, by rename)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from recordseal.web.orphan_guard import exit_with_supervisor

MARKER_VARIABLE = "STALLED_MARKER"

exit_with_supervisor()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "lifespan":
        return
    await receive()  # lifespan.startup
    marker = Path(os.environ[MARKER_VARIABLE])
    marker.with_suffix(".tmp").write_text(str(os.getpid()))
    marker.with_suffix(".tmp").rename(marker)
    await asyncio.Event().wait()  # a startup that does not finish

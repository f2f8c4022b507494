"""One Chromium page for the browser verifier's modules, with no server process.

Every request of the page is answered by Playwright's routing from the files on disk: the
static modules at ``/static/verify/``, the shared vectors at ``/vectors/``, and the harness
at ``/harness.js``. The page's origin is ``http://localhost``, a secure context, so WebCrypto
is available; nothing ever connects to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright import sync_api

from tests.servers import ROOT, chromium

STATIC = ROOT / "python" / "recordseal" / "web" / "static" / "verify"
VECTORS = ROOT / "tests" / "vectors"
HARNESS = Path(__file__).with_name("harness.js")
ORIGIN = "http://localhost:9"
TYPES = {".js": "text/javascript", ".json": "application/json"}


def _serve(route: sync_api.Route) -> None:
    path = urlparse(route.request.url).path
    if path == "/":
        route.fulfill(body="<!DOCTYPE html><title>verify_js</title>", content_type="text/html")
        return
    found: Path | None = None
    if path.startswith("/static/verify/"):
        found = STATIC / path.removeprefix("/static/verify/")
    elif path.startswith("/vectors/"):
        found = VECTORS / path.removeprefix("/vectors/")
    elif path == "/harness.js":
        found = HARNESS
    if found is None or not found.is_file():
        route.fulfill(status=404, body="not found")
        return
    route.fulfill(body=found.read_bytes(), content_type=TYPES.get(found.suffix, "text/plain"))


class Harness:
    """Calls the exported functions of harness.js in the page."""

    def __init__(self, page: sync_api.Page) -> None:
        self.page = page

    def __call__(self, function: str, argument: Any = None) -> Any:
        script = f"async (arg) => (await import('/harness.js')).{function}(arg)"
        return self.page.evaluate(script, argument)


# Module scope: only one Playwright (sync API) may run at a time, and other suites start theirs.
@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    with chromium() as browser:
        page = browser.new_page()
        page.route("**/*", _serve)
        page.goto(f"{ORIGIN}/")
        yield Harness(page)
        page.close()

"""Every public page in Chromium, 1280 and 390 px wide: the landing page, the verify page (bare
and with a result), the API page, the panel's sign-in page, and the panel's pages for a
signed-in operator. Each has the one header of the site (the product's name linking home,
a link to each other public page, the page itself marked current), the landing page is not
called the operator panel, and no text runs past the right edge of the window (text inside
a box that scrolls on its own, such as a code block, is the box's to scroll).

Screenshots (``make screenshots``): ``api.png`` and each page 390 px wide (``*-390.png``).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from playwright import sync_api

from tests.browser.test_live_view import ENV
from tests.servers import (
    Witnessed,
    chromium,
    screenshot_dir,
    virtual_authenticator,
    witnessed_service,
)

WIDTHS = (1280, 390)
PUBLIC = {"/verify-record": "Verify a record", "/schema": "API", "/tenants": "Operator panel"}

#: Text nodes whose boxes reach past the window's right edge, unless a scrolling or clipping
#: box holds them; and the document's own scroll width.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const held = (element) => {
    for (let box = element; box && box !== document.body; box = box.parentElement) {
      const x = getComputedStyle(box).overflowX;
      if (["auto", "scroll", "hidden", "clip"].includes(x)) return true;
    }
    return false;
  };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim() || held(node.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width > 0 && (rect.right > width + 1 || rect.left < -1)) {
        out.push(node.textContent.trim().slice(0, 60));
        break;
      }
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, out};
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Witnessed]:
    with witnessed_service(tmp_path_factory.mktemp("site-pages")) as service:
        yield service


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def base(service: Witnessed) -> str:
    return service.url.replace("127.0.0.1", "localhost")


def check_page(page: sync_api.Page, current: str, name: str, width: int) -> None:
    """The header, its links, nothing past the right edge; a screenshot 390 px wide."""
    header = page.locator("header.site")
    assert header.count() == 1, f"{name}: one header"
    brand = header.locator("a.brand")
    assert brand.inner_text() == "recordseal" and brand.get_attribute("href") == "/", name
    public = header.get_by_role("navigation", name="Public pages")
    for path, text in PUBLIC.items():
        link = public.get_by_role("link", name=text, exact=True)
        assert link.get_attribute("href") == path, f"{name}: {text}"
        assert (link.get_attribute("aria-current") == "page") == (path == current), name
    assert (brand.get_attribute("aria-current") == "page") == (current == "/"), name
    assert "operator panel" not in brand.inner_text().lower()
    for box in (brand, *(public.get_by_role("link").all())):
        assert box.is_visible() and box.bounding_box()["width"] > 0  # type: ignore[index]
    found = page.evaluate(OVERFLOW)
    assert found["out"] == [], f"{name} at {width} px: text past the right edge: {found['out']}"
    assert found["scrollWidth"] <= found["width"], f"{name} at {width} px scrolls sideways"
    if width == 390:
        page.screenshot(path=str(screenshot_dir() / f"{name}-390.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_public_pages_share_one_header_and_fit_the_window(
    browser: sync_api.Browser, served: Witnessed, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{base(served)}/")
        assert page.get_by_role("heading", level=1).inner_text().startswith("recordseal")
        assert "operator panel" not in page.title().lower()
        check_page(page, "/", "landing", width)
        page.goto(f"{base(served)}/verify-record")
        check_page(page, "/verify-record", "verify-record", width)
        page.fill("#bundle", served.bundle.decode())
        page.check("#fetch-keys")
        page.check("#fetch-trust")
        page.get_by_role("button", name="Verify").click()
        page.wait_for_selector("#verdict")
        assert page.inner_text("#verdict") == "VERIFIED"
        check_page(page, "/verify-record", "verify-record-result", width)
        page.goto(f"{base(served)}/schema")
        check_page(page, "/schema", "api", width)
        if width == 1280:
            page.screenshot(path=str(screenshot_dir() / "api.png"))
        page.goto(f"{base(served)}/login")
        check_page(page, "/tenants", "login", width)
    finally:
        context.close()


@pytest.fixture(scope="module")
def operator(browser: sync_api.Browser, served: Witnessed) -> Any:
    """The storage state (the session cookie) of an operator signed in with a passkey made
    through the first link."""
    context = browser.new_context()
    try:
        page = context.new_page()
        virtual_authenticator(context, page)
        page.goto(f"{base(served)}/login")
        command = page.locator("#first-link-command").inner_text()
        printed = subprocess.run(
            shlex.split(command), capture_output=True, text=True, env=ENV, check=False, timeout=120
        )
        assert printed.returncode == 0, printed.stderr
        page.goto(printed.stdout.strip().splitlines()[-1])
        page.get_by_role("button", name="Create a passkey").click()
        page.wait_for_url(f"{base(served)}/tenants")
        return context.storage_state()
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_panel_pages_of_a_signed_in_operator_share_it_too(
    browser: sync_api.Browser, served: Witnessed, operator: Any, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, storage_state=operator)
    try:
        page = context.new_page()
        for path, name in (
            ("/tenants", "tenants"),
            ("/tenants/acme", "tenant"),
            ("/tenants/acme/live", "live-tenant"),
            ("/live", "live-service"),
            ("/tokens", "tokens"),
            ("/tenants/acme/streams/orders", "stream"),
        ):
            page.goto(f"{base(served)}{path}")
            assert page.url == f"{base(served)}{path}", "signed in"
            check_page(page, "/tenants", name, width)
            header = page.locator("header.site")
            sign_out = header.get_by_role("button", name="Sign out", exact=True)
            assert sign_out.count() == 1
    finally:
        context.close()

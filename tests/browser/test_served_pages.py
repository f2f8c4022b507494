"""The public pages of a real served instance (``recordseal serve --demo-witness``) in Chromium:
the landing page at ``/`` and where its links lead, and
``/verify-record`` taking a pasted bundle to VERIFIED with the two opt-in fetches and no file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import version

import pytest
from playwright import sync_api

from tests.servers import Witnessed, chromium, screenshot_dir, witnessed_service


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Witnessed]:
    with witnessed_service(tmp_path_factory.mktemp("served-pages")) as service:
        yield service


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: sync_api.Browser) -> Iterator[sync_api.Page]:
    """A page that fails the test on any script error or policy violation."""
    opened = browser.new_page(viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.on(
        "console",
        lambda message: (
            problems.append(message.text) if message.type in ("error", "warning") else None
        ),
    )
    try:
        yield opened
        assert problems == []
    finally:
        opened.close()


def local(service: Witnessed) -> str:
    """The service as a browser names it: localhost is a secure context (WebCrypto)."""
    return service.url.replace("127.0.0.1", "localhost")


def test_the_landing_page_leads_to_the_verify_page_the_docs_and_the_panel(
    page: sync_api.Page, served: Witnessed
) -> None:
    base = local(served)
    page.goto(f"{base}/")
    assert page.title() == "Welcome · recordseal"
    assert page.inner_text("#version") == version("recordseal")
    page.screenshot(path=str(screenshot_dir() / "landing.png"), full_page=True)
    for link, landed_path, heading in (
        ("Verify a record", "/verify-record", "Verify a record"),
        ("API documentation", "/schema", "recordseal"),
        ("Operator panel", "/login", "Sign in"),
    ):
        page.goto(f"{base}/")
        # the landing page's own cards (the site's header links to the same pages)
        page.locator("main").get_by_role("link", name=link, exact=True).click()
        page.wait_for_load_state()
        assert page.url.split("?")[0] == f"{base}{landed_path}", link
        assert heading in page.locator("h1").first.inner_text(), link


def test_a_pasted_bundle_reaches_verified_with_both_documents_fetched(
    page: sync_api.Page, served: Witnessed
) -> None:
    """No file at all: the bundle pasted, the key directory and trust store fetched from the
    service on the user's say-so. Only those two requests leave the page after load."""
    base = local(served)
    page.goto(f"{base}/verify-record")
    page.wait_for_selector("html[data-verifier=browser]")
    requests: list[tuple[str, str]] = []
    page.on("request", lambda request: requests.append((request.method, request.url)))
    assert "means trusting this service" in page.inner_text("#fetch-warning")
    page.check("#fetch-keys")
    page.check("#fetch-trust")
    page.fill("#bundle", served.bundle.decode())
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#result[data-verified-in=browser] #verdict")
    assert page.inner_text("#verdict") == "VERIFIED"
    rows = page.locator("#checks tbody tr")
    assert [rows.nth(i).locator("td").nth(2).inner_text() for i in range(7)] == ["passed"] * 7
    assert "demo witness on this machine" in page.inner_text("#time-bracket")
    assert "trusting this result means trusting this service" in page.inner_text("#provenance")
    assert requests == [("GET", f"{base}/v1/keys"), ("GET", f"{base}/v1/trust")]
    record_id = json.loads(served.bundle)["header"]["record_id"]
    assert not [url for _, url in requests if record_id in url]
    page.screenshot(path=str(screenshot_dir() / "verify-record-fetched.png"), full_page=True)

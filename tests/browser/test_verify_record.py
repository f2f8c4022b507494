"""The /verify-record form in a real browser: Debian's Chromium driven by Playwright.

A granian process serves the verify routes; the test pastes bundles into the text area,
submits, and reads the verdict from the page. Needs ``apt-get install chromium`` and
``pip install playwright`` (no browser download: Playwright drives /usr/bin/chromium).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

# `make test` installs both (Makefile SYSTEM_TOOLS, pyproject dev extras): a missing one fails.
from playwright import sync_api

from tests.servers import ROOT, asgi_server, chromium

from ..verify.factory import World

SCREENSHOTS = ROOT / "docs" / "screenshots"


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.fixture(scope="module")
def server(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browser")
    (folder / "keys.json").write_text(json.dumps(world.keys_document()))
    (folder / "trust.json").write_text(json.dumps(world.trust_document()))
    environment = {
        **os.environ,
        "RECORDSEAL_VERIFY_KEYS": str(folder / "keys.json"),
        "RECORDSEAL_VERIFY_TRUST": str(folder / "trust.json"),
    }
    with asgi_server("tests.browser.verify_app:app", "/verify-record", environment) as port:
        url = f"http://localhost:{port}"
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def _submit(browser: sync_api.Browser, url: str, bundle: bytes) -> tuple[sync_api.Page, str]:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/verify-record")
    page.get_by_label("Bundle").fill(bundle.decode())
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#verdict")
    return page, page.inner_text("#verdict")


def test_a_pasted_bundle_is_verified(browser: sync_api.Browser, server: str, world: World) -> None:
    page, verdict = _submit(browser, server, world.bundle())
    try:
        assert verdict == "VERIFIED"
        rows = page.locator("#checks tbody tr")
        assert rows.count() == 7
        assert rows.nth(6).inner_text().split("\t")[2] == "passed"
        assert "witness.example" in page.inner_text("#time-bracket")
        assert page.inner_text("#disclosed").count("o:/") >= 2
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "verify-record.png"), full_page=True)
    finally:
        page.close()


def test_a_tampered_bundle_fails_in_the_browser(
    browser: sync_api.Browser, server: str, world: World
) -> None:
    document = json.loads(world.bundle())
    document["fields"][0]["value"] = 999999
    page, verdict = _submit(browser, server, json.dumps(document, indent=2).encode())
    try:
        assert verdict == "FAILED"
        assert "failed" in page.locator("#checks tbody tr").nth(1).inner_text()
        assert page.locator("#disclosed").count() == 0
    finally:
        page.close()


def test_the_page_runs_no_script(browser: sync_api.Browser, server: str) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{server}/verify-record")
        assert page.locator("script").count() == 0
        assert page.get_by_label("Bundle").get_attribute("name") == "bundle"
    finally:
        page.close()

"""``GET /`` (issue 30, item 3): a small landing page for browsers, a JSON index for programs,
both pointing at paths that really answer."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.settings import Settings
from recordseal.web.app import create_app

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:  # type: ignore[type-arg]
    data: Path = tmp_path_factory.mktemp("landing")
    with TestClient(create_app(Settings(data_dir=data, seal_interval=0))) as test_client:
        yield test_client


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


#: What each linked path answers a client without a session or token.
EXPECTED = {
    "/verify-record": 200,
    "/tenants": 303,  # a browser is sent to the sign-in page
    "/schema": 200,
    "/schema/openapi.json": 200,
    "/v1/streams": 401,
    "/v1/keys": 200,
    "/v1/trust": 200,
    "/health": 200,
}


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "text/html;q=0.5, */*"])
def test_a_program_gets_the_json_index(client: TestClient, accept: str | None) -> None:  # type: ignore[type-arg]
    answer = client.get("/", headers={} if accept is None else {"Accept": accept})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["vary"] == "Accept"
    index = answer.json()
    assert (index["service"], index["version"]) == ("recordseal", version("recordseal"))
    assert index["attestation"] == "hosted-ingest"
    assert set(index["links"].values()) == set(EXPECTED)
    assert index["links"]["panel"] == "/tenants" and index["links"]["verify"] == "/verify-record"


def test_every_path_of_the_index_answers(client: TestClient) -> None:  # type: ignore[type-arg]
    for path, status in EXPECTED.items():
        answer = client.get(path, headers={"Accept": BROWSER}, follow_redirects=False)
        assert answer.status_code == status, path
    assert client.get("/tenants", headers={"Accept": BROWSER}).url.path == "/login"


def test_a_browser_gets_the_landing_page(client: TestClient) -> None:  # type: ignore[type-arg]
    answer = client.get("/", headers={"Accept": BROWSER})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["vary"] == "Accept"
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["cache-control"] == "no-store"
    links = Links()
    links.feed(answer.text)
    for path in ("/tenants", "/schema", "/verify-record", "/schema/openapi.json", "/v1/trust"):
        assert path in links.hrefs, path
    assert version("recordseal") in answer.text
    assert "<script" not in answer.text and "style=" not in answer.text


def test_only_get_is_answered(client: TestClient) -> None:  # type: ignore[type-arg]
    answer = client.post("/", json={})
    assert (answer.status_code, answer.json()["code"]) == (405, "method_not_allowed")


def test_the_site_has_an_icon(client: TestClient) -> None:  # type: ignore[type-arg]
    """Browsers ask every site for /favicon.ico on their first page: no 404 in their console."""
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/svg+xml"
    assert answer.content.startswith(b"<svg") and b"<script" not in answer.content

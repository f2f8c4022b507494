"""The API page at ``/schema`` (``web/apidocs.py``; docs/api.md, "The page at /schema"): the
site's header, a table of contents grouped by tag, each operation's summary, parameters,
body and answers as tables, examples shown, Markdown rendered with raw HTML escaped, and no
script."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from recordseal.settings import from_env
from recordseal.web.apidocs import render_page
from recordseal.web.app import create_app


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    settings = from_env(data_dir=Path(tmp_path_factory.mktemp("apidocs")) / "data")
    with TestClient(create_app(settings)) as client:
        yield client.get("/schema").text, client.get("/schema/openapi.json").json()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "delete", "patch")
    ]


def test_a_table_of_contents_groups_every_operation_by_tag(
    served: tuple[str, dict[str, Any]],
) -> None:
    page, document = served
    contents = page.split('<nav class="card contents"', 1)[1].split("</nav>", 1)[0]
    tags = list(dict.fromkeys(op["tags"][0] for _, _, op in operations(document)))
    assert tags == ["service", "records", "verification"]
    headings = re.findall(r'<h2 id="tag-([a-z]+)">', page)
    assert headings == tags
    for tag in tags:
        assert f'<a href="#tag-{tag}">{tag.capitalize()}</a>' in contents
    for method, path, operation in operations(document):
        anchor = f"{method}-{path}"
        assert f'<a href="#{anchor}"><code>{method.upper()} {path}</code></a>' in contents
        assert f'<section class="card" id="{anchor}">' in page
        # under its tag's heading: after it, before the next one
        section = page.index(f'id="{anchor}"')
        tag = operation["tags"][0]
        assert page.index(f'id="tag-{tag}"') < section
        following = tags[tags.index(tag) + 1 :]
        assert all(section < page.index(f'id="tag-{t}"') for t in following)


def test_each_operation_shows_its_parameters_body_and_answers_as_tables(
    served: tuple[str, dict[str, Any]],
) -> None:
    page, _ = served
    ingest = page.split('<section class="card" id="post-/v1/records">', 1)[1].split("</section>")[0]
    assert '<p class="summary">Ingest a record</p>' in ingest
    assert "<h4>Parameters</h4>" in ingest and "<td><code>Idempotency-Key</code></td>" in ingest
    assert "<td><code>payload</code></td><td>object</td><td>yes</td>" in ingest
    assert "<td><code>occurred_at</code></td><td>string (date-time)</td><td>yes</td>" in ingest
    assert "<h4>Answers</h4>" in ingest
    assert "<tr><td><strong>201</strong></td>" in ingest
    assert "<tr><td><strong>422</strong></td>" in ingest
    # what the answer holds, nested members by their dotted names
    assert "<td><code>header.ingested_at</code></td>" in ingest
    assert "Codes: <code>stream_not_found</code>" in ingest
    assert "Example: an order" in ingest and "<pre>" in ingest
    assert "$ref" not in page and '"type": "object"' not in page  # no raw JSON Schema


def test_markdown_is_rendered_and_nothing_is_left_in_backticks(
    served: tuple[str, dict[str, Any]],
) -> None:
    page, _ = served
    prose = re.sub(r"<pre>.*?</pre>", "", page, flags=re.DOTALL)
    assert "`" not in prose
    assert "(<code>field</code> names the member)" in page


def test_the_page_has_the_sites_header_and_no_script(served: tuple[str, dict[str, Any]]) -> None:
    page, _ = served
    assert '<a class="brand" href="/">recordseal</a>' in page
    assert '<a href="/schema" aria-current="page">API</a>' in page
    assert "<script" not in page and " style=" not in page and "<style" not in page


def test_markdown_in_a_document_is_text_never_markup() -> None:
    """A description's raw HTML is escaped: the document is data, not the page's markup."""
    document = {
        "info": {"title": "x", "version": "1"},
        "paths": {
            "/a": {
                "get": {
                    "tags": ["things"],
                    "summary": "Read **a** `thing`",
                    "description": "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>",
                    "responses": {"200": {"description": "a [link](/elsewhere)"}},
                }
            }
        },
    }
    page = render_page(document)
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Read <strong>a</strong> <code>thing</code>" in page
    assert '<a href="/elsewhere">link</a>' in page

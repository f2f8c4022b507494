"""The README and docs/ stand alone and stay readable: the README is short and maps what is
there; no page names an issue or a path outside the repository; each page of docs/ opens with
who it is for; every link and anchor resolves. Markdown is read with markdown-it-py (links
and headings as its tokens give them, code blocks excluded)."""

from __future__ import annotations

import re
from functools import cache
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.servers import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted([README, *DOCS.rglob("*.md")])
WHO = "**Who it is for:**"

#: A measured rate or time: "16,345 records/s", "15.9k records/s", "p99 91 and 119 ms", "435 µs".
FIGURE = re.compile(r"\d[\d,.]*k?\s*records/s|\bp99\b[^.]*?\d\s*ms\b|\d\s*µs\b")
#: "issue 12", "Issues 18 and 19", "issue #7": the project's history, not the product's.
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
#: A relative path that climbs (``../shared/spec/x.md``) or an absolute one into a workspace.
CLIMBING = re.compile(r"(?<![\w.])(?:\.\./)+[\w.-][\w./-]*")
WORKSPACE = re.compile(r"(?<![\w/])/(?:work|workspace|home/\w+/src)/[\w./-]+")


def markdown() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


@cache
def tokens(page: Path) -> list[Token]:
    return markdown().parse(page.read_text(encoding="utf-8"))


def slug(text: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def heading_text(inline: Token) -> str:
    kinds = ("text", "code_inline")
    return "".join(child.content for child in inline.children or () if child.type in kinds)


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    stream = tokens(page)
    for opening, inline in pairwise(stream):
        if opening.type != "heading_open":
            continue
        base = slug(heading_text(inline))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(page: Path) -> list[str]:
    hrefs = []
    for token in tokens(page):
        for child in token.children or ():
            if child.type == "link_open":
                hrefs.append(str(child.attrs["href"]))
            elif child.type == "image":  # a screenshot shown on the page
                hrefs.append(str(child.attrs["src"]))
    return hrefs


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_readme_is_under_150_lines() -> None:
    assert len(README.read_text().splitlines()) < 150


def test_the_readme_maps_every_package_and_every_page_of_docs() -> None:
    text = README.read_text()
    code_map = text.split("## Map of the code", 1)[1].split("\n## ", 1)[0]
    docs_map = text.split("## Map of docs/", 1)[1].split("\n## ", 1)[0]
    packages = sorted(
        p.name for p in (ROOT / "python" / "recordseal").iterdir() if (p / "__init__.py").exists()
    )
    missing = [p for p in packages if not re.search(rf"`(python/recordseal/)?{p}/`", code_map)]
    assert not missing, f"packages the README's map of the code leaves out: {missing}"
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    missing = [p for p in pages if f"(docs/{p})" not in docs_map]
    assert not missing, f"pages of docs/ the README's map leaves out: {missing}"
    assert "(docs/specs/" in docs_map and "(docs/screenshots/)" in docs_map


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_no_page_names_an_issue(page: Path) -> None:
    lines = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert not lines, f"{name(page)} tells the project's history:\n" + "\n".join(lines)


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_no_page_points_outside_the_repository(page: Path) -> None:
    text = page.read_text()
    # In prose and links; a shell block's relative paths are relative to where it runs.
    words = "\n".join(t.content for t in tokens(page) if t.type == "inline")
    outside = [
        path
        for path in CLIMBING.findall(words + "\n" + "\n".join(links(page)))
        if not (page.parent / path).resolve().is_relative_to(ROOT)
    ]
    outside += WORKSPACE.findall(text)
    assert not outside, f"{name(page)} names paths outside the repository: {outside}"


@pytest.mark.parametrize("page", [p for p in PAGES if p != README], ids=name)
def test_each_page_of_docs_opens_with_who_it_is_for(page: Path) -> None:
    stream = tokens(page)
    assert stream[0].type == "heading_open" and stream[0].tag == "h1", name(page)
    first = next(t for t in stream[3:] if t.type == "inline")
    assert first.content.startswith(WHO), f"{name(page)} opens with: {first.content[:80]!r}"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for href in links(page):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue  # another site: not this repository's to check
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.is_relative_to(ROOT) or not target.exists():
            broken.append(f"{href}: no such file")
        elif parts.fragment and (target.suffix != ".md" or parts.fragment not in anchors(target)):
            broken.append(f"{href}: no heading #{parts.fragment} in {name(target)}")
    assert not broken, f"{name(page)}:\n" + "\n".join(broken)


def test_the_link_check_sees_headings_and_their_anchors() -> None:
    """The slugs are GitHub's: the check would pass anything if they were not computed."""
    assert "the-quick-start-step-by-step" in anchors(DOCS / "quickstart.md")
    assert "3-the-seven-checks" in anchors(DOCS / "bundle.md")
    assert slug("Backup, restore and failover") == "backup-restore-and-failover"
    assert slug("A verifier without Rust") in anchors(DOCS / "operations.md")


def test_the_design_page_leaves_its_figures_to_the_performance_page() -> None:
    """docs/records.md says what is done and why; the runs that decided it (rates, latencies,
    CPU times) are in docs/performance.md, where the design page links to them."""
    page = DOCS / "records.md"
    lines = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if FIGURE.search(line)
    ]
    assert not lines, "docs/records.md carries figures of runs:\n" + "\n".join(lines)
    assert any(href.startswith("performance.md#") for href in links(page))

"""The header every public page shares: the landing page, the verify page, the API page and the
operator panel (docs/panel.md, "One header for every page").

One list of the public pages, drawn once here: the product's name links home, each other public
page is one link, and the page a reader is on is marked ``aria-current="page"``. The panel's
templates call :func:`site_nav` through a Jinja global (``web/panel/routes.py``); the pages
written in Python (``web/verify.py``, ``web/apidocs.py``) call :func:`site_header`.
"""

from __future__ import annotations

from html import escape

from markupsafe import Markup

#: The public pages after home, in the header's order: (path, link text).
PUBLIC_PAGES: tuple[tuple[str, str], ...] = (
    ("/verify-record", "Verify a record"),
    ("/schema", "API"),
    ("/tenants", "Operator panel"),
)
#: The style sheet every public page loads (the verify page adds its own after it).
STYLE_SHEET = "/static/panel/panel.css"


def site_nav(current: str) -> Markup:
    """The product's name (home) and the public pages; ``current`` is the path of the page
    being shown, one of ``/`` and :data:`PUBLIC_PAGES`'s."""
    home = ' aria-current="page"' if current == "/" else ""
    links = "".join(
        f'<a href="{escape(path)}"{_current(path, current)}>{escape(text)}</a>'
        for path, text in PUBLIC_PAGES
    )
    return Markup(
        f'<a class="brand" href="/"{home}>recordseal</a>\n'
        f'<nav class="public" aria-label="Public pages">{links}</nav>\n'
    )


def site_header(current: str) -> str:
    """The whole header of a page that is not the panel's: :func:`site_nav` alone."""
    return f'<header class="site">\n{site_nav(current)}</header>\n'


def _current(path: str, current: str) -> str:
    return ' aria-current="page"' if path == current else ""

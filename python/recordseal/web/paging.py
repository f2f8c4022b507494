"""The query parameters of the listings (``limit``, ``from_seq``, ``after``: docs/records.md,
"Listing streams and records") and the ``Link: <…>; rel="next"`` of a page (RFC 8288).

A parameter given twice, or not of its form, is refused like one out of its range: 422
``<parameter>_invalid`` naming it and its rule (``services.listing.RULES``), before the store
is asked anything.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from litestar import Request
from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIType, Parameter, Schema

from recordseal.services.listing import DEFAULT_PAGE, MAX_PAGE, MAX_SEQ, RULES, refused
from recordseal.web.openapi import refusal

#: A whole number as a query writes it: digits only (no sign, no space), at most 19 of them.
_WHOLE = re.compile(r"[0-9]{1,19}")

LIMIT_PARAMETER = Parameter(
    name="limit",
    param_in=ParamType.QUERY,
    required=False,
    description=f"how many items the page holds at most ({DEFAULT_PAGE} unless given)",
    schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_PAGE, default=DEFAULT_PAGE),
)
FROM_SEQ_PARAMETER = Parameter(
    name="from_seq",
    param_in=ParamType.QUERY,
    required=False,
    description="the sequence number the page starts at (1 unless given)",
    schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_SEQ, default=1),
)
AFTER_PARAMETER = Parameter(
    name="after",
    param_in=ParamType.QUERY,
    required=False,
    description="the name the page starts after: the last stream of the page before",
    schema=Schema(type=OpenAPIType.STRING),
)
#: The ``Link`` header of a page (``documented(answer_headers=...)``).
LINK_HEADER = {
    "Link": '`<path?query>; rel="next"` when another page follows (RFC 8288), absent on the'
    " last page; the same path is the answer's `next`"
}


def refusal_of(*parameters: str) -> Any:
    """The documented 422 of a route taking ``parameters``."""
    return refusal(
        422,
        "a query parameter is given twice or breaks its rule (`field` names it): "
        + "; ".join(RULES[name] for name in parameters),
        *(f"{name}_invalid" for name in parameters),
    )


def _one(request: Request[Any, Any, Any], name: str) -> str | None:
    values = request.query_params.getall(name, [])
    if len(values) > 1:
        raise refused(name)
    return values[0] if values else None


def whole_number(request: Request[Any, Any, Any], name: str, default: int) -> int:
    """The query parameter ``name`` as a whole number (its range is the service's rule)."""
    value = _one(request, name)
    if value is None:
        return default
    if not _WHOLE.fullmatch(value):
        raise refused(name)
    return int(value)


def text(request: Request[Any, Any, Any], name: str) -> str | None:
    return _one(request, name)


def next_link(path: str, query: dict[str, str | int]) -> str:
    """The relative URL of the next page: ``path`` with ``query``."""
    return f"{path}?{urlencode(query)}"


def link_headers(next_url: str | None) -> dict[str, str]:
    return {} if next_url is None else {"Link": f'<{next_url}>; rel="next"'}

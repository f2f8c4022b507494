"""Security headers: one ``before_send`` hook for every answer of the application.

Every answer gets ``X-Content-Type-Options: nosniff``. Every HTML page also gets, unless its
handler set its own (the ``/verify-record`` page sets a stricter policy with a style hash):

- ``Content-Security-Policy``: scripts, styles, images and fetches from this origin only, no
  inline script or style, no plugins, and ``frame-ancestors 'none'``, so no other site can
  frame a page whose buttons act (revoke a token, sign out everywhere, register a provider);
- ``X-Frame-Options: DENY`` for browsers that predate ``frame-ancestors``;
- ``Referrer-Policy: same-origin``: no URL of the panel leaves the origin. (``no-referrer``
  would also make browsers send ``Origin: null`` on the panel's own ``fetch`` POSTs, which the
  passkey ceremonies check.)
- ``Cache-Control: no-store``: pages show per-user data and CSRF tokens.

``form-action`` is left out on purpose: the login page's sign-on form is answered by a
redirect to the organization's identity provider, and browsers apply ``form-action`` to the
redirects that follow a submission too.
"""

from __future__ import annotations

from litestar.types import Message, Scope

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    b"content-security-policy": CONTENT_SECURITY_POLICY.encode(),
    b"x-frame-options": b"DENY",
    b"referrer-policy": b"same-origin",
    b"cache-control": b"no-store",
}
EVERY_ANSWER = {b"x-content-type-options": b"nosniff"}


async def security_headers(message: Message, scope: Scope) -> None:
    """Adds the headers above to the start of every HTTP answer, keeping any already set."""
    if message["type"] != "http.response.start":
        return
    headers = list(message.get("headers", []))
    present = {name.lower() for name, _ in headers}
    content_type = next((value for name, value in headers if name.lower() == b"content-type"), b"")
    wanted = dict(EVERY_ANSWER)
    if content_type.lower().startswith(b"text/html"):
        wanted.update(PAGE_HEADERS)
    headers.extend((name, value) for name, value in wanted.items() if name not in present)
    message["headers"] = headers

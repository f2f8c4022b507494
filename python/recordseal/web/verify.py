"""Verification over HTTP: ``POST /v1/verify`` (JSON) and the ``/verify-record`` paste-in form,
the routes of the controller :func:`verify_controller` makes for the configured bundle size.

Both are unauthenticated and store nothing. They verify with the service's own key directory
and witness trust store through the online verifier of the typed state (``verifier``, an
``OnlineVerifier`` of ``services.verification``: built once, rebuilt only when keys or logs
change), which decodes and verifies in worker threads. Bundles up to ``max_bundle_bytes`` are
taken (the ``max_bundle_bytes`` setting; docs/bundle.md, "Verifying online"). Whatever the
body holds, it is a bundle to verify, as ``recordseal verify`` reads a file: one that is not
RFC 8259 JSON is a malformed bundle, ``FAILED`` (docs/bundle.md, rule M1), never a 400. Only
what is not a bundle request at all is refused: a body not declared JSON (415) or over the
limit (413).

The form is server-rendered HTML that works without script (every value escaped). With
script, ``static/verify/page.js`` takes the form over and verifies in the page with the
modules next to it (docs/bundle.md, "Verifying in the browser"): the bundle is never sent.
The modules and the style sheet are static files under ``/static/verify/``; the page has no
inline script or style, so its policy is ``script-src 'self'``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
import msgspec
from litestar import Controller, MediaType, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.static_files import create_static_files_router

from recordseal.services.verification import OnlineVerifier
from recordseal.verify import (
    Bundle,
    VerificationResult,
)
from recordseal.verify.report import bracket_holds, not_a_bundle, summary
from recordseal.web import examples
from recordseal.web.bodies import require_json
from recordseal.web.controller import DomainController
from recordseal.web.openapi import BUNDLE_REFUSALS, documented
from recordseal.web.schemas import VerificationOut
from recordseal.web.site import STYLE_SHEET, site_header
from recordseal.web.state import provide_verifier

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def form_limit(max_bundle_bytes: int) -> int:
    """The largest form body: percent-encoding writes each byte of the bundle in at most 3."""
    return 3 * max_bundle_bytes + 4096


def size_text(size: int) -> str:
    """``16 MiB`` for a whole number of MiB, else the bytes."""
    return f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size:,} bytes"


# --- POST /v1/verify -----------------------------------------------------------------------


async def _verify_json(
    request: Request[Any, Any, Any], verifier: OnlineVerifier
) -> Response[bytes]:
    require_json(request)
    # The body is not read by web/bodies.py's JSON reader: the verifier's decoding refuses
    # what it refuses, as a malformed bundle (one verdict for one bundle, wherever checked).
    result = await verifier.verify(await request.body())
    answer = msgspec.json.decode(result.to_json())
    answer["attestation"] = (
        "hosted-ingest"  # docs/records.md, "Endpoints": every answer of the record API
    )
    return Response(msgspec.json.encode(answer), media_type=JSON)


# --- the paste-in form ---------------------------------------------------------------------

#: The browser verifier's modules and the page's style sheet (package data).
STATIC_DIRECTORY = Path(__file__).parent / "static" / "verify"
STATIC_PATH = "/static/verify"
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
        " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


#: Shown beside the opt-in fetches (``recordseal verify --url`` prints the same warning).
FETCH_WARNING = (
    "<strong>Trusting fetched material means trusting this service.</strong> The key "
    "directory and the trust store it publishes are its own word: a service that forged a "
    "record could publish keys and witnesses that vouch for it. The fetches carry nothing of "
    "the bundle. For a check that does not rest on this service, pick files you obtained "
    "another way (the witnesses you trust, a key directory exported earlier)."
)


def _page(body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>Verify a record · recordseal</title>\n"
        f'<link rel="stylesheet" href="{STYLE_SHEET}">\n'
        f'<link rel="stylesheet" href="{STATIC_PATH}/verify.css">\n'
        f'<script type="module" src="{STATIC_PATH}/page.js"></script>\n</head>\n'
        f'<body>\n{site_header("/verify-record")}<main id="main">\n<h1>Verify a record</h1>\n{body}'
        '<div id="result-area" aria-live="polite"></div>\n</main>\n</body>\n</html>\n'
    )


def _form(max_bundle_bytes: int, bundle: str = "") -> str:
    return (
        '<h2 id="paste-heading">Paste a bundle</h2>\n'
        '<p id="mode">Paste a disclosure bundle (JSON). It is sent to this service and checked '
        "against its public key directory and witness trust store; nothing is stored.</p>\n"
        '<form id="verify-form" method="post" action="/verify-record">\n'
        '<label for="bundle">Bundle</label>\n'
        '<textarea id="bundle" name="bundle" rows="14" required spellcheck="false"'
        ' autocomplete="off" aria-describedby="bundle-help">'
        f"{escape(bundle)}</textarea>\n"
        f'<p id="bundle-help">At most {size_text(max_bundle_bytes)}.</p>\n'
        # Shown by page.js only: what the browser verifier takes besides the bundle.
        '<fieldset id="browser-inputs" hidden>\n<legend>Checked in this browser</legend>\n'
        '<p><label for="bundle-file">Bundle file (or drop one on the text area)</label> '
        '<input type="file" id="bundle-file" accept=".json,application/json"></p>\n'
        '<p><label for="keys-file">Key directory (optional, <code>recordseal keys export'
        '</code>)</label> <input type="file" id="keys-file" accept=".json,application/json">'
        "</p>\n"
        '<p><input type="checkbox" id="fetch-keys"> <label for="fetch-keys">Fetch this '
        "service's public key directory instead (<code>GET /v1/keys</code>)</label></p>\n"
        '<p><label for="trust-file">Witness trust store (optional, <code>recordseal keys '
        'export</code>)</label> <input type="file" id="trust-file" '
        'accept=".json,application/json"></p>\n'
        '<p><input type="checkbox" id="fetch-trust"> <label for="fetch-trust">Fetch this '
        "service's witness trust store instead (<code>GET /v1/trust</code>)</label></p>\n"
        f'<p class="warning" id="fetch-warning">{FETCH_WARNING}</p>\n'
        "</fieldset>\n"
        '<button type="submit">Verify</button>\n</form>\n'
    )


def _result_html(result: VerificationResult) -> str:
    """The verdict and a sentence on it (``verify/report.py``'s words, as ``recordseal verify``
    and ``static/verify/page.js`` say them); then, for a bundle, the record, the checks, the
    time bracket unless the bundle failed, and the disclosed fields (docs/bundle.md, "How a
    result is shown")."""
    css = "INCOMPLETE" if result.verdict == "VERIFICATION INCOMPLETE" else result.verdict
    parts = [
        '<section aria-labelledby="result-heading" id="server-result">\n'
        '<h2 id="result-heading">Result</h2>\n'
        '<p class="where">Verified by this service.</p>\n',
        f'<p class="verdict {css}" id="verdict" role="status">{escape(result.verdict)}</p>\n',
        f'<p id="summary">{escape(summary(result))}</p>\n',
    ]
    if not_a_bundle(result) is not None:
        parts.append("</section>\n")
        return "".join(parts)
    if result.record is not None:
        record = result.record
        parts.append(
            "<dl>"
            f"<dt>Tenant</dt><dd>{escape(record.tenant)}</dd>"
            f"<dt>Stream</dt><dd>{escape(record.stream)}</dd>"
            f"<dt>Sequence number</dt><dd>{record.seq}</dd>"
            f"<dt>Record id</dt><dd>{escape(record.record_id)}</dd></dl>\n"
        )
    rows = "".join(
        f'<tr><td>{check.number}</td><td>{escape(check.name)}</td><td class="{check.status}">'
        f'{escape(check.status)}</td><td class="detail">{escape(check.detail)}</td></tr>\n'
        for check in result.checks
    )
    parts.append(
        '<table id="checks"><caption>The seven checks</caption>\n<thead><tr><th scope="col">#'
        '</th><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Detail</th>'
        f"</tr></thead>\n<tbody>\n{rows}</tbody></table>\n"
    )
    bracket = result.time_bracket
    if bracket_holds(result):
        parts.append(
            '<h3>Time bracket</h3>\n<dl id="time-bracket">'
            f"<dt>Not before</dt><dd>{_when(bracket.not_before, bracket.not_before_by)}</dd>"
            f"<dt>Not after</dt><dd>{_when(bracket.not_after, bracket.not_after_by)}</dd></dl>\n"
        )
    if result.disclosed:
        rows = "".join(
            f'<tr><td>{escape(path)}</td><td class="value">'
            f"{escape(msgspec.json.encode(value).decode())}</td></tr>\n"
            for path, value in result.disclosed.items()
        )
        parts.append(
            '<table id="disclosed"><caption>Disclosed fields</caption>\n<thead><tr>'
            '<th scope="col">Path</th><th scope="col">Value</th></tr></thead>\n'
            f"<tbody>\n{rows}</tbody></table>\n"
        )
    parts.append("</section>\n")
    return "".join(parts)


def _when(moment: str | None, by: str | None) -> str:
    if moment is None:
        return "not established"
    return f"{escape(moment)} (by {escape(by or 'unknown')})"


def _html(body: str, status: int = 200) -> Response[str]:
    return Response(_page(body), status_code=status, media_type=MediaType.HTML, headers=_HEADERS)


def _refusal(message: str, status: int, limit: int, bundle: str = "") -> Response[str]:
    return _html(
        f'<p class="error" role="alert">{escape(message)}</p>\n{_form(limit, bundle)}', status
    )


async def _form_submit(
    request: Request[Any, Any, Any], verifier: OnlineVerifier, limit: int
) -> Response[str]:
    too_large = (
        f"The bundle is larger than {size_text(limit)}, the limit of this form. Verify it"
        " offline instead: recordseal verify BUNDLE --keys KEYS --trust TRUST."
    )
    try:
        body = await request.body()
    except HTTPException as error:
        if error.status_code == 413:
            return _refusal(too_large, 413, limit)
        raise
    if request.content_type[0] != FORM:
        return _refusal("Send the form as application/x-www-form-urlencoded.", 415, limit)
    try:
        fields = await anyio.to_thread.run_sync(_parse_form, body)
    except (UnicodeDecodeError, ValueError):
        message = "The form could not be read: it is not valid URL-encoded UTF-8."
        return _refusal(message, 400, limit)
    bundle = fields.get("bundle", [""])[0]
    if not bundle.strip():
        return _refusal("Paste a bundle into the text area first.", 400, limit)
    encoded = bundle.encode("utf-8", "surrogatepass")
    if len(encoded) > limit:
        return _refusal(too_large, 413, limit)
    result = await verifier.verify(encoded)
    return _html(_result_html(result) + _form(limit, bundle))


def _parse_form(body: bytes) -> dict[str, list[str]]:
    return parse_qs(body.decode("ascii"), max_num_fields=8, errors="strict")


#: The browser verifier's static files; served as they are, never with a directory listing.
static_files = create_static_files_router(
    path=STATIC_PATH, directories=[STATIC_DIRECTORY], name="verify-static"
)


def verify_controller(max_bundle_bytes: int) -> type[Controller]:
    """The verification routes for bundles up to ``max_bundle_bytes`` (the setting), taking
    the online verifier of the application's typed state. The static files of the browser
    verifier are :data:`static_files`, registered beside it."""

    class VerifyController(DomainController):
        """``POST /v1/verify`` and the ``/verify-record`` form; public, nothing stored."""

        dependencies = {"verifier": Provide(provide_verifier, sync_to_thread=False)}  # noqa: RUF012

        @post(
            "/v1/verify",
            status_code=200,
            tags=["verification"],
            request_max_body_size=max_bundle_bytes,
            **documented(
                summary="Verify a disclosure bundle",
                body=Bundle,
                examples={"a bundle": examples.bundle()},
                body_description=(
                    f"a disclosure bundle (docs/bundle.md), at most {size_text(max_bundle_bytes)};"
                    " any body within the limit is verified (a malformed one is FAILED)"
                ),
                body_refusals=BUNDLE_REFUSALS,
                answers={200: (VerificationOut, "the verification result, whatever the verdict")},
            ),
        )
        async def verify_api(
            self, request: Request[Any, Any, Any], verifier: NamedDependency[OnlineVerifier]
        ) -> Response[bytes]:
            """Verify a bundle with the service's key directory and trust store.

            The body must be declared JSON (415 otherwise). Then the answer is 200 with the
            result for every body, as ``recordseal verify`` gives it: one that is not RFC 8259
            JSON or not of the bundle's shape is malformed (verdict ``FAILED``, the reason in
            check 1); a body over the limit (the ``max_bundle_bytes`` setting) is 413.
            """
            return await _verify_json(request, verifier)

        @get("/verify-record", include_in_schema=False)
        async def verify_form(self) -> Response[str]:
            """The paste-in form."""
            return _html(_form(max_bundle_bytes))

        @post(
            "/verify-record",
            status_code=200,
            include_in_schema=False,
            request_max_body_size=form_limit(max_bundle_bytes),
        )
        async def verify_form_submit(
            self, request: Request[Any, Any, Any], verifier: NamedDependency[OnlineVerifier]
        ) -> Response[str]:
            """Verify the pasted bundle and show the verdict, the checks and the time bracket."""
            return await _form_submit(request, verifier, max_bundle_bytes)

    return VerifyController

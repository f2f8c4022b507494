"""The RFC 3161 client: asks a time-stamping authority over HTTP for a token over a root,
and verifies the answer (``tsa.py``) before anyone keeps it."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
from cryptography import x509

from recordseal.tlog.errors import TlogError
from recordseal.tlog.tsa import Timestamp, build_request, verify_response

QUERY_MEDIA_TYPE = "application/timestamp-query"
REPLY_MEDIA_TYPES = frozenset({"application/timestamp-reply", "application/timestamp-response"})
MAX_RESPONSE_BYTES = 1 << 20


async def timestamp_root(
    url: str,
    root: bytes,
    trust_roots: Sequence[x509.Certificate],
    *,
    intermediates: Sequence[x509.Certificate] = (),
    http: httpx.AsyncClient | None = None,
    timeout_seconds: float = 10.0,
) -> Timestamp:
    """Ask the TSA at ``url`` to time-stamp ``root``, and verify its answer."""
    request = build_request(root)
    headers = {"Content-Type": QUERY_MEDIA_TYPE, "Accept": "application/timestamp-reply"}
    try:
        if http is None:
            async with httpx.AsyncClient(timeout=timeout_seconds) as client:
                reply = await client.post(url, content=request.der, headers=headers)
        else:
            reply = await http.post(
                url, content=request.der, headers=headers, timeout=timeout_seconds
            )
    except httpx.HTTPError as error:
        raise TlogError(
            "tsa_unavailable", f"the TSA at {url} did not answer: {error}", {"url": url}
        ) from error
    media_type = reply.headers.get("content-type", "").split(";")[0].strip().lower()
    if reply.status_code != 200 or media_type not in REPLY_MEDIA_TYPES:
        raise TlogError(
            "tsa_unavailable",
            f"the TSA at {url} answered {reply.status_code} {media_type or 'without a type'}",
            {"url": url, "status": reply.status_code, "content_type": media_type},
        )
    if len(reply.content) > MAX_RESPONSE_BYTES:
        raise TlogError("timestamp_malformed", "the TSA's response is larger than 1 MiB")
    return verify_response(reply.content, request, trust_roots, intermediates)

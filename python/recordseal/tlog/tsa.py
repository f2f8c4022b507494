"""RFC 3161 time-stamps of a 32-byte root: the request, and the verification of a response
or a stored token (offline: the HTTP exchange is ``recordseal.network.tsa_client``'s).

The request's messageImprint is (SHA-256, root): the root is already a SHA-256-based hash,
so the TSA sees it unchanged and learns nothing else. Verification requires status
``granted``, the SHA-256 imprint equal to the root, the request's nonce, a valid CMS
signature, and a TSA certificate with the critical ``timeStamping`` EKU that chains to a
configured trust root. ASN.1 comes from asn1crypto (request, lenient response parsing) and
rfc3161-client (signature, chain and EKU checks).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from asn1crypto import cms, core, tsp  # type: ignore[import-untyped]
from cryptography import x509
from rfc3161_client import (
    TimeStampResponse,
    VerificationError,
    VerifierBuilder,
    decode_timestamp_response,
)

from .errors import TlogError

SHA256_OID = "2.16.840.1.101.3.4.2.1"
ROOT_SIZE = 32


class _TimeStampResp(tsp.TimeStampResp):  # type: ignore[misc]
    """RFC 3161 TimeStampResp; asn1crypto's own omits that the token is OPTIONAL."""

    _fields = [  # noqa: RUF012 - asn1crypto's schema attribute
        ("status", tsp.PKIStatusInfo),
        ("time_stamp_token", cms.ContentInfo, {"optional": True}),
    ]


@dataclass(frozen=True, slots=True)
class TimestampRequest:
    """A DER TimeStampReq for ``root`` and the nonce it carries."""

    root: bytes
    nonce: int
    der: bytes


@dataclass(frozen=True, slots=True)
class Timestamp:
    """A verified time-stamp: the TSA's time and the DER TimeStampToken that proves it."""

    gen_time: datetime
    token: bytes
    serial_number: int
    policy: str
    tsa_subject: str


def build_request(root: bytes, nonce: int | None = None) -> TimestampRequest:
    """TimeStampReq v1: imprint (sha256, root), a random 63-bit nonce, certReq true."""
    if len(root) != ROOT_SIZE:
        raise TlogError("root_invalid", f"root has {len(root)} bytes, not {ROOT_SIZE}")
    nonce = secrets.randbelow(2**63 - 1) + 1 if nonce is None else nonce
    request = tsp.TimeStampReq(
        {
            "version": "v1",
            "message_imprint": {
                "hash_algorithm": {"algorithm": "sha256"},
                "hashed_message": root,
            },
            "nonce": nonce,
            "cert_req": True,
        }
    )
    return TimestampRequest(root, nonce, request.dump())


def verify_response(
    response: bytes,
    request: TimestampRequest,
    trust_roots: Sequence[x509.Certificate],
    intermediates: Sequence[x509.Certificate] = (),
) -> Timestamp:
    """Verify a DER TimeStampResp answering ``request``; return its time and token."""
    parsed = _load(_TimeStampResp, response, "TimeStampResp")
    try:
        status = parsed["status"]
        outcome = str(status["status"].native)
        if outcome != "granted":
            evidence = {
                "status": outcome,
                "text": "; ".join(str(t) for t in (status["status_string"].native or [])),
                "failure": ", ".join(sorted(status["fail_info"].native or [])),
            }
            raise TlogError("timestamp_rejected", f"the TSA answered {outcome}", evidence)
        token = parsed["time_stamp_token"]
    except TlogError:
        raise
    except _PARSE_ERRORS as error:
        raise TlogError("timestamp_malformed", f"not a valid TimeStampResp: {error}") from error
    if not isinstance(token, cms.ContentInfo):
        raise TlogError("timestamp_malformed", "a granted response carries no token")
    return _verify_token(token, request.root, request.nonce, trust_roots, intermediates)


def verify_token(
    token: bytes,
    root: bytes,
    trust_roots: Sequence[x509.Certificate],
    intermediates: Sequence[x509.Certificate] = (),
) -> Timestamp:
    """Verify a stored DER TimeStampToken over ``root`` (offline; no nonce to check)."""
    content_info = _load(cms.ContentInfo, token, "TimeStampToken")
    return _verify_token(content_info, root, None, trust_roots, intermediates)


#: What asn1crypto and rfc3161-client raise on input they cannot parse (they parse lazily).
_PARSE_ERRORS = (ValueError, TypeError, KeyError, IndexError, OverflowError)


def _load(spec: type[cms.ContentInfo | tsp.TimeStampResp], der: bytes, what: str) -> Any:
    try:
        return spec.load(der, strict=True)
    except _PARSE_ERRORS as error:
        raise TlogError("timestamp_malformed", f"not a valid {what}: {error}") from error


def _der_token(token: cms.ContentInfo) -> bytes:
    """The token with its certificate SET OF in DER order (OpenSSL does not sort it).

    The certificates are outside the signed content, so reordering them changes no signature.
    """
    if token["content_type"].native != "signed_data":
        raise TlogError("timestamp_malformed", "the token is not CMS SignedData")
    signed = token["content"]
    certificates = signed["certificates"]
    if certificates.contents is None or len(certificates) < 2:
        return bytes(token.dump())
    names = ("version", "digest_algorithms", "encap_content_info", "crls", "signer_infos")
    fields = {name: signed[name] for name in names if not isinstance(signed[name], core.Void)}
    rebuilt = cms.SignedData({**fields, "certificates": cms.CertificateSet(list(certificates))})
    return bytes(cms.ContentInfo({"content_type": "signed_data", "content": rebuilt}).dump())


def _verify_token(
    token: cms.ContentInfo,
    root: bytes,
    nonce: int | None,
    trust_roots: Sequence[x509.Certificate],
    intermediates: Sequence[x509.Certificate],
) -> Timestamp:
    if len(root) != ROOT_SIZE:
        raise TlogError("root_invalid", f"root has {len(root)} bytes, not {ROOT_SIZE}")
    if not trust_roots:
        raise TlogError("trust_roots_missing", "no TSA trust root is configured")
    try:
        der = _der_token(token)
        # rfc3161-client verifies responses: wrap the token in a granted one.
        wrapped = tsp.TimeStampResp(
            {"status": {"status": "granted"}, "time_stamp_token": cms.ContentInfo.load(der)}
        ).dump()
        response: TimeStampResponse = decode_timestamp_response(wrapped)
        return _check(response, root, nonce, trust_roots, intermediates, der)
    except TlogError:
        raise
    except _PARSE_ERRORS as error:
        raise TlogError("timestamp_malformed", f"the token does not parse: {error}") from error


def _check(
    response: TimeStampResponse,
    root: bytes,
    nonce: int | None,
    trust_roots: Sequence[x509.Certificate],
    intermediates: Sequence[x509.Certificate],
    der: bytes,
) -> Timestamp:
    info = response.tst_info
    imprint = info.message_imprint
    evidence: dict[str, str | int] = {
        "serial_number": info.serial_number,
        "imprint": imprint.message.hex(),
        "root": root.hex(),
    }
    if imprint.hash_algorithm.dotted_string != SHA256_OID:
        message = f"the token's imprint uses {imprint.hash_algorithm.dotted_string}, not SHA-256"
        raise TlogError("timestamp_invalid", message, evidence)
    builder = VerifierBuilder(roots=list(trust_roots), intermediates=list(intermediates))
    if nonce is not None:
        builder = builder.nonce(nonce)
    try:
        builder.build().verify(response, root)
    except VerificationError as error:
        raise TlogError(
            "timestamp_invalid", f"the time-stamp does not verify: {error}", evidence
        ) from error
    signer = _signer_subject(response)
    gen_time = info.gen_time
    if gen_time.tzinfo is None:
        gen_time = gen_time.replace(tzinfo=UTC)
    return Timestamp(gen_time, der, info.serial_number, info.policy.dotted_string, signer)


def _signer_subject(response: TimeStampResponse) -> str:
    signer = next(iter(response.signed_data.signer_infos))
    for der in response.signed_data.certificates:
        certificate = x509.load_der_x509_certificate(der)
        if (certificate.issuer, certificate.serial_number) == (signer.issuer, signer.serial_number):
            return certificate.subject.rfc4514_string()
    return ""

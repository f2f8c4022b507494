"""RFC 3161 against a real local TSA (``openssl ts``), see tsa_support.py."""

from __future__ import annotations

import asyncio
import hashlib
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from asn1crypto import tsp  # type: ignore[import-untyped]

from recordseal.network.tsa_client import timestamp_root
from recordseal.tlog import TlogError
from recordseal.tlog.tsa import Timestamp, build_request, verify_response, verify_token

from .tsa_support import POLICY, Authority, make_authority, openssl_reply, serve

ROOT = hashlib.sha256(b"recordseal test root").digest()


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_authority(tmp_path_factory.mktemp("tsa"))


@pytest.fixture(scope="module")
def tsa_url(authority: Authority) -> Iterator[str]:
    with serve(authority) as url:
        yield url


@pytest.fixture(scope="module")
def stamped(tsa_url: str, authority: Authority) -> Timestamp:
    return asyncio.run(timestamp_root(f"{tsa_url}/tsa", ROOT, [authority.ca]))


def refused(call: object, *args: object) -> TlogError:
    with pytest.raises(TlogError) as error:
        call(*args)  # type: ignore[operator]
    return error.value


def test_request_is_sha256_of_the_root_with_nonce_and_cert_req() -> None:
    request = build_request(ROOT)
    parsed = tsp.TimeStampReq.load(request.der)
    assert parsed["version"].native == "v1"
    imprint = parsed["message_imprint"]
    assert imprint["hash_algorithm"]["algorithm"].dotted == "2.16.840.1.101.3.4.2.1"
    assert imprint["hashed_message"].native == ROOT
    assert parsed["nonce"].native == request.nonce > 0
    assert parsed["cert_req"].native is True
    assert build_request(ROOT).nonce != request.nonce
    assert refused(build_request, ROOT[:31]).code == "root_invalid"


def test_openssl_reads_the_request(tmp_path: Path) -> None:
    query = tmp_path / "query.tsq"
    query.write_bytes(build_request(ROOT).der)
    shown = subprocess.run(
        ["openssl", "ts", "-query", "-in", str(query), "-text"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert "Hash Algorithm: sha256" in shown
    assert "Certificate required: yes" in shown
    dump = [line.split(" - ", 1)[1][:48] for line in shown.splitlines() if " - " in line]
    assert "".join(re.findall("[0-9a-f]{2}", "".join(dump))) == ROOT.hex()


def test_timestamp_from_a_real_tsa(stamped: Timestamp, authority: Authority) -> None:
    now = datetime.now(UTC)
    assert now - timedelta(minutes=5) < stamped.gen_time <= now + timedelta(seconds=5)
    assert stamped.gen_time.tzinfo is not None
    assert stamped.policy == POLICY
    assert stamped.tsa_subject == "CN=Test TSA"
    again = verify_token(stamped.token, ROOT, [authority.ca])
    assert (again.gen_time, again.serial_number) == (stamped.gen_time, stamped.serial_number)


def test_openssl_verifies_the_returned_token(
    stamped: Timestamp, authority: Authority, tmp_path: Path
) -> None:
    token = tmp_path / "token.der"
    token.write_bytes(stamped.token)
    result = subprocess.run(
        ["openssl", "ts", "-verify", "-token_in", "-in", str(token), "-digest", ROOT.hex(),
         "-CAfile", str(authority.directory / "ca.pem")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert "Verification: OK" in result.stdout, result.stderr


def test_untrusted_root_is_refused(stamped: Timestamp, tmp_path: Path) -> None:
    stranger = make_authority(tmp_path / "other", "Other")
    error = refused(verify_token, stamped.token, ROOT, [stranger.ca])
    assert error.code == "timestamp_invalid"
    assert refused(verify_token, stamped.token, ROOT, []).code == "trust_roots_missing"


def test_other_root_is_refused(stamped: Timestamp, authority: Authority) -> None:
    other = hashlib.sha256(b"another root").digest()
    error = refused(verify_token, stamped.token, other, [authority.ca])
    assert error.code == "timestamp_invalid"
    assert error.evidence["imprint"] == ROOT.hex()


def test_nonce_must_match(authority: Authority) -> None:
    request = build_request(ROOT)
    reply = openssl_reply(authority.directory / "sha256.cnf", request.der)
    verify_response(reply, request, [authority.ca])
    replayed = type(request)(request.root, request.nonce + 1, request.der)
    assert refused(verify_response, reply, replayed, [authority.ca]).code == "timestamp_invalid"


def test_tampered_replies_are_refused(authority: Authority) -> None:
    request = build_request(ROOT)
    reply = openssl_reply(authority.directory / "sha256.cnf", request.der)
    for position in range(40, len(reply), max(1, len(reply) // 60)):
        tampered = bytearray(reply)
        tampered[position] ^= 0x01
        try:
            verify_response(bytes(tampered), request, [authority.ca])
        except TlogError as error:
            assert error.code in {"timestamp_invalid", "timestamp_malformed", "timestamp_rejected"}
        # A flip inside the unsigned certificate set of the CA may leave a valid reply.
    for garbage in (b"", b"\x30\x00", reply[:-1], reply + b"\x00"):
        code = refused(verify_response, garbage, request, [authority.ca]).code
        assert code in {"timestamp_malformed", "timestamp_invalid"}


def test_signature_flip_is_refused(authority: Authority) -> None:
    request = build_request(ROOT)
    reply = bytearray(openssl_reply(authority.directory / "sha256.cnf", request.der))
    reply[-5] ^= 0x01  # inside the SignerInfo's signature, the last field
    error = refused(verify_response, bytes(reply), request, [authority.ca])
    assert error.code in {"timestamp_invalid", "timestamp_malformed"}


def test_rejection_status_is_reported(tsa_url: str, authority: Authority) -> None:
    with pytest.raises(TlogError) as error:
        asyncio.run(timestamp_root(f"{tsa_url}/sha512-only", ROOT, [authority.ca]))
    assert error.value.code == "timestamp_rejected"
    assert error.value.evidence["status"] == "rejection"
    assert "bad_alg" in str(error.value.evidence["failure"])


def test_http_failures(tsa_url: str, authority: Authority) -> None:
    with pytest.raises(TlogError) as error:
        asyncio.run(timestamp_root(f"{tsa_url}/missing", ROOT, [authority.ca]))
    assert (error.value.code, error.value.evidence["status"]) == ("tsa_unavailable", 404)
    with pytest.raises(TlogError) as error:
        asyncio.run(timestamp_root("http://127.0.0.1:1/tsa", ROOT, [authority.ca]))
    assert error.value.code == "tsa_unavailable"


def test_shared_http_client(tsa_url: str, authority: Authority) -> None:
    async def stamp() -> Timestamp:
        async with httpx.AsyncClient() as http:
            return await timestamp_root(f"{tsa_url}/tsa", ROOT, [authority.ca], http=http)

    assert asyncio.run(stamp()).tsa_subject == "CN=Test TSA"


def test_changed_gen_time_is_refused(authority: Authority) -> None:
    request = build_request(ROOT)
    reply = openssl_reply(authority.directory / "sha256.cnf", request.der)
    at = reply.index(b"\x18\x0f")  # the GeneralizedTime genTime inside the signed TSTInfo
    year = reply[at + 2 : at + 6]
    changed = reply[: at + 2] + str(int(year) - 1).encode() + reply[at + 6 :]
    error = refused(verify_response, changed, request, [authority.ca])
    assert error.code == "timestamp_invalid"

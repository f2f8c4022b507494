"""RFC 3161 receipts: tokens from a real local TSA (``openssl ts``) over the sealing root."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from recordseal.tlog.tsa import build_request, verify_response
from recordseal.verify import verify_bundle

from ..tlog.tsa_support import Authority, make_authority, openssl_reply
from .conftest import statuses, tampered
from .factory import WITNESS, World

TSA = "tsa.example"


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_authority(tmp_path_factory.mktemp("tsa"))


@pytest.fixture(scope="module")
def token(world: World, authority: Authority) -> bytes:
    request = build_request(world.sealing_root())
    reply = openssl_reply(authority.directory / "sha256.cnf", request.der)
    return verify_response(reply, request, [authority.ca]).token


def _pem(authority: Authority) -> str:
    return authority.ca.public_bytes(Encoding.PEM).decode()


def test_a_trusted_time_stamp_vouches_alone(
    world: World, authority: Authority, token: bytes
) -> None:
    bundle = world.bundle(cosigned=False, timestamps=[(TSA, token)])
    trust = world.trust(witnesses=[], authorities=[(TSA, _pem(authority))])
    result = verify_bundle(bundle, world.keys(), trust)
    assert result.verdict == "VERIFIED", result.checks
    assert result.time_bracket.not_after_by == TSA
    assert "1 trusted witness vouches" in result.check(5).detail


def test_a_witness_and_a_time_stamp_make_a_quorum_of_two(
    world: World, authority: Authority, token: bytes
) -> None:
    bundle = world.bundle(timestamps=[(TSA, token)])
    trust = world.trust(quorum=2, authorities=[(TSA, _pem(authority))])
    result = verify_bundle(bundle, world.keys(), trust)
    assert result.verdict == "VERIFIED", result.checks
    assert result.check(5).detail.endswith(f"{TSA}, {WITNESS}")
    # the earliest trusted time on the sealing checkpoint is the upper bound
    assert result.time_bracket.not_after_by == WITNESS


def test_a_token_from_an_unknown_authority_is_ignored(world: World, token: bytes) -> None:
    bundle = world.bundle(timestamps=[("unknown.example", token)])
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "VERIFIED"


def _flip_token(document: dict) -> None:  # type: ignore[type-arg]
    der = bytearray(base64.b64decode(document["seal"]["timestamps"][0]["token"]))
    der[-10] ^= 0x01  # inside the CMS signature
    document["seal"]["timestamps"][0]["token"] = base64.b64encode(bytes(der)).decode()


def test_a_tampered_token_fails_check_5(world: World, authority: Authority, token: bytes) -> None:
    bundle = tampered(world.bundle(timestamps=[(TSA, token)]), _flip_token)
    trust = world.trust(authorities=[(TSA, _pem(authority))])
    result = verify_bundle(bundle, world.keys(), trust)
    assert result.verdict == "FAILED"
    assert statuses(result, "failed") == {5}
    assert f"the token of {TSA}" in result.check(5).detail


def test_a_token_over_another_root_fails(world: World, authority: Authority, token: bytes) -> None:
    other = World()
    bundle = other.bundle(timestamps=[(TSA, token)])
    trust = other.trust(authorities=[(TSA, _pem(authority))])
    result = verify_bundle(bundle, other.keys(), trust)
    assert statuses(result, "failed") == {5}


def test_a_token_under_another_trust_root_fails(world: World, token: bytes, tmp_path: Path) -> None:
    stranger = make_authority(tmp_path / "other", name="Other")
    trust = world.trust(authorities=[(TSA, _pem(stranger))])
    result = verify_bundle(world.bundle(timestamps=[(TSA, token)]), world.keys(), trust)
    assert statuses(result, "failed") == {5}
    assert "timestamp_invalid" in result.check(5).detail


def test_the_bundle_carries_the_token_as_base64_der(world: World, token: bytes) -> None:
    document = json.loads(world.bundle(timestamps=[(TSA, token)]))
    assert document["seal"]["timestamps"] == [
        {"authority": TSA, "token": base64.b64encode(token).decode()}
    ]

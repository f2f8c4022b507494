"""RFC 3161 tokens in the browser, which does not check them (docs/bundle.md, "Verifying in
the browser"): check 5 always names them, and what the page loses for it is what the page
documents — the authority's time as the upper bound, and a tampered token's failure.

The tokens are real: ``openssl ts`` over the sealing root (tests/tlog/tsa_support.py).
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from recordseal.tlog.tsa import build_request, verify_response
from recordseal.verify import (
    VerificationResult,
    load_key_directory,
    load_trust_store,
)
from recordseal.verify import (
    verify_bundle as verify_offline,
)
from recordseal.verify.encoding import format_instant
from tests.tlog.tsa_support import Authority, make_authority, openssl_reply
from tests.verify.conftest import tampered
from tests.verify.factory import World
from tests.verify.test_tamper import _edit_proof, _first_proof_hash

from .conftest import Harness

TSA = "tsa.example"
NOT_CHECKED = f"RFC 3161 token of {TSA} not checked in the browser"


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_authority(tmp_path_factory.mktemp("tsa"))


@pytest.fixture(scope="module")
def token(world: World, authority: Authority) -> bytes:
    request = build_request(world.sealing_root())
    reply = openssl_reply(authority.directory / "sha256.cnf", request.der)
    return verify_response(reply, request, [authority.ca]).token


def _trust(world: World, authority: Authority) -> str:
    pem = authority.ca.public_bytes(Encoding.PEM).decode()
    return json.dumps(world.trust_document(authorities=[(TSA, pem)]))


def _both(
    harness: Harness, world: World, bundle: bytes, trust: str, **keys_options: str
) -> tuple[VerificationResult, dict[str, Any]]:
    """The offline result and the browser's, with the same inputs and clock."""
    keys = json.dumps(world.keys_document(**keys_options))
    now = datetime.now(UTC)
    offline = verify_offline(bundle, load_key_directory(keys), load_trust_store(trust), now=now)
    (browser,) = harness(
        "verifyAll",
        [{"bundle": bundle.hex(), "keys": keys, "trust": trust, "now": now.timestamp()}],
    )
    return offline, browser


def _check(result: dict[str, Any], number: int) -> dict[str, str]:
    found: dict[str, str] = result["checks"][number - 1]
    return found


def test_a_failed_check_5_still_names_the_token_it_did_not_check(
    harness: Harness, world: World, authority: Authority, token: bytes
) -> None:
    """A trusted witness's cosignature that does not verify fails check 5 in both; the page's
    detail also says the token was not checked."""

    def break_cosignature(document: dict[str, Any]) -> None:
        seal = document["seal"]
        lines = str(seal["proof"]).split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(f"— {world.witness.name} "))
        raw = bytearray(base64.b64decode(lines[at].rsplit(" ", 1)[1]))
        raw[-1] ^= 1  # the signature's last byte: the key ID stays, the signature breaks
        lines[at] = lines[at].rsplit(" ", 1)[0] + " " + base64.b64encode(bytes(raw)).decode()
        seal["proof"] = "\n".join(lines)

    bundle = tampered(world.bundle(timestamps=[(TSA, token)]), break_cosignature)
    offline, browser = _both(harness, world, bundle, _trust(world, authority))
    assert offline.check(5).status == _check(browser, 5)["status"] == "failed"
    assert "cosignature_invalid" in _check(browser, 5)["detail"]
    assert NOT_CHECKED in _check(browser, 5)["detail"]


def test_the_authority_time_is_lost_as_the_upper_bound(
    harness: Harness, world: World, authority: Authority, token: bytes
) -> None:
    """Vouched for by the authority alone: offline its genTime bounds the record; the page,
    which cannot read it, has no upper bound and says why."""
    bundle = world.bundle(cosigned=False, timestamps=[(TSA, token)])
    offline, browser = _both(harness, world, bundle, _trust(world, authority))
    assert offline.verdict == "VERIFIED"
    assert offline.time_bracket.not_after_by == TSA
    assert browser["verdict"] == "VERIFICATION INCOMPLETE"
    assert browser["time_bracket"]["not_after"] is None
    assert _check(browser, 7)["status"] == "unchecked"
    assert NOT_CHECKED in _check(browser, 5)["detail"]


def test_a_tampered_token_fails_offline_and_passes_in_the_page(
    harness: Harness, world: World, authority: Authority, token: bytes
) -> None:
    """The witness's cosignature meets the quorum; the token's signature is broken. Offline
    it is FAILED (rule 5.4); the page, which never reads tokens, says VERIFIED and names the
    token it did not check — the difference docs/bundle.md states."""
    broken = bytearray(token)
    broken[-1] ^= 1  # the CMS signature's last byte
    bundle = world.bundle(timestamps=[(TSA, bytes(broken))])
    offline, browser = _both(harness, world, bundle, _trust(world, authority))
    assert offline.verdict == "FAILED"
    assert offline.check(5).status == "failed"
    assert browser["verdict"] == "VERIFIED"
    assert NOT_CHECKED in _check(browser, 5)["detail"]


@pytest.mark.parametrize(
    "members",
    [("compromised_at",), ("log_compromised_at",), ("compromised_at", "log_compromised_at")],
    ids=["header key", "log key", "both keys"],
)
def test_a_compromise_only_the_token_rules_out_is_unchecked_in_the_page(
    harness: Harness, world: World, authority: Authority, token: bytes, members: tuple[str, ...]
) -> None:
    """The keys compromised an hour from now; only the authority vouches for the sealing
    checkpoint, its genTime now. Offline the token shows the record before the compromise;
    the page, which cannot read it, neither trusts nor fails the signatures."""
    bundle = world.bundle(cosigned=False, timestamps=[(TSA, token)], coverage=None)
    later = format_instant(datetime.now(UTC) + timedelta(hours=1))
    compromised = dict.fromkeys(members, later)
    offline, browser = _both(harness, world, bundle, _trust(world, authority), **compromised)
    assert offline.verdict == "VERIFIED", [check.detail for check in offline.checks]
    numbers = {"compromised_at": 3, "log_compromised_at": 4}
    for number in (numbers[member] for member in members):
        assert _check(browser, number)["status"] == "unchecked"
        assert NOT_CHECKED in _check(browser, number)["detail"]
        assert f"compromised at {later}" in _check(browser, number)["detail"]
    assert browser["verdict"] == "VERIFICATION INCOMPLETE"
    # without the token the page fails them, as recordseal verify does
    bare = world.bundle(cosigned=False, coverage=None)
    offline, browser = _both(harness, world, bare, _trust(world, authority), **compromised)
    for number in (numbers[member] for member in members):
        assert offline.check(number).status == _check(browser, number)["status"] == "failed"


def test_a_token_does_not_stand_for_an_unverified_seal(
    harness: Harness, world: World, authority: Authority, token: bytes
) -> None:
    """The header key compromised later, the token on the checkpoint, but the seal's
    inclusion proof broken: check 4 fails in both, so no witness time can show the record,
    and check 3 fails in both."""

    broken = _edit_proof(_first_proof_hash)
    bundle = tampered(world.bundle(cosigned=False, timestamps=[(TSA, token)]), broken)
    later = format_instant(datetime.now(UTC) + timedelta(hours=1))
    trust = _trust(world, authority)
    offline, browser = _both(harness, world, bundle, trust, compromised_at=later)
    assert offline.check(4).status == _check(browser, 4)["status"] == "failed"
    assert offline.check(3).status == _check(browser, 3)["status"] == "failed"

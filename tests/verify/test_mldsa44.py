"""Dual-signed checkpoints and ML-DSA-44 cosignatures in bundles (docs/bundle.md rules 4.9 and
5.6): the shared vectors of tests/vectors/mldsa44.json (the browser runs them too:
tests/verify_js/test_vectors.py), and the trust store's ``checkpoint_signatures``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recordseal.tlog import MLDSA44CosignatureSigner
from recordseal.verify import (
    BundleError,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)

from .factory import ORIGIN, WITNESS, World

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "mldsa44.json").read_text(encoding="utf-8")
)
NOW = datetime.fromisoformat(VECTORS["now"])
Doc = dict[str, Any]


@pytest.mark.parametrize("case", VECTORS["bundles"], ids=lambda case: case["name"])
def test_the_expected_outcome(case: Doc) -> None:
    trust = None if case["trust"] is None else load_trust_store(json.dumps(case["trust"]))
    result = verify_bundle(
        json.dumps(case["bundle"]).encode(), load_key_directory(json.dumps(case["keys"])), trust,
        now=NOW,
    )  # fmt: skip
    assert result.verdict == case["expected"]["verdict"], [c.detail for c in result.checks]
    assert [check.status for check in result.checks] == case["expected"]["statuses"]


def _pq_world() -> World:
    return World(
        log_mldsa=MLDSA44CosignatureSigner.generate(ORIGIN, clock=None),
        witness=MLDSA44CosignatureSigner.generate(WITNESS),
    )


def test_check_4_names_the_algorithms_that_signed() -> None:
    world = _pq_world()
    result = verify_bundle(world.bundle(), world.keys(), world.trust())
    assert result.verdict == "VERIFIED", [c.detail for c in result.checks]
    assert result.check(4).detail.endswith("(signed with Ed25519 and ML-DSA-44)")
    assert "1 trusted witness vouches" in result.check(5).detail


def test_a_missing_required_signature_is_named() -> None:
    old = World()  # an Ed25519-only log: a bundle made before ML-DSA-44
    trust = old.trust(checkpoint_signatures=["Ed25519", "ML-DSA-44"])
    result = verify_bundle(old.bundle(), old.keys(), trust)
    assert result.check(4).status == "unchecked"
    assert "the directory has no ML-DSA-44 key for 'recordseal.local/acme/default'" in (
        result.check(4).detail
    )
    world = _pq_world()
    document = world.keys_document()
    result = verify_bundle(
        old.bundle(), old.keys(), world.trust(checkpoint_signatures=["ML-DSA-44"])
    )
    assert "the directory has no ML-DSA-44 key" in result.check(4).detail
    document["logs"][0]["vkey"] = old.log_signer.verifier().vkey  # old log's Ed25519 key
    result = verify_bundle(
        old.bundle(),
        load_key_directory(json.dumps(document)),
        world.trust(checkpoint_signatures=["ML-DSA-44"]),
    )
    assert "the checkpoint carries no ML-DSA-44 signature by a log key" in result.check(4).detail


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "Expected `array` of length >= 1"),
        (["Ed25519", "Ed25519"], "Expected distinct algorithms"),
        (["RSA"], "Invalid enum value 'RSA'"),
        ("Ed25519", "Expected `array`, got `str`"),
    ],
)
def test_a_bad_checkpoint_signatures_member_refuses_the_trust_store(
    value: Any, message: str
) -> None:
    document = {"format": "recordseal/trust/v1", "checkpoint_signatures": value}
    with pytest.raises(BundleError) as refused:
        load_trust_store(json.dumps(document))
    assert message in str(refused.value)
    assert "checkpoint_signatures" in str(refused.value)


def test_a_trust_store_without_the_member_requires_ed25519_and_writes_nothing() -> None:
    import msgspec

    store = load_trust_store('{"format": "recordseal/trust/v1"}')
    assert store.required_signatures == ("Ed25519",)
    assert b"checkpoint_signatures" not in msgspec.json.encode(store)

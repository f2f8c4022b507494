"""Offline verification speed (issue 19): bundles per second per core.

Bundles of one log, made by the service's own classes (``verify_world.py``), disclosing every
field of their record: 20-field records (``payloads.record_1k``) and 4,096-field ones
(``payloads.record_4096``), from a log whose checkpoints a witness cosigned (verified with the
trust store) or from one without witnesses (verified with the key directory only).

- *one*: ``verify_bundle(bundle, keys, trust)``, a bundle on its own: the key material is
  built and every checkpoint and cosignature verified for that bundle.
- *many*: one ``Verifier(keys, trust)`` for every bundle of the log, as an auditor checking a
  batch does: key material built once, checkpoints and cosignatures verified once.

The reference, measured in the same run: one Ed25519 signature verification
(``cryptography``), the least a bundle costs (its header signature). ``verify_rate.py``
prints the same figures as a table of bundles/s and ratios.
"""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from payloads import DECLARATIONS_1K, record_1k, record_4096
from recordseal.verify import (
    VERIFIED,
    Verifier,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from verify_world import Bundles, make_bundles

MANY_20 = 64
MANY_4096 = 4


@pytest.fixture(scope="module")
def witnessed_20() -> Bundles:
    return make_bundles(record_1k(), DECLARATIONS_1K, MANY_20)


@pytest.fixture(scope="module")
def post_quantum_20() -> Bundles:
    """Dual-signed checkpoints, an ML-DSA-44 witness, a trust store requiring both."""
    return make_bundles(record_1k(), DECLARATIONS_1K, MANY_20, post_quantum=True)


@pytest.fixture(scope="module")
def plain_20() -> Bundles:
    return make_bundles(record_1k(), DECLARATIONS_1K, MANY_20, witnessed=False)


@pytest.fixture(scope="module")
def witnessed_4096() -> Bundles:
    return make_bundles(record_4096(), {}, MANY_4096, rounds=2)


@pytest.fixture(scope="module")
def plain_4096() -> Bundles:
    return make_bundles(record_4096(), {}, MANY_4096, rounds=2, witnessed=False)


def _documents(world: Bundles, witnessed: bool):
    keys = load_key_directory(world.keys)
    return keys, load_trust_store(world.trust) if witnessed else None


def _one(benchmark, world: Bundles, witnessed: bool, group: str) -> None:
    keys, trust = _documents(world, witnessed)
    bundle = world.bundles[len(world.bundles) // 2]
    benchmark.group = group
    benchmark.extra_info["bundles_per_round"] = 1
    result = benchmark(verify_bundle, bundle, keys, trust)
    _expect(result, witnessed)


def _many(benchmark, world: Bundles, witnessed: bool, group: str) -> None:
    keys, trust = _documents(world, witnessed)
    verifier = Verifier(keys, trust)
    benchmark.group = group
    benchmark.extra_info["bundles_per_round"] = len(world.bundles)
    results = benchmark(lambda: [verifier.verify(bundle) for bundle in world.bundles])
    for result in results:
        _expect(result, witnessed)


def _expect(result, witnessed: bool) -> None:
    statuses = [check.status for check in result.checks]
    if witnessed:
        assert result.verdict == VERIFIED, [(c.number, c.detail) for c in result.checks]
    else:  # no witness: checks 5 and 7 cannot pass, everything else does
        assert statuses == ["passed"] * 4 + ["unchecked", "passed", "unchecked"], statuses


#: (case, the fixture of its bundles, whether they are witnessed, the benchmark group)
CASES = [
    ("20 fields, witnessed", "witnessed_20", True, "verify 20 fields"),
    ("20 fields, witnessed, ML-DSA-44", "post_quantum_20", True, "verify 20 fields"),
    ("20 fields, no witness", "plain_20", False, "verify 20 fields"),
    ("4096 fields, witnessed", "witnessed_4096", True, "verify 4096 fields"),
    ("4096 fields, no witness", "plain_4096", False, "verify 4096 fields"),
]


@pytest.mark.parametrize(("fixture", "witnessed", "group"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_one_bundle(benchmark, request, fixture, witnessed, group):
    _one(benchmark, request.getfixturevalue(fixture), witnessed, group)


@pytest.mark.parametrize(("fixture", "witnessed", "group"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_many_bundles_of_one_log(benchmark, request, fixture, witnessed, group):
    _many(benchmark, request.getfixturevalue(fixture), witnessed, group)


def test_reference_one_ed25519_verification(benchmark):
    key = Ed25519PrivateKey.generate()
    message = b"recordseal/header/v1\x00" + b"h" * 480  # about a signed header's size
    signature, public = key.sign(message), key.public_key()
    benchmark.group = "verify 20 fields"
    benchmark(public.verify, signature, message)

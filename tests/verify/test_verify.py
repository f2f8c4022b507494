"""verify_bundle on real bundles: what a bundle alone proves, and with keys and trust."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import msgspec
import pytest

from recordseal.tlog import CosignatureSigner
from recordseal.verify import (
    BundleError,
    VerificationResult,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.encoding import format_instant

from .conftest import statuses, tampered
from .factory import ORIGIN, RECORDS, TARGET_SEQ, WITNESS, World


def test_bundle_alone_is_incomplete_with_the_reasons_of_the_spec(world: World) -> None:
    result = verify_bundle(world.bundle(coverage=None))
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "passed") == {1, 2, 6}
    assert statuses(result, "unchecked") == {3, 4, 5, 7}
    assert result.check(3).detail.startswith("no public key in the supplied directory")
    assert result.check(4).detail.startswith("no chain inclusion proof")
    assert result.check(5).detail.startswith("no witness receipts")
    assert result.check(6).detail == "no window claimed"
    bracket = result.time_bracket
    assert (bracket.not_before, bracket.not_before_by) == (
        world.target.header["ingested_at"],
        "hosted-ingest",
    )
    assert bracket.not_after is None


def test_unsealed_bundle_alone_says_no_chain_inclusion_proof(world: World) -> None:
    result = verify_bundle(world.bundle(sealed=False, coverage=None))
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {3, 4, 5, 7}
    assert result.check(4).detail.startswith("no chain inclusion proof")
    assert result.check(5).detail.startswith("no witness receipts")


def test_with_keys_and_trust_everything_verifies(world: World) -> None:
    result = verify_bundle(world.bundle(), world.keys(), world.trust())
    assert result.verdict == "VERIFIED", result.checks
    assert statuses(result, "passed") == set(range(1, 8))
    assert [check.name for check in result.checks] == [
        "field commitments",
        "record tree",
        "header signature",
        "sealed batch",
        "witness receipts",
        "sequence continuity",
        "verdict and time bracket",
    ]
    bracket = result.time_bracket
    # The witness cosigned in the second from sealed_at's whole second: by its end.
    cosigned = world.sealed_at.replace(microsecond=0)
    assert bracket.not_after == (cosigned + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert bracket.not_after_by == WITNESS
    assert bracket.not_before == world.previous_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert bracket.not_before_by == WITNESS
    assert result.record is not None
    assert (result.record.tenant, result.record.seq) == ("acme", TARGET_SEQ)
    assert result.disclosed == {
        "o:/amount": 1400,
        "o:/currency": "EUR",
        "oo:/customer/name": "Customer 4",
    }


def test_result_json_has_the_documented_shape(world: World) -> None:
    result = verify_bundle(world.bundle(), world.keys(), world.trust())
    document = json.loads(result.to_json())
    assert list(document) == [
        "format",
        "verdict",
        "checks",
        "time_bracket",
        "record",
        "disclosed",
    ]
    assert document["format"] == "recordseal/verification/v1"
    assert document["checks"][0] == {
        "number": 1,
        "name": "field commitments",
        "status": "passed",
        "detail": "3 fields recomputed",
    }
    assert set(document["time_bracket"]) == {
        "not_before",
        "not_before_by",
        "not_after",
        "not_after_by",
    }
    assert msgspec.json.decode(result.to_json(), type=VerificationResult) == result


def test_keys_without_trust_leave_witnesses_and_time_unchecked(world: World) -> None:
    result = verify_bundle(world.bundle(), world.keys())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {5, 7}
    assert result.check(5).detail.startswith("no witness receipts")


def test_sealed_without_previous_falls_back_to_hosted_ingest(world: World) -> None:
    result = verify_bundle(world.bundle(previous=False), world.keys(), world.trust())
    assert result.verdict == "VERIFIED"
    assert result.time_bracket.not_before == world.target.header["ingested_at"]
    assert result.time_bracket.not_before_by == "hosted-ingest"


def test_unsealed_with_keys_and_trust(world: World) -> None:
    result = verify_bundle(world.bundle(sealed=False), world.keys(), world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {4, 5, 7}
    assert result.check(4).detail.startswith("no chain inclusion proof")
    assert result.check(5).detail.startswith("no witness receipts")


def test_uncosigned_checkpoint_has_no_witness_receipts(world: World) -> None:
    result = verify_bundle(world.bundle(cosigned=False), world.keys(), world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {5, 7}
    assert result.check(5).detail.startswith("no witness receipts")


def test_quorum_not_met(world: World) -> None:
    result = verify_bundle(world.bundle(), world.keys(), world.trust(quorum=2))
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {5}
    assert result.check(5).detail.startswith("quorum not met: 1 of 2")
    assert result.check(7).status == "passed"  # the one witness still dates the record


def test_receipts_of_unknown_witnesses_are_ignored(world: World) -> None:
    stranger = CosignatureSigner.generate("stranger.example")
    result = verify_bundle(world.bundle(), world.keys(), world.trust(witnesses=[stranger]))
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {5, 7}
    assert "quorum not met: 0 of 1" in result.check(5).detail


def test_a_log_not_in_the_directory_leaves_the_seal_unchecked(world: World) -> None:
    document = world.keys_document()
    document["logs"] = []
    keys = msgspec.json.decode(json.dumps(document), type=type(world.keys()))
    result = verify_bundle(world.bundle(), keys, world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {4, 7}
    assert f"no log key for {ORIGIN!r}" in result.check(4).detail
    # The usual cause is a directory exported before the log was made: say how to renew it.
    assert "export the directory again (recordseal keys export)" in result.check(4).detail
    assert "published one (GET /v1/keys)" in result.check(4).detail


def test_without_a_key_directory_the_seal_is_unchecked_with_no_advice_to_export_again(
    world: World,
) -> None:
    """No directory was given: there is nothing to export again; check 4 says what check 3
    says (it advised "export the directory again")."""
    result = verify_bundle(world.bundle(), None, world.trust())
    assert result.check(3).detail.endswith(": no key directory supplied")
    assert (
        result.check(4).detail
        == "no chain inclusion proof can be checked: no key directory supplied"
    )
    assert all("again" not in check.detail for check in result.checks)


def test_a_key_not_in_the_directory_leaves_the_signatures_unchecked(world: World) -> None:
    document = world.keys_document()
    document["keys"] = World().keys_document()["keys"]
    keys = msgspec.json.decode(json.dumps(document), type=type(world.keys()))
    result = verify_bundle(world.bundle(), keys, world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {3, 6}
    assert result.check(3).detail.startswith("no public key in the supplied directory for key")
    assert "export the directory again (recordseal keys export)" in result.check(3).detail
    assert "no public key in the supplied directory" in result.check(6).detail


def test_another_log_key_for_the_origin_fails_the_seal(world: World) -> None:
    document = world.keys_document()
    document["logs"] = World().keys_document()["logs"]
    keys = msgspec.json.decode(json.dumps(document), type=type(world.keys()))
    result = verify_bundle(world.bundle(), keys, world.trust())
    assert result.verdict == "FAILED"
    assert statuses(result, "failed") == {4}
    assert "note_unverified" in result.check(4).detail


def test_an_empty_disclosure_proves_the_header(world: World) -> None:
    result = verify_bundle(world.bundle(fields=()), world.keys(), world.trust())
    assert result.verdict == "VERIFIED"
    assert result.disclosed == {}
    assert result.check(1).detail.startswith("no field disclosed")


def test_every_leaf_can_be_disclosed(world: World) -> None:
    paths = [leaf.path for leaf in world.target.committed.leaves]
    result = verify_bundle(world.bundle(fields=paths), world.keys(), world.trust())
    assert result.verdict == "VERIFIED"
    assert result.disclosed["o:/extras"] == {}
    assert result.disclosed["o:/lines"] == []
    assert result.disclosed["o:/notes"] is None


def test_tampered_previous_only_loses_the_witnessed_lower_bound(world: World) -> None:
    def previous(document: dict) -> None:  # type: ignore[type-arg]
        document["seal"]["previous"] = document["seal"]["previous"].replace("\n5\n", "\n4\n")

    def consistency(document: dict) -> None:  # type: ignore[type-arg]
        nodes = document["seal"]["previous_consistency"]
        nodes[0] = nodes[-1] if len(nodes) > 1 else "A" * 43 + "="

    for edit in (previous, consistency):
        result = verify_bundle(tampered(world.bundle(), edit), world.keys(), world.trust())
        assert result.verdict == "VERIFIED"
        assert result.time_bracket.not_before_by == "hosted-ingest"


def test_coverage_of_the_whole_stream(world: World) -> None:
    result = verify_bundle(world.bundle(coverage=(1, RECORDS)), world.keys(), world.trust())
    assert result.check(6).status == "passed"
    assert result.check(6).detail == f"seq 1..{RECORDS}: {RECORDS} headers, each signed and linked"


def test_coverage_of_a_window_inside_the_stream(world: World) -> None:
    result = verify_bundle(world.bundle(coverage=(3, 5)), world.keys(), world.trust())
    assert result.verdict == "VERIFIED"


def test_the_verifier_imports_neither_web_nor_storage_nor_services() -> None:
    import subprocess
    import sys

    code = (
        "import sys, recordseal.verify, recordseal.verify.cli;"
        "print(sorted(m for m in sys.modules if m.startswith('recordseal.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = done.stdout
    assert done.returncode == 0, done.stderr
    for layer in ("recordseal.web", "recordseal.storage", "recordseal.services", "litestar"):
        assert f"'{layer}" not in loaded, loaded


def test_a_record_cosigned_within_its_own_second_is_bracketed_in_order(world: World) -> None:
    """The record ingested at .123456 past a second and cosigned in that same second: the
    cosignature says the whole second, so the bound is that second's end, after ingest."""
    ingested = world.ingested_at(TARGET_SEQ)
    assert ingested.microsecond != 0
    bundle = world.bundle(previous=False, sealed_at=ingested)
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "VERIFIED", result.checks
    bracket = result.time_bracket
    assert (bracket.not_before, bracket.not_before_by) == (
        world.target.header["ingested_at"],
        "hosted-ingest",
    )
    second = ingested.replace(microsecond=0)
    assert bracket.not_after == format_instant(second + timedelta(seconds=1))
    assert bracket.not_after_by == WITNESS
    assert f"cosigned in the second from {format_instant(second)}" in result.check(7).detail


@pytest.mark.parametrize(
    ("load", "given", "found"),
    [
        (load_key_directory, "trust_document", "trust store"),
        (load_trust_store, "keys_document", "key directory"),
    ],
)
def test_a_document_given_for_another_is_named(
    world: World, load: Callable[[bytes], object], given: str, found: str
) -> None:
    """A trust store passed as the key directory (or the reverse) is named as what it is,
    not refused for its format's enum value."""
    document = json.dumps(getattr(world, given)()).encode()
    with pytest.raises(BundleError) as raised:
        load(document)
    assert raised.value.found == found
    assert f"this is a {found} (" in str(raised.value)
    assert "enum" not in str(raised.value)


def test_a_key_directory_given_as_the_bundle_is_named(world: World) -> None:
    result = verify_bundle(json.dumps(world.keys_document()).encode())
    assert result.check(1).detail == (
        "malformed bundle: bundle: this is a key directory (recordseal/keys/v1), not a bundle"
        " - at `$.format`"
    )

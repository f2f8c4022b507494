"""The browser verifier agrees with the Python one, check by check.

Every bundle of the verifier tests (tests/verify/factory.py's variants, every mutation of
tests/verify/test_tamper.py, every case of the documented outcomes of
tests/verify/test_outcomes.py, every malformed document of tests/verify/test_malformed.py) is
verified by both, with the same key directory, trust store and clock; the statuses of the
seven checks, the verdict, the record, the disclosed fields and the time bracket must be
equal. RFC 3161 tokens are left out here: the browser does not check them (see
test_timestamps_are_reported_unchecked).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from recordseal.tlog import CosignatureSigner, Ed25519Signer
from recordseal.verify import (
    TimeBracket,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.encoding import format_instant
from recordseal.verify.sealing import end_of_second
from tests.verify.conftest import in_order, tampered
from tests.verify.factory import RECORDS, TARGET_SEQ, World
from tests.verify.test_compromise import _log_key, _sealed_by
from tests.verify.test_malformed import EDITS, PATHS, RAW
from tests.verify.test_outcomes import LATER, _first_gap_world, pq_world
from tests.verify.test_outcomes import cases as outcome_cases
from tests.verify.test_tamper import (
    COVERAGE_TAMPERING,
    FIELD_TAMPERING,
    HEADER_TAMPERING,
    SEAL_TAMPERING,
    _drop_coverage,
    _edit_proof,
    _first_proof_hash,
    _resigned,
    _set,
)

from .conftest import Harness

Doc = dict[str, Any]


@dataclass
class Case:
    name: str
    bundle: bytes
    keys: Doc | None
    trust: Doc | None
    now: datetime


def _cases(world: World) -> Iterator[Case]:
    now = datetime.now(UTC)
    keys, trust = world.keys_document(), world.trust_document()
    good = world.bundle()

    def case(name: str, bundle: bytes, k: Doc | None = keys, t: Doc | None = trust) -> Case:
        return Case(name, bundle, k, t, now)

    # factory variants, with every combination of inputs that changes what runs
    yield case("complete", good)
    yield case("complete, keys only", good, t=None)
    yield case("complete, bundle alone", good, None, None)
    yield case("trust only", good, None)
    yield case("no window, alone", world.bundle(coverage=None), None, None)
    yield case("unsealed, alone", world.bundle(sealed=False, coverage=None), None, None)
    yield case("unsealed", world.bundle(sealed=False))
    yield case("not cosigned", world.bundle(cosigned=False))
    yield case("no previous", world.bundle(previous=False))
    yield case("no previous, no trust", world.bundle(previous=False), t=None)
    yield case("quorum 2", good, t=world.trust_document(quorum=2))
    stranger = CosignatureSigner.generate("stranger.example")
    yield case("unknown witness", good, t=world.trust_document(witnesses=[stranger]))
    # through the aggregate log (rules 5.7 to 5.14): the public witness alone, both, neither
    through = world.bundle(aggregate=True, cosigned=False)
    with_aggregate = world.keys_document(aggregate=True)
    public = world.trust_document(witnesses=[world.public_witness])
    both = world.trust_document(witnesses=[world.witness, world.public_witness], quorum=2)
    yield case("through the aggregate", through, with_aggregate, public)
    yield case("through the aggregate, no aggregate key", through, keys, public)
    yield case("through the aggregate, tenant witness only", through, with_aggregate)
    yield case(
        "cosigned and through the aggregate", world.bundle(aggregate=True), with_aggregate, both
    )
    yield case(
        "aggregate not cosigned",
        world.bundle(aggregate=True, aggregate_cosigned=False),
        with_aggregate,
        both,
    )
    after = format_instant(end_of_second(world.aggregated_at) + timedelta(seconds=1))
    yield case(
        "header key compromised after the aggregate's witness",
        through,
        world.keys_document(aggregate=True, compromised_at=after),
        public,
    )
    yield case("no log key", good, {**keys, "logs": []})
    yield case("another header key", good, {**keys, "keys": World().keys_document()["keys"]})
    yield case("another log key", good, {**keys, "logs": World().keys_document()["logs"]})
    yield case("no field", world.bundle(fields=()))
    every = [leaf.path for leaf in world.target.committed.leaves]
    yield case("every leaf", world.bundle(fields=every))
    yield case("window 3..5", world.bundle(coverage=(3, 5)))
    yield case("window of the record alone", world.bundle(coverage=(TARGET_SEQ, TARGET_SEQ)))
    spaced = json.dumps(json.loads(good), indent=4, sort_keys=True).encode()
    yield case("indented and sorted", spaced)

    def previous(document: Doc) -> None:
        document["seal"]["previous"] = document["seal"]["previous"].replace("\n5\n", "\n4\n")

    def consistency(document: Doc) -> None:
        nodes = document["seal"]["previous_consistency"]
        nodes[0] = nodes[-1] if len(nodes) > 1 else "A" * 43 + "="

    yield case("previous tampered", tampered(good, previous))
    yield case("previous consistency tampered", tampered(good, consistency))
    yield case("previous of the sealing size", tampered(good, _set("seal.previous", None)))
    # every mutation of test_tamper.py
    for table in (FIELD_TAMPERING, HEADER_TAMPERING, SEAL_TAMPERING, COVERAGE_TAMPERING):
        for name, (edit, _) in table.items():
            yield case(name, tampered(good, edit))
    yield case("seal unparsable, alone", tampered(good, _set("seal.proof", "not a proof")), None)
    for changes in ({"prev": "11" * 32}, {"stream": "invoices"}, {"record_type": "x"}):
        yield case(f"re-signed {changes}", tampered(good, _resigned(world, 2, **changes)))
    yield case("first header off genesis", tampered(good, _resigned(world, 1, prev="22" * 32)))
    for missing in (1, 2, TARGET_SEQ, RECORDS):
        yield case(f"gap at {missing}", tampered(good, _drop_coverage(missing)))
    yield case("huge window", tampered(good, _set("coverage.to_seq", 2**53 - 1)))
    yield case(
        "gaps", tampered(good, lambda d: d["coverage"]["records"].__setitem__(slice(0, 2), []))
    )
    # the key's validity at ingested_at, to the microsecond
    ingested = world.ingested_at(TARGET_SEQ)
    for member, shift in [
        ("not_before", timedelta(0)),
        ("not_before", timedelta(microseconds=1)),
        ("not_after", timedelta(microseconds=1)),
        ("not_after", timedelta(0)),
        ("revoked_at", timedelta(microseconds=1)),
        ("revoked_at", timedelta(0)),
        ("revoked_at", timedelta(seconds=-1)),
    ]:
        moment = (ingested + shift).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        validity = world.keys_document(**{member: moment})
        yield case(f"{member} at ingested{shift}", world.bundle(coverage=None), validity)
        yield case(f"{member} at ingested{shift}, window", good, validity)
    plus_one = (ingested + timedelta(hours=1, microseconds=1)).strftime(
        "%Y-%m-%dT%H:%M:%S.%f+01:00"
    )
    yield case(
        "offset not_before", world.bundle(coverage=None), world.keys_document(not_before=plus_one)
    )
    yield Case("cosigned in the future", good, keys, trust, world.sealed_at - timedelta(minutes=10))
    # cosigned within the second the record was ingested in: the bound is that second's end
    yield case("cosigned in the ingest second", world.bundle(previous=False, sealed_at=ingested))
    # compromised keys (docs/bundle.md, "Compromised keys"), around the witness's second
    witnessed = end_of_second(world.sealed_at)
    for shift in (timedelta(0), timedelta(microseconds=-1), -timedelta(seconds=1), LATER):
        moment = format_instant(witnessed + shift)
        compromised = world.keys_document(compromised_at=moment)
        yield case(f"compromised at the witness time{shift}", good, compromised)
        yield case(f"compromised{shift}, no window", world.bundle(coverage=None), compromised)
        up_to_the_record = world.bundle(coverage=(1, TARGET_SEQ))
        yield case(f"compromised{shift}, window to the record", up_to_the_record, compromised)
        logs = world.keys_document(log_compromised_at=moment)
        yield case(f"log key compromised{shift}", good, logs)
        both = world.keys_document(compromised_at=moment, log_compromised_at=moment)
        yield case(f"both keys compromised{shift}", good, both)
    later = world.keys_document(compromised_at=format_instant(witnessed + LATER))
    yield case("compromised, not cosigned", world.bundle(cosigned=False), later)
    yield case("compromised, unsealed", world.bundle(sealed=False), later)
    yield case("compromised, no trust store", good, later, None)
    yield case("compromised, quorum 2", good, later, world.trust_document(quorum=2))
    yield case("compromised, seal tampered", tampered(good, _edit_proof(_first_proof_hash)), later)
    unlinked = tampered(world.bundle(coverage=(1, TARGET_SEQ)), _drop_coverage(TARGET_SEQ - 1))
    yield case("compromised, the record's predecessor missing", unlinked, later)
    offset = (witnessed + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
    yield case("compromised, an offset time", good, world.keys_document(compromised_at=offset))
    gapped = _first_gap_world()  # seqs 1-2 lost: the gap header at 3 precedes the record
    for shift in (timedelta(0), timedelta(microseconds=-1)):
        moment = format_instant(end_of_second(gapped.sealed_at) + shift)
        for low, high in ((3, TARGET_SEQ), (1, RECORDS)):
            yield case(
                f"gap before the record, compromised{shift}, window {low}..{high}",
                gapped.bundle(coverage=(low, high)),
                gapped.keys_document(compromised_at=moment),
                gapped.trust_document(),
            )
    reached = World(gap=(2, 2))  # seq 2 lost: the gap header at 3 links the record to seq 1
    moment = format_instant(end_of_second(reached.sealed_at) + LATER)
    yield case(
        "compromised, a header reached through a gap",
        reached.bundle(coverage=(1, TARGET_SEQ)),
        reached.keys_document(compromised_at=moment),
        reached.trust_document(),
    )
    before = format_instant(witnessed - timedelta(minutes=1))
    for listed in ([None, before], [before, format_instant(witnessed + LATER)]):
        twice = world.keys_document()
        twice["logs"] = [_log_key(world.log_signer, at) for at in listed]
        yield case(f"a log key listed twice, compromised {listed}", good, twice)
    successor = Ed25519Signer.generate(world.log_signer.name)
    cosealed = tampered(good, _sealed_by(world, world.log_signer, successor))
    for successor_at in (None, before):
        keys_ = world.keys_document()
        keys_["logs"] = [
            _log_key(world.log_signer, before),
            _log_key(successor, successor_at),
        ]
        yield case(f"two log keys, the successor compromised {successor_at}", cosealed, keys_)
    # dual-signed checkpoints and an ML-DSA-44 witness (docs/tlog.md), under each policy
    pq = pq_world()
    pq_good, pq_keys = pq.bundle(), pq.keys_document()
    old_directory = {**pq_keys, "logs": pq_keys["logs"][:1]}
    for required in (None, ["Ed25519"], ["ML-DSA-44"], ["Ed25519", "ML-DSA-44"]):
        policy = pq.trust_document(checkpoint_signatures=required)
        yield case(f"dual-signed, policy {required}", pq_good, pq_keys, policy)
        yield case(f"dual-signed, policy {required}, old directory", pq_good, old_directory, policy)
        ed25519_only = world.trust_document(checkpoint_signatures=required)
        yield case(f"Ed25519-only checkpoint, policy {required}", good, keys, ed25519_only)
    yield case("dual-signed, alone", pq_good, None, None)
    yield case("dual-signed, not cosigned", pq.bundle(cosigned=False), pq_keys, pq.trust_document())
    for name, (edit, _) in SEAL_TAMPERING.items():
        yield case(f"dual-signed: {name}", tampered(pq_good, edit), pq_keys, pq.trust_document())
    for shift in (timedelta(0), -timedelta(seconds=1), LATER):
        moment = format_instant(end_of_second(pq.sealed_at) + shift)
        for which in ("Ed25519", "ML-DSA-44", "both"):
            compromised_logs = pq.keys_document()
            for position, entry in enumerate(compromised_logs["logs"]):
                if which == "both" or position == ("Ed25519", "ML-DSA-44").index(which):
                    entry["compromised_at"] = moment
            yield case(f"dual-signed, {which} log key compromised{shift}", pq_good,
                       compromised_logs, pq.trust_document())  # fmt: skip
    # every case of the documented outcomes (docs/bundle.md section 3) the browser checks
    for number, outcome in outcome_cases(world):
        if outcome.browser:
            assert isinstance(outcome.keys, dict | None)
            yield Case(
                f"rule {number}: {outcome.name}",
                outcome.bundle,
                outcome.keys,
                outcome.trust,
                outcome.now or now,
            )
    # every malformed document of test_malformed.py
    for name, edit in EDITS.items():
        yield case(f"malformed: {name}", tampered(good, edit))
    for name, data in RAW.items():
        yield case(f"raw: {name}", data)
        yield case(f"raw, alone: {name}", data, None, None)


def _python(case: Case) -> dict[str, Any]:
    keys = None if case.keys is None else load_key_directory(json.dumps(case.keys))
    trust = None if case.trust is None else load_trust_store(json.dumps(case.trust))
    result = verify_bundle(case.bundle, keys, trust, now=case.now)
    document: dict[str, Any] = json.loads(result.to_json())
    return document


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "verdict": result["verdict"],
        "statuses": [check["status"] for check in result["checks"]],
        "record": result["record"],
        "disclosed": result["disclosed"],
        "time_bracket": result["time_bracket"],
    }


def _browser(harness: Harness, cases: list[Case]) -> list[dict[str, Any]]:
    arguments = [
        {
            "bundle": case.bundle.hex(),
            "keys": None if case.keys is None else json.dumps(case.keys),
            "trust": None if case.trust is None else json.dumps(case.trust),
            "now": case.now.timestamp(),
        }
        for case in cases
    ]
    results: list[dict[str, Any]] = harness("verifyAll", arguments)
    return results


def test_every_bundle_gets_the_same_statuses(harness: Harness) -> None:
    cases = list(_cases(World()))
    assert len(cases) > 120
    browser = _browser(harness, cases)
    disagreements = []
    for case, got in zip(cases, browser, strict=True):
        expected = _python(case)
        if _summary(got) != _summary(expected):
            disagreements.append((case.name, _summary(expected), _summary(got)))
    assert disagreements == [], f"{len(disagreements)} of {len(cases)} disagree"
    for case, got in zip(cases, browser, strict=True):
        assert in_order(msgspec.convert(got["time_bracket"], TimeBracket)), case.name


def test_details_name_the_same_faults(harness: Harness) -> None:
    """Details are written for people, not compared byte for byte; the codes they cite are."""
    world = World()
    cases = [
        Case(name, tampered(world.bundle(), edit), world.keys_document(), world.trust_document(),
             datetime.now(UTC))
        for name, (edit, _) in SEAL_TAMPERING.items()
    ]  # fmt: skip
    for case, got in zip(cases, _browser(harness, cases), strict=True):
        expected = _python(case)
        for mine, theirs in zip(got["checks"], expected["checks"], strict=True):
            for code in ("note_unverified", "signature_invalid", "cosignature_future",
                         "cosignature_invalid", "root_mismatch", "proof_invalid"):  # fmt: skip
                assert (code in mine["detail"]) == (code in theirs["detail"]), (case.name, code)


def _named_path(detail: str) -> str | None:
    found = re.search(r" - at `([^`]*)`$", detail)
    return None if found is None else found.group(1)


def test_malformed_bundles_name_the_same_member(harness: Harness) -> None:
    """Both verifiers name the member a malformed bundle breaks as the same path
    (docs/bundle.md, "A malformed bundle"): the one test_malformed.py expects, or none
    where the text is not JSON at all."""
    world, now = World(), datetime.now(UTC)
    good = world.bundle()
    cases = [Case(name, tampered(good, edit), None, None, now) for name, edit in EDITS.items()]
    cases += [Case(name, data, None, None, now) for name, data in RAW.items()]
    named = {}
    for case, got in zip(cases, _browser(harness, cases), strict=True):
        mine = _named_path(got["checks"][0]["detail"])
        theirs = _named_path(_python(case)["checks"][0]["detail"])
        assert mine == theirs, (case.name, got["checks"][0]["detail"])
        named[case.name] = mine
    assert {name: named[name] for name in EDITS} == PATHS
    assert named["an empty object"] == "$"
    assert named["duplicate members"] == "$.format"


def test_timestamps_are_reported_unchecked(harness: Harness) -> None:
    """A token from a trusted authority is neither counted nor failed: it is named."""
    world = World()
    pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    trust = world.trust_document(authorities=[("tsa.example", pem)])
    token = (b"\x30\x03\x02\x01\x01",)
    bundle = world.bundle(cosigned=False, timestamps=[("tsa.example", token[0])])
    case = Case("token", bundle, world.keys_document(), trust, datetime.now(UTC))
    (result,) = _browser(harness, [case])
    assert result["verdict"] == "VERIFICATION INCOMPLETE"
    check = result["checks"][4]
    assert check["status"] == "unchecked"
    assert "RFC 3161 token of tsa.example not checked in the browser" in check["detail"]


def test_stale_and_mixed_up_trust_material_is_named(harness: Harness) -> None:
    """A directory without the bundle's log or key says how to get a current one; a trust
    store given as the key directory (or the reverse) is named as what it is."""
    world = World()
    keys = world.keys_document()
    cases = [
        Case("log newer than the directory", world.bundle(), {**keys, "logs": []}, None,
             datetime.now(UTC)),
        Case("key newer than the directory", world.bundle(),
             {**keys, "keys": World().keys_document()["keys"]}, None, datetime.now(UTC)),
    ]  # fmt: skip
    log_missing, key_missing = _browser(harness, cases)
    for detail in (log_missing["checks"][3]["detail"], key_missing["checks"][2]["detail"]):
        assert "export the directory again (recordseal keys export)" in detail
        assert "published one (GET /v1/keys)" in detail
    trust = json.dumps(world.trust_document())
    assert harness("loadError", {"kind": "keys", "text": trust}) == (
        "key directory: this is a trust store (recordseal/trust/v1), not a key directory"
        " - at `$.format`"
    )
    assert harness("loadError", {"kind": "trust", "text": json.dumps(keys)}) == (
        "trust store: this is a key directory (recordseal/keys/v1), not a trust store"
        " - at `$.format`"
    )


def test_a_malformed_compromised_at_refuses_the_directory(harness: Harness) -> None:
    keys = World().keys_document()
    for entry in ("keys", "logs"):
        document = json.loads(json.dumps(keys))
        document[entry][0]["compromised_at"] = "2026-11-26 08:00"
        assert harness("loadError", {"kind": "keys", "text": json.dumps(document)}) == (
            f"key directory: Expected an RFC 3339 date-time - at `$.{entry}[0].compromised_at`"
        )
        document[entry][0]["compromised_at"] = None
        assert harness("loadError", {"kind": "keys", "text": json.dumps(document)}) is None


def test_without_a_key_directory_both_say_the_same_words(harness: Harness) -> None:
    """The page and ``recordseal verify`` with no key directory: checks 3 and 4 say "no key
    directory supplied", with no advice to export a directory that was never given."""
    world = World()
    case = Case("no keys", world.bundle(), None, world.trust_document(), datetime.now(UTC))
    [got] = _browser(harness, [case])
    expected = _python(case)
    for number in (3, 4):
        mine, theirs = got["checks"][number - 1]["detail"], expected["checks"][number - 1]["detail"]
        assert mine == theirs, number
        assert theirs.endswith(": no key directory supplied") and "again" not in theirs

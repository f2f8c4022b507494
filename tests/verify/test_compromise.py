"""Compromised keys (docs/bundle.md, "Compromised keys"): the shared vectors of
tests/vectors/compromise.json (the browser runs them too: tests/verify_js/test_vectors.py),
the worked example, and what the vectors' single log key and stream cannot show: log keys
listed twice or signing together, and gap headers the record's chain reaches.

The rules' failing outcomes are in tests/verify/test_outcomes.py (rows 3.5, 4.8 and 6.16).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from recordseal.tlog import Ed25519Signer, parse_note, sign_note
from recordseal.verify import (
    BundleError,
    VerificationResult,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.encoding import format_instant
from recordseal.verify.sealing import end_of_second

from .conftest import tampered
from .factory import ORIGIN, World
from .test_outcomes import _first_gap_world
from .test_tamper import _checkpoint_start

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "compromise.json").read_text(encoding="utf-8")
)
NOW = datetime.fromisoformat(VECTORS["now"])
DOCS = Path(__file__).parents[2] / "docs" / "bundle.md"
Doc = dict[str, Any]


def _run(bundle: bytes, keys: Doc, trust: Doc | None, now: datetime | None = None) -> Any:
    directory = load_key_directory(json.dumps(keys))
    store = None if trust is None else load_trust_store(json.dumps(trust))
    return verify_bundle(bundle, directory, store, now=now)


def _statuses(result: VerificationResult) -> list[str]:
    return [check.status for check in result.checks]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_expected_outcome(case: Doc) -> None:
    result = _run(json.dumps(case["bundle"]).encode(), case["keys"], case["trust"], NOW)
    expected = case["expected"]
    assert result.verdict == expected["verdict"]
    assert _statuses(result) == expected["statuses"]
    for number, text in expected["details"].items():
        assert text in result.check(int(number)).detail


def test_the_worked_example() -> None:
    """docs/bundle.md shows the vectors' key entry and two cases' check-3 details word for
    word."""
    shown = " ".join(DOCS.read_text().split())
    cases = {case["name"]: case for case in VECTORS["cases"]}
    key = cases["compromised after the witness time"]["keys"]["keys"][0]
    for member, value in key.items():
        assert f"{json.dumps(member)}: {json.dumps(value)}" in shown, member
    for name in ("compromised after the witness time", "compromised within the witness's second"):
        case = cases[name]
        result = _run(json.dumps(case["bundle"]).encode(), case["keys"], case["trust"], NOW)
        assert result.check(3).detail in shown, name


def _sealed_by(world: World, *signers: Ed25519Signer) -> Callable[[Doc], None]:
    """The sealing checkpoint signed by ``signers`` (the log's keys) and cosigned as before."""
    note = parse_note(sign_note(world.checkpoint(len(world.log)).text(), list(signers)))
    cosignature = world.witness.cosign(note.text, int(world.sealed_at.timestamp()))
    signed = note.with_signatures([cosignature.note_signature]).encode()

    def edit(document: Doc) -> None:
        lines = str(document["seal"]["proof"]).split("\n")
        document["seal"]["proof"] = "\n".join(lines[: _checkpoint_start(lines)]) + "\n" + signed

    return edit


def _log_key(signer: Ed25519Signer, compromised_at: str | None) -> Doc:
    log: Doc = {"origin": ORIGIN, "vkey": signer.verifier().vkey}
    return log if compromised_at is None else {**log, "compromised_at": compromised_at}


@pytest.fixture
def before(world: World) -> str:
    """A minute before the witness saw the sealing checkpoint."""
    return format_instant(end_of_second(world.sealed_at) - timedelta(minutes=1))


def test_a_log_key_listed_twice_is_compromised_from_the_earlier_time(
    world: World, before: str
) -> None:
    keys = world.keys_document()
    later = format_instant(end_of_second(world.sealed_at) + timedelta(days=1))
    for listed in ([None, before], [before, None], [later, before], [before, later]):
        keys["logs"] = [_log_key(world.log_signer, at) for at in listed]
        result = _run(world.bundle(coverage=None), keys, world.trust_document())
        assert result.check(4).status == "failed", listed
        assert f"compromised at {before}" in result.check(4).detail


def test_a_checkpoint_also_signed_by_a_sound_log_key_is_trusted(world: World, before: str) -> None:
    """After a rotation a log may list two keys; one that was not compromised vouches."""
    successor = Ed25519Signer.generate(ORIGIN)
    bundle = tampered(world.bundle(coverage=None), _sealed_by(world, world.log_signer, successor))
    keys = world.keys_document()
    for successor_at, status in ((None, "passed"), (before, "failed")):
        keys["logs"] = [
            _log_key(world.log_signer, before),
            _log_key(successor, successor_at),
        ]
        result = _run(bundle, keys, world.trust_document())
        assert result.check(4).status == status, (successor_at, result.check(4).detail)
    assert result.check(4).detail.count("compromised at") == 2  # both keys named


def test_a_compromise_of_another_log_leaves_this_one(world: World, before: str) -> None:
    """compromised_at belongs to a log's entry: the same vkey listed for another origin,
    compromised there, does not mark this log's key."""
    keys = world.keys_document()
    keys["logs"].append({"origin": "other/log", "vkey": world.log_signer.verifier().vkey})
    keys["logs"][-1]["compromised_at"] = before
    result = _run(world.bundle(coverage=None), keys, world.trust_document())
    assert result.verdict == "VERIFIED", result.check(4).detail


def test_a_gap_header_the_record_links_to_is_vouched_for() -> None:
    """Seqs 1-2 lost, the gap header at 3, the record at 4: the record's prev is the gap's
    chain leaf, so the record's witness time vouches for the gap header (rule 6.16)."""
    world = _first_gap_world()
    witnessed = end_of_second(world.sealed_at)
    for shift, status in ((timedelta(0), "passed"), (timedelta(microseconds=-1), "failed")):
        keys = world.keys_document(compromised_at=format_instant(witnessed + shift))
        result = _run(world.bundle(coverage=(3, 4)), keys, world.trust_document())
        assert (result.check(3).status, result.check(6).status) == (status, status), shift
    assert "seq 3: signed by key" in result.check(6).detail


def test_headers_before_a_gap_are_reached_through_it() -> None:
    """Seq 2 lost, the gap header at 3, the record at 4: the gap links to seq 1, so the
    record's witness time vouches for seq 1 too; the window stays incomplete (seq 2 lost)."""
    world = World(gap=(2, 2))
    later = format_instant(end_of_second(world.sealed_at) + timedelta(days=1))
    keys = world.keys_document(compromised_at=later)
    result = _run(world.bundle(coverage=(1, 4)), keys, world.trust_document())
    assert result.check(6).status == "unchecked", result.check(6).detail
    assert result.check(6).detail.startswith("seq 2 declared lost on ")
    assert "compromised" not in result.check(6).detail


@pytest.mark.parametrize("entry", ["keys", "logs"])
def test_a_malformed_compromised_at_refuses_the_directory(world: World, entry: str) -> None:
    """As any other bad member: one BundleError naming the member as a path, in the browser
    page's words (tests/verify_js/test_agreement.py)."""
    keys = world.keys_document()
    keys[entry][0]["compromised_at"] = "2026-11-26 08:00"
    with pytest.raises(BundleError) as refused:
        load_key_directory(json.dumps(keys))
    assert str(refused.value) == (
        f"key directory: Expected an RFC 3339 date-time - at `$.{entry}[0].compromised_at`"
    )


def test_an_absent_member_and_null_verify_alike(world: World) -> None:
    """A directory written before compromised_at existed gives the same results, to the
    detail, as one that says null for every key."""
    bundles = [world.bundle(), world.bundle(sealed=False), world.bundle(cosigned=False)]
    old = world.keys_document()
    marked = world.keys_document(compromised_at=None)
    marked["logs"] = [{**log, "compromised_at": None} for log in marked["logs"]]
    assert "compromised_at" not in old["keys"][0] and "compromised_at" not in old["logs"][0]
    for bundle in bundles:
        results = [_run(bundle, keys, world.trust_document()).to_json() for keys in (old, marked)]
        assert results[0] == results[1]


def test_an_offset_compromised_at_is_the_same_instant(world: World) -> None:
    witnessed = end_of_second(world.sealed_at)
    for shift, status in ((timedelta(0), "passed"), (timedelta(seconds=-1), "failed")):
        moment = (witnessed + shift + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
        keys = world.keys_document(compromised_at=moment)
        assert _run(world.bundle(), keys, world.trust_document()).check(3).status == status

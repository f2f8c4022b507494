"""Change any part of a good bundle: the verdict is FAILED on exactly the checks it breaks.

The bundle verified here carries every part (three fields, seal with previous checkpoint,
a coverage window of the whole stream) and is checked with the key directory and the trust
store, so every check runs. Changing the header breaks every check that reads it: its
signature (3), its log entry (4), and its place in the coverage window (6).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from recordseal.chain import canonical_header
from recordseal.verify import verify_bundle
from recordseal.verify.encoding import format_instant

from .conftest import statuses, tampered
from .factory import ORIGIN, TARGET_SEQ, WITNESS, World

Doc = dict[str, Any]


def _flip_hex(text: str, position: int = 10) -> str:
    return text[:position] + ("0" if text[position] != "0" else "1") + text[position + 1 :]


def _flip_b64(text: str, position: int) -> str:
    return text[:position] + ("A" if text[position] != "A" else "B") + text[position + 1 :]


def _field(document: Doc, path: str = "o:/amount") -> Doc:
    return next(item for item in document["fields"] if item["path"] == path)


def _proof_lines(document: Doc) -> list[str]:
    return str(document["seal"]["proof"]).split("\n")


def _edit_proof(edit: Callable[[list[str]], None]) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        lines = _proof_lines(document)
        edit(lines)
        document["seal"]["proof"] = "\n".join(lines)

    return apply


def _checkpoint_start(lines: list[str]) -> int:
    return lines.index("") + 1


def _signature_line(lines: list[str], name: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(f"— {name} "))


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return apply


def _field_set(member: str, value: Any, path: str = "o:/amount") -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        _field(document, path)[member] = value

    return apply


def _field_edit(
    member: str, edit: Callable[[Any], Any], path: str = "o:/amount"
) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        item = _field(document, path)
        item[member] = edit(item[member])

    return apply


def _header_edit(member: str, value: Any) -> Callable[[Doc], None]:
    return _set(f"header.{member}", value)


def _flip_line(name: str, position: int) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        at = _signature_line(lines, name)
        prefix = f"— {name} "
        lines[at] = prefix + _flip_b64(lines[at][len(prefix) :], position)

    return edit


def _checkpoint_line(offset: int, value: Callable[[str], str]) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        at = _checkpoint_start(lines) + offset
        lines[at] = value(lines[at])

    return edit


def _index(value: int) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        lines[1] = f"index {value}"

    return edit


def _first_proof_hash(lines: list[str]) -> None:
    lines[2] = _flip_b64(lines[2], 5)


def _drop_proof_hash(lines: list[str]) -> None:
    del lines[2]


def _coverage_header(seq: int, member: str, value: Any) -> Callable[[Doc], None]:
    return _set(f"coverage.records.{seq - 1}.header.{member}", value)


def _drop_coverage(seq: int) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        del document["coverage"]["records"][seq - 1]

    return apply


FIELD_TAMPERING = {
    # check 1: a commitment cannot be recomputed
    "value of the wrong type for its kind": (_field_set("value", "1400"), {1}),
    "money with a fraction": (_field_set("value", 1400.5), {1}),
    "integer out of range": (_field_set("value", 2**60), {1}),
    "salt of 31 bytes": (_field_edit("salt", lambda salt: salt[:-2]), {1}),
    "unknown kind": (_field_set("kind", "nope"), {1}),
    "path that is not a committed path": (_field_set("path", "x:/amount"), {1}),
    "array step with a leading zero": (_field_set("path", "oa:/lines/01"), {1}),
    "field disclosed twice": (lambda d: d["fields"].append(dict(d["fields"][0])), {1}),
    "index used twice": (_field_set("index", 0, "o:/currency"), {1}),
    # check 2: a commitment does not verify under the header's root
    "value": (_field_set("value", 1401), {2}),
    "free value": (_field_set("value", "Customer 5", "oo:/customer/name"), {2}),
    "salt": (_field_edit("salt", _flip_hex), {2}),
    "proof node": (_field_edit("proof", lambda p: [_flip_hex(p[0]), *p[1:]]), {2}),
    "proof node dropped": (_field_edit("proof", lambda p: p[1:]), {2}),
    "proof node added": (_field_edit("proof", lambda p: [*p, p[0]]), {2}),
    "index": (_field_edit("index", lambda i: i + 1, "oo:/customer/name"), {2}),
    "index beyond field_count": (_field_set("index", 1000), {2}),
    "kind": (_field_set("kind", "integer"), {2}),
    "kind free": (_field_set("kind", "free"), {2}),
    "path": (_field_set("path", "o:/amounts"), {2}),
}

HEADER_TAMPERING = {
    "root": (_header_edit("root", "00" * 32), {2, 3, 4, 6}),
    "seq": (_header_edit("seq", TARGET_SEQ + 1), {3, 4, 6}),
    "tenant": (_header_edit("tenant", "globex"), {3, 4, 6}),
    "stream": (_header_edit("stream", "invoices"), {3, 4, 6}),
    "record_id": (_header_edit("record_id", "0193a1b2-c3d4-7e5f-8a9b-999999999999"), {3, 4, 6}),
    "record_type": (_header_edit("record_type", "order.cancelled"), {3, 4, 6}),
    "occurred_at": (_header_edit("occurred_at", "2026-11-21T07:00:01Z"), {3, 4, 6}),
    "subject_ref": (_header_edit("subject_ref", "00" * 16), {3, 4, 6}),
    "prev": (_header_edit("prev", "00" * 32), {3, 4, 6}),
    "ingested_at": (_header_edit("ingested_at", "2026-01-01T00:00:00.000000Z"), {3, 4, 6}),
    "attestation": (_header_edit("attestation", "self-attested"), {3, 4, 6}),
    "signature": (lambda d: d.update(signature=_flip_hex(d["signature"], 20)), {3}),
    "signature truncated": (lambda d: d.update(signature=d["signature"][:-2]), {3}),
    "signature of another header": (
        lambda d: d.update(signature=d["coverage"]["records"][0]["signature"]),
        {3},
    ),
}

SEAL_TAMPERING = {
    "checkpoint size": (_edit_proof(_checkpoint_line(1, lambda size: str(int(size) + 1))), {4, 5}),
    "checkpoint root": (_edit_proof(_checkpoint_line(2, lambda root: _flip_b64(root, 3))), {4, 5}),
    "checkpoint origin": (_edit_proof(_checkpoint_line(0, lambda o: o + "x")), {4, 5}),
    "log signature": (_edit_proof(_flip_line(ORIGIN, 30)), {4}),
    "inclusion proof hash": (_edit_proof(_first_proof_hash), {4}),
    "inclusion proof hash dropped": (_edit_proof(_drop_proof_hash), {4}),
    "log index": (_edit_proof(_index(6)), {4}),
    "log index of the genesis root": (_edit_proof(_index(0)), {4}),
    "log index beyond the checkpoint": (_edit_proof(_index(8)), {4}),
    "proof that does not parse": (_set("seal.proof", "c2sp.org/tlog-proof@v1\nindex x\n"), {4}),
    "proof of another format": (_edit_proof(lambda lines: lines.__setitem__(0, "v2")), {4}),
    "cosignature": (_edit_proof(_flip_line(WITNESS, 30)), {5}),
    "cosignature timestamp": (_edit_proof(_flip_line(WITNESS, 14)), {5}),
    "cosignature timestamp in the future": (_edit_proof(_flip_line(WITNESS, 9)), {5}),
}

COVERAGE_TAMPERING = {
    "member of a covered header": (_coverage_header(2, "occurred_at", "2026-01-01T00:00:00Z"), {6}),
    "seq of a covered header": (_coverage_header(2, "seq", 3), {6}),
    "covered signature": (_set("coverage.records.1.signature", "00" * 64), {6}),
    "window that misses the record": (_set("coverage.to_seq", TARGET_SEQ - 1), {6}),
    "window that starts after the record": (_set("coverage.from_seq", 6), {6}),
    "empty window": (_set("coverage.from_seq", 7), {6}),
    "records out of order": (
        lambda d: d["coverage"]["records"].reverse(),
        {6},
    ),
}


def _check(world: World, edit: Callable[[Doc], None], failing: set[int]) -> None:
    bundle = tampered(world.bundle(), edit)
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "FAILED", result.checks
    assert statuses(result, "failed") == failing, result.checks
    if failing & {1, 2}:
        assert result.disclosed == {}


@pytest.mark.parametrize(("edit", "failing"), FIELD_TAMPERING.values(), ids=FIELD_TAMPERING)
def test_field_tampering(world: World, edit: Callable[[Doc], None], failing: set[int]) -> None:
    _check(world, edit, failing)


@pytest.mark.parametrize(("edit", "failing"), HEADER_TAMPERING.values(), ids=HEADER_TAMPERING)
def test_header_tampering(world: World, edit: Callable[[Doc], None], failing: set[int]) -> None:
    _check(world, edit, failing)


@pytest.mark.parametrize(("edit", "failing"), SEAL_TAMPERING.values(), ids=SEAL_TAMPERING)
def test_seal_tampering(world: World, edit: Callable[[Doc], None], failing: set[int]) -> None:
    _check(world, edit, failing)


@pytest.mark.parametrize(("edit", "failing"), COVERAGE_TAMPERING.values(), ids=COVERAGE_TAMPERING)
def test_coverage_tampering(world: World, edit: Callable[[Doc], None], failing: set[int]) -> None:
    _check(world, edit, failing)


def test_the_seal_tampered_without_keys_still_fails_to_parse(world: World) -> None:
    bundle = tampered(world.bundle(), _set("seal.proof", "not a proof"))
    result = verify_bundle(bundle)
    assert result.verdict == "FAILED"
    assert statuses(result, "failed") == {4}


# --- re-signed headers: only the chain can tell -------------------------------------------


def _resigned(world: World, seq: int, **changes: Any) -> Callable[[Doc], None]:
    header = {**world.records[seq - 1].header, **changes}
    signature = world.sign(header).hex()

    def apply(document: Doc) -> None:
        document["coverage"]["records"][seq - 1] = {"header": header, "signature": signature}

    return apply


@pytest.mark.parametrize(
    "changes",
    [
        {"prev": "11" * 32},
        {"stream": "invoices"},
        {"tenant": "globex"},
        {"record_type": "order.rewritten"},
    ],
    ids=["broken prev link", "another stream", "another tenant", "rewritten header"],
)
def test_resigned_coverage_header_breaks_the_chain(world: World, changes: dict[str, Any]) -> None:
    _check(world, _resigned(world, 2, **changes), {6})


def test_first_header_must_start_at_the_genesis(world: World) -> None:
    _check(world, _resigned(world, 1, prev="22" * 32), {6})


# --- gaps: the completeness claim fails, the records stay sound ---------------------------


@pytest.mark.parametrize("missing", [1, 2, TARGET_SEQ, 6])
def test_a_gap_in_the_window_is_incomplete_not_failed(world: World, missing: int) -> None:
    bundle = tampered(world.bundle(), _drop_coverage(missing))
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert statuses(result, "unchecked") == {6}
    assert result.check(6).detail == f"sequence {missing} missing from the claimed window"


def test_several_gaps_are_named(world: World) -> None:
    bundle = tampered(
        world.bundle(),
        lambda d: d["coverage"]["records"].__setitem__(slice(0, 2), []),
    )
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert result.check(6).detail == "sequences 1-2 missing from the claimed window"


# --- the key's validity at ingested_at ------------------------------------------------------


def _at(world: World, seq: int, shift: timedelta = timedelta(0)) -> str:
    return format_instant(world.ingested_at(seq) + shift)


@pytest.mark.parametrize(
    ("validity", "verdict"),
    [
        ({"not_before": "ingested"}, "VERIFIED"),
        ({"not_before": "ingested+1us"}, "FAILED"),
        ({"not_after": "ingested+1us"}, "VERIFIED"),
        ({"not_after": "ingested"}, "FAILED"),
        ({"revoked_at": "ingested+1us"}, "VERIFIED"),
        ({"revoked_at": "ingested"}, "FAILED"),
        ({"revoked_at": "ingested-1s"}, "FAILED"),
    ],
    ids=lambda value: str(value),
)
def test_key_validity_at_ingested_at(world: World, validity: dict[str, str], verdict: str) -> None:
    shifts = {
        "ingested": timedelta(0),
        "ingested+1us": timedelta(microseconds=1),
        "ingested-1s": timedelta(seconds=-1),
    }
    keys = world.keys(
        **{member: _at(world, TARGET_SEQ, shifts[when]) for member, when in validity.items()}
    )
    result = verify_bundle(world.bundle(coverage=None), keys, world.trust())
    assert result.verdict == verdict, result.checks
    assert statuses(result, "failed") == ({3} if verdict == "FAILED" else set())


def test_a_revoked_key_also_fails_the_later_covered_headers(world: World) -> None:
    keys = world.keys(revoked_at=_at(world, TARGET_SEQ, timedelta(seconds=-1)))
    result = verify_bundle(world.bundle(), keys, world.trust())
    assert statuses(result, "failed") == {3, 6}
    assert "seq 4" in result.check(6).detail


def test_offset_times_compare_as_instants(world: World) -> None:
    moment = world.ingested_at(TARGET_SEQ) + timedelta(microseconds=1)
    as_plus_one = (moment + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%f+01:00")
    result = verify_bundle(world.bundle(coverage=None), world.keys(not_before=as_plus_one))
    assert result.check(3).status == "failed"


# --- witness times from the future ----------------------------------------------------------


def test_a_cosignature_dated_in_the_future_fails(world: World) -> None:
    result = verify_bundle(
        world.bundle(), world.keys(), world.trust(), now=world.sealed_at - timedelta(minutes=10)
    )
    assert result.verdict == "FAILED"
    assert statuses(result, "failed") == {5}
    assert "cosignature_future" in result.check(5).detail


def test_tampering_is_detected_whatever_the_json_spelling(world: World) -> None:
    document = json.loads(world.bundle())
    spaced = json.dumps(document, indent=4, sort_keys=True).encode()
    assert verify_bundle(spaced, world.keys(), world.trust()).verdict == "VERIFIED"
    assert canonical_header(document["header"]) == world.target.canonical


def test_a_huge_claimed_window_is_named_not_enumerated(world: World) -> None:
    bundle = tampered(world.bundle(), _set("coverage.to_seq", 2**53 - 1))
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.verdict == "VERIFICATION INCOMPLETE"
    assert result.check(6).detail == (f"sequences 7-{2**53 - 1} missing from the claimed window")


def test_many_gaps_are_summarised(world: World) -> None:
    bundle = tampered(
        world.bundle(),
        lambda d: d["coverage"].update(
            from_seq=1, to_seq=20, records=d["coverage"]["records"][3:4]
        ),
    )
    result = verify_bundle(bundle, world.keys(), world.trust())
    assert result.check(6).status == "unchecked"
    assert result.check(6).detail == "sequences 1-3, 5-20 missing from the claimed window"


def test_a_naive_now_means_utc(world: World) -> None:
    naive = (world.sealed_at + timedelta(minutes=1)).replace(tzinfo=None)
    result = verify_bundle(world.bundle(), world.keys(), world.trust(), now=naive)
    assert result.verdict == "VERIFIED"

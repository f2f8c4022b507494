"""Malformed bundles: FAILED with the parse error in check 1, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest

from recordseal.verify import (
    BundleError,
    decode_bundle,
    verify_bundle,
)

from .conftest import statuses
from .factory import World


def _edited(world: World, edit: Any) -> bytes:
    document = json.loads(world.bundle())
    edit(document)
    return json.dumps(document).encode()


EDITS: dict[str, Any] = {
    "wrong format string": lambda d: d.update(format="recordseal/bundle/v2"),
    "no format": lambda d: d.pop("format"),
    "unknown member": lambda d: d.update(extra=1),
    "no header": lambda d: d.pop("header"),
    "header of another format": lambda d: d["header"].update(format="recordseal/header/v2"),
    "header with an unknown member": lambda d: d["header"].update(note="x"),
    "header without a member": lambda d: d["header"].pop("attestation"),
    "seq as a string": lambda d: d["header"].update(seq="4"),
    "seq as a fraction": lambda d: d["header"].update(seq=4.5),
    "seq zero": lambda d: d["header"].update(seq=0),
    "root of 31 bytes": lambda d: d["header"].update(root=d["header"]["root"][:-2]),
    "root in upper case": lambda d: d["header"].update(root=d["header"]["root"].upper()),
    "ingested_at not a time": lambda d: d["header"].update(ingested_at="yesterday"),
    "ingested_at on the 30th of February": lambda d: d["header"].update(
        ingested_at="2026-02-30T00:00:00Z"
    ),
    "signature not hex": lambda d: d.update(signature="xyz"),
    "signature of odd length": lambda d: d.update(signature=d["signature"][:-1]),
    "fields not a list": lambda d: d.update(fields={}),
    "salt not hex": lambda d: d["fields"][0].update(salt="zz" * 32),
    "proof node not hex": lambda d: d["fields"][0]["proof"].__setitem__(0, "0g"),
    "negative index": lambda d: d["fields"][0].update(index=-1),
    "index as a string": lambda d: d["fields"][0].update(index="0"),
    "field without a salt": lambda d: d["fields"][0].pop("salt"),
    "seal not an object": lambda d: d.update(seal="sealed"),
    "seal without proof": lambda d: d["seal"].pop("proof"),
    "token not base64": lambda d: d["seal"].update(
        timestamps=[{"authority": "tsa.example", "token": "not base64!"}]
    ),
    "token of non-canonical base64": lambda d: d["seal"].update(
        timestamps=[{"authority": "tsa.example", "token": "AB=="}]
    ),
    "consistency node not base64": lambda d: d["seal"].update(previous_consistency=["%%%"]),
    "coverage from_seq zero": lambda d: d["coverage"].update(from_seq=0),
    "coverage header missing a member": lambda d: d["coverage"]["records"][0]["header"].pop("prev"),
    "coverage signature not hex": lambda d: d["coverage"]["records"][0].update(signature="no"),
}

RAW: dict[str, bytes] = {
    "empty": b"",
    "not JSON": b"not json",
    "truncated": b'{"format": "recordseal/bundle/v1", ',
    "a JSON array": b"[]",
    "an empty object": b"{}",
    "a string": b'"recordseal/bundle/v1"',
    "invalid UTF-8": b'{"format": "\xff"}',
    "a byte-order mark": b"\xef\xbb\xbf{}",
    "a lone surrogate": b'{"format": "\\ud800"}',
    "a number beyond double range": b'{"format": 1e400}',
    "duplicate members": b'{"format": "recordseal/bundle/v1", "format": "recordseal/bundle/v1"}',
    "too deep": b"[" * 200 + b"]" * 200,
}


def _assert_malformed(bundle: bytes, world: World) -> None:
    for keys, trust in ((None, None), (world.keys(), world.trust())):
        result = verify_bundle(bundle, keys, trust)
        assert result.verdict == "FAILED"
        assert statuses(result, "failed") == {1}
        assert statuses(result, "unchecked") == set(range(2, 8))
        assert result.check(1).detail.startswith("malformed bundle: bundle: ")
        assert result.record is None
        assert result.disclosed == {}
        assert result.time_bracket.not_before is None


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS)
def test_malformed_member(world: World, edit: Any) -> None:
    _assert_malformed(_edited(world, edit), world)


@pytest.mark.parametrize("data", RAW.values(), ids=RAW)
def test_malformed_document(world: World, data: bytes) -> None:
    _assert_malformed(data, world)


def test_the_parse_error_names_the_member(world: World) -> None:
    result = verify_bundle(_edited(world, EDITS["salt not hex"]))
    assert "$.fields[0].salt" in result.check(1).detail
    result = verify_bundle(_edited(world, EDITS["header without a member"]))
    assert "attestation" in result.check(1).detail


#: The member each edit of EDITS breaks, as the detail names it (docs/bundle.md, "A malformed
#: bundle"): the member itself, not the object holding it; a missing or unknown member by
#: the object that lacks or holds it.
PATHS = {
    "wrong format string": "$.format",
    "no format": "$",
    "unknown member": "$",
    "no header": "$",
    "header of another format": "$.header.format",
    "header with an unknown member": "$.header",
    "header without a member": "$.header",
    "seq as a string": "$.header.seq",
    "seq as a fraction": "$.header.seq",
    "seq zero": "$.header.seq",
    "root of 31 bytes": "$.header.root",
    "root in upper case": "$.header.root",
    "ingested_at not a time": "$.header.ingested_at",
    "ingested_at on the 30th of February": "$.header.ingested_at",
    "signature not hex": "$.signature",
    "signature of odd length": "$.signature",
    "fields not a list": "$.fields",
    "salt not hex": "$.fields[0].salt",
    "proof node not hex": "$.fields[0].proof[0]",
    "negative index": "$.fields[0].index",
    "index as a string": "$.fields[0].index",
    "field without a salt": "$.fields[0]",
    "seal not an object": "$.seal",
    "seal without proof": "$.seal",
    "token not base64": "$.seal.timestamps[0].token",
    "token of non-canonical base64": "$.seal.timestamps[0].token",
    "consistency node not base64": "$.seal.previous_consistency[0]",
    "coverage from_seq zero": "$.coverage.from_seq",
    "coverage header missing a member": "$.coverage.records[0].header",
    "coverage signature not hex": "$.coverage.records[0].signature",
}


@pytest.mark.parametrize("name", EDITS)
def test_every_detail_names_the_member_as_a_path(world: World, name: str) -> None:
    result = verify_bundle(_edited(world, EDITS[name]))
    assert result.check(1).detail.endswith(f" - at `{PATHS[name]}`"), result.check(1).detail


def test_every_edit_has_its_path() -> None:
    assert PATHS.keys() == EDITS.keys()


def test_a_struct_check_names_its_member_in_the_rule_s_words(world: World) -> None:
    """A check of the struct's own (hex, base64, instants) reads as msgspec's do."""
    details = {
        name: verify_bundle(_edited(world, EDITS[name])).check(1).detail
        for name in ("signature not hex", "consistency node not base64", "ingested_at not a time")
    }
    assert details == {
        "signature not hex": "malformed bundle: bundle: Expected lowercase hex - at `$.signature`",
        "consistency node not base64": "malformed bundle: bundle: Expected canonical padded"
        " base64 - at `$.seal.previous_consistency[0]`",
        "ingested_at not a time": "malformed bundle: bundle: Expected an RFC 3339 date-time"
        " - at `$.header.ingested_at`",
    }


def test_duplicate_members_are_refused_where_they_are(world: World) -> None:
    text = world.bundle().decode().replace('"seq":4,', '"seq":4,"seq":5,', 1)
    result = verify_bundle(text.encode())
    assert "duplicate_member" in result.check(1).detail
    assert "$.header.seq" in result.check(1).detail


def test_decode_bundle_raises_one_error_class(world: World) -> None:
    for data in [*RAW.values(), _edited(world, EDITS["signature not hex"])]:
        with pytest.raises(BundleError):
            decode_bundle(data)

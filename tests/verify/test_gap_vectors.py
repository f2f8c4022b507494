"""tests/vectors/gaps.json through the Python verifier and the chain functions (the browser
verifier runs the same file: tests/verify_js/test_vectors.py)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recordseal.chain import (
    build_gap_header,
    canonical_header,
    chain_leaf,
    gap_signing_message,
)
from recordseal.crypto.signing import HeaderSigner, verify_signature
from recordseal.verify import (
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.checks import _gaps

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "gaps.json").read_text(encoding="utf-8")
)
NOW = datetime.fromisoformat(VECTORS["now"])
DOCS = Path(__file__).parents[2] / "docs" / "records.md"


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_expected_outcome(case: dict[str, Any]) -> None:
    keys = load_key_directory(json.dumps(VECTORS["keys"]))
    trust = load_trust_store(json.dumps(VECTORS["trust"]))
    result = verify_bundle(json.dumps(case["bundle"]).encode(), keys, trust, now=NOW)
    expected = case["expected"]
    assert result.verdict == expected["verdict"]
    assert [check.status for check in result.checks] == expected["statuses"]
    if "detail_6" in expected:
        assert result.check(6).detail == expected["detail_6"]


def test_the_example_gap_header() -> None:
    example = VECTORS["example"]
    header = example["header"]
    signer = HeaderSigner.from_seed(bytes.fromhex(example["seed"]))
    built = build_gap_header(
        tenant=header["tenant"],
        stream=header["stream"],
        from_seq=header["from_seq"],
        to_seq=header["to_seq"],
        reason=header["reason"],
        declared_at=header["declared_at"],
        prev=chain_leaf(example["previous_header"]["canonical"].encode()),
        key_id=signer.key_id,
    )
    assert built == header and list(built) == list(header)
    canonical = canonical_header(built)
    assert canonical.decode() == example["canonical"]
    assert chain_leaf(canonical).hex() == example["chain_leaf"]
    message = gap_signing_message(canonical)
    assert message == b"recordseal/gap/v1\x00" + canonical
    assert signer.sign_message(message).hex() == example["signature"]
    assert signer.public_key.hex() == example["public_key"]
    signature = bytes.fromhex(example["signature"])
    assert verify_signature(signer.public_key, message, signature)
    shown = " ".join((DOCS.read_text()).split())
    for text in (example["canonical"], example["chain_leaf"], example["public_key"]):
        assert text in shown
    assert f"{example['signature'][:64]} {example['signature'][64:]}" in shown
    # the record headers' context does not verify it: the two kinds never stand for each other
    assert not verify_signature(
        signer.public_key, b"recordseal/header/v1\x00" + canonical, signature
    )


@pytest.mark.parametrize(
    ("from_seq", "to_seq", "reason"),
    [(0, 3, "store_rolled_back"), (4, 3, "store_rolled_back"), (1, 1, ""), (1, 1, "Rolled"),
     (1, 1, "x" * 65)],
)  # fmt: skip
def test_build_gap_header_refuses(from_seq: int, to_seq: int, reason: str) -> None:
    with pytest.raises(ValueError):
        build_gap_header(
            tenant="acme",
            stream="orders",
            from_seq=from_seq,
            to_seq=to_seq,
            reason=reason,
            declared_at="2026-11-26T08:00:00.000000Z",
            prev=bytes(32),
            key_id="00" * 8,
        )


def test_build_gap_header_accepts_the_longest_reason() -> None:
    header = build_gap_header(
        tenant="acme",
        stream="orders",
        from_seq=1,
        to_seq=1,
        reason="a_1" * 21 + "z",
        declared_at="2026-11-26T08:00:00.000000Z",
        prev=bytes(32),
        key_id="00" * 8,
    )
    assert header["seq"] == 2 and len(header["reason"]) == 64


@given(
    st.integers(1, 40),
    st.integers(0, 40),
    st.lists(st.tuples(st.integers(1, 90), st.integers(0, 10)), max_size=8),
)
def test_missing_spans_are_what_no_span_covers(low: int, width: int, spans: list[Any]) -> None:
    """Check 6's span arithmetic (present seqs and declared ranges) against enumeration."""
    high = low + width
    present = sorted((first, first + extra) for first, extra in spans)
    covered = {seq for first, last in present for seq in range(first, last + 1)}
    expected = [seq for seq in range(low, high + 1) if seq not in covered]
    got = [seq for first, last in _gaps(low, high, present) for seq in range(first, last + 1)]
    assert got == expected

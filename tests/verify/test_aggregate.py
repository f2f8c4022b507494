"""Bundles proven through the deployment's aggregate log (docs/bundle.md, check 5, rules 5.7
to 5.14; docs/tlog.md, "The aggregate log"): the shared vectors of tests/vectors/aggregate.json
(the browser runs them too: tests/verify_js/test_vectors.py) and the worked example.

The rules' failing and unchecked outcomes are in tests/verify/test_outcomes.py.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recordseal.core import leaf_hash, verify_inclusion
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.tlog import (
    Cosignature,
    CosignatureVerifier,
    Ed25519Verifier,
    open_checkpoint,
    parse_note,
)
from recordseal.verify import load_key_directory, load_trust_store, verify_bundle
from recordseal.verify.tlogproof import parse_tlog_proof

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "aggregate.json").read_text(encoding="utf-8")
)
NOW = datetime.fromisoformat(VECTORS["now"])
TLOG_DOCS = Path(__file__).parents[2] / "docs" / "tlog.md"
Doc = dict[str, Any]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_expected_outcome(case: Doc) -> None:
    keys = load_key_directory(json.dumps(case["keys"]))
    trust = None if case["trust"] is None else load_trust_store(json.dumps(case["trust"]))
    result = verify_bundle(json.dumps(case["bundle"]).encode(), keys, trust, now=NOW)
    expected = case["expected"]
    assert result.verdict == expected["verdict"]
    assert [check.status for check in result.checks] == expected["statuses"]
    for number, text in expected["details"].items():
        assert text in result.check(int(number)).detail


def test_the_worked_example_holds_together() -> None:
    """The example's entry is the sealing checkpoint's, the path places it in the aggregate
    checkpoint, signed by the aggregate's key and cosigned by the public witness."""
    example = VECTORS["example"]
    sealing = example["sealing"]
    root = bytes.fromhex(sealing["root"])
    entry = aggregate_entry(sealing["origin"], sealing["size"], root)
    assert entry.hex() == example["entry"]
    assert leaf_hash(entry).hex() == example["leaf_hash"]
    checkpoint, _ = open_checkpoint(
        example["aggregate_checkpoint"], [Ed25519Verifier.from_vkey(example["aggregate_vkey"])]
    )
    assert checkpoint.origin == "recordseal.local"
    path = [bytes.fromhex(node) for node in example["path"]]
    verify_inclusion(entry, example["index"], checkpoint.size, path, checkpoint.root_hash)
    proof = parse_tlog_proof(example["proof"])
    assert (proof.index, list(proof.hashes)) == (example["index"], path)
    assert proof.checkpoint == example["aggregate_checkpoint"]
    note = parse_note(example["aggregate_checkpoint"])
    witness = CosignatureVerifier.from_vkey(example["public_witness_vkey"])
    (signature,) = [s for s in note.signatures if s.name == witness.name]
    cosignature = Cosignature.from_note_signature(signature)
    witness.verify_cosignature(note.text, cosignature)
    assert cosignature.time.isoformat() == "2026-11-26T08:00:01+00:00"


def test_docs_show_the_worked_example() -> None:
    """docs/tlog.md shows the example's preimage, entry, aggregate checkpoint and proof."""
    text = TLOG_DOCS.read_text()
    shown = text[text.index("## The aggregate log") : text.index("## Tiles")]
    example = VECTORS["example"]
    block = shown[shown.index("    preimage  ") : shown.index("    entry     ")]
    assert "".join(re.findall(r"\b[0-9a-f]{8,}\b", block)) == example["preimage"]
    for value in (example["entry"], example["leaf_hash"], *example["path"]):
        assert value in shown, value
    for text in (example["aggregate_checkpoint"], example["proof"]):
        for line in text.splitlines():
            assert line in shown, line

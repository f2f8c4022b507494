"""The malformed bundles of tests/vectors/malformed.json (the browser runs them too:
tests/verify_js/test_vectors.py): every verifier reports no record and no disclosed value
for them, as docs/bundle.md ("A malformed bundle") says: the library, and ``recordseal
verify`` in words and in JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recordseal.verify import load_key_directory, load_trust_store, verify_bundle

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "malformed.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_library_reports_no_record_and_no_values(case: dict[str, Any]) -> None:
    keys = load_key_directory(json.dumps(VECTORS["keys"]))
    trust = load_trust_store(json.dumps(VECTORS["trust"]))
    result = verify_bundle(case["bundle_text"].encode(), keys, trust)
    expected = case["expected"]
    assert result.verdict == expected["verdict"]
    assert [check.status for check in result.checks] == expected["statuses"]
    assert (result.record, result.disclosed) == (expected["record"], expected["disclosed"])
    assert result.check(1).detail.startswith(expected["detail_1"])
    assert expected["member"] in result.check(1).detail


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_command_line_reports_no_record_and_no_values(
    case: dict[str, Any], tmp_path: Path
) -> None:
    bundle, keys, trust = tmp_path / "bundle.json", tmp_path / "keys.json", tmp_path / "trust.json"
    bundle.write_text(case["bundle_text"], encoding="utf-8")
    keys.write_text(json.dumps(VECTORS["keys"]))
    trust.write_text(json.dumps(VECTORS["trust"]))
    command = [sys.executable, "-m", "recordseal.cli", "verify", str(bundle), "--keys", str(keys),
               "--trust", str(trust)]  # fmt: skip
    words = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert words.returncode == 1, words.stderr
    assert not words.stdout.startswith("record "), words.stdout
    assert "\ndisclosed\n" not in words.stdout
    assert "verdict     FAILED\n" in words.stdout
    as_json = subprocess.run(
        [*command, "--json"], capture_output=True, text=True, timeout=60, check=False
    )
    result = json.loads(as_json.stdout)
    assert (result["verdict"], result["record"], result["disclosed"]) == ("FAILED", None, {})
    assert set(result["time_bracket"].values()) == {None}

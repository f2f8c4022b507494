"""The shared vectors (tests/vectors/README.md) through the browser verifier, in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import STATIC, Harness

ROOT = Path(__file__).resolve().parents[2]


VECTOR_FILES = [
    "jcs",
    "numbers",
    "kinds",
    "records",
    "rfc6962",
    "gaps",
    "compromise",
    "mldsa44",
    "aggregate",
    "malformed",
]


@pytest.mark.parametrize("name", VECTOR_FILES)
def test_vector_file(harness: Harness, name: str) -> None:
    outcome = harness(name)
    assert outcome["count"] > 0
    assert outcome["mismatches"] == [], f"{len(outcome['mismatches'])} of {outcome['count']}"


def test_the_currency_list_is_the_core_list() -> None:
    data = ROOT / "python" / "recordseal" / "core" / "data" / "iso4217.txt"
    lines = (line.strip() for line in data.read_text().splitlines())
    expected = sorted(line for line in lines if line and not line.startswith("#"))
    module = (STATIC / "currencies.js").read_text()
    assert sorted(module.split('"')[1::2]) == expected

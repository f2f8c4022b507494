"""Native core against the reference (and against rfc8785 / orjson) on the same inputs.

Run with ``make bench-all``. Each benchmark is one group, so the table compares within a group.
"""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest
import rfc8785

from payloads import DECLARATIONS_1K, RECORD_ID, SALT_KEY, record_1k, record_4096
from recordseal.core import native, reference

IMPLEMENTATIONS = {"native": native, "reference": reference}
RECORD_1K = record_1k()
RECORD_4096 = record_4096()
LEAVES_4096 = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(4096)]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_commit_record_1k_20_fields(benchmark, impl):
    commit = IMPLEMENTATIONS[impl].commit_record
    benchmark.group = "commit_record 1 KB, 20 fields"
    result = benchmark(commit, RECORD_1K, DECLARATIONS_1K, False, SALT_KEY, RECORD_ID)
    assert result.field_count == 20


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_commit_record_4096_fields(benchmark, impl):
    commit = IMPLEMENTATIONS[impl].commit_record
    benchmark.group = "commit_record 4096 fields"
    result = benchmark(commit, RECORD_4096, None, False, SALT_KEY, RECORD_ID)
    assert result.field_count == 4096


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_canonicalize_1k(benchmark, impl):
    benchmark.group = "canonicalize 1 KB"
    out = benchmark(IMPLEMENTATIONS[impl].canonicalize, RECORD_1K)
    assert out == rfc8785.dumps(json.loads(RECORD_1K))


def test_canonicalize_1k_rfc8785_package(benchmark):
    benchmark.group = "canonicalize 1 KB"
    benchmark(lambda: rfc8785.dumps(json.loads(RECORD_1K)))


def test_canonicalize_1k_orjson_sorted(benchmark):
    """orjson loads + dumps(OPT_SORT_KEYS): fast, but not RFC 8785 (code-point order, numbers)."""
    benchmark.group = "canonicalize 1 KB"
    benchmark(lambda: orjson.dumps(orjson.loads(RECORD_1K), option=orjson.OPT_SORT_KEYS))


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_merkle_root_4096(benchmark, impl):
    benchmark.group = "merkle_root 4096 leaves"
    root = benchmark(IMPLEMENTATIONS[impl].merkle_root, LEAVES_4096)
    assert len(root) == 32


def test_merkle_root_4096_sha256_calls_baseline(benchmark):
    """The 8,191 SHA-256 calls the tree needs (4096 leaf + 4095 node hashes), via hashlib.

    hashlib pays Python's call overhead per hash; the native-only comparison without it is
    ``cargo bench`` in rust-core (benches/merkle.rs).
    """
    benchmark.group = "merkle_root 4096 leaves"
    leaf_inputs = [b"\x00" + leaf for leaf in LEAVES_4096]
    node_input = b"\x01" + bytes(64)
    sha256 = hashlib.sha256

    def calls() -> None:
        for data in leaf_inputs:
            sha256(data).digest()
        for _ in range(4095):
            sha256(node_input).digest()

    benchmark(calls)

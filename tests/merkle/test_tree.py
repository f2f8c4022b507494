"""Stored-node trees agree with the core's RFC 6962 functions over the full leaf list."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recordseal.core import (
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    merkle_root,
    verify_consistency,
    verify_inclusion,
)
from recordseal.merkle import tree


def build(leaves: list[bytes]) -> dict[tuple[int, int], bytes]:
    nodes: dict[tuple[int, int], bytes] = {}
    for size, data in enumerate(leaves):
        for level, index, digest in tree.nodes_completed_by_append(
            size, leaf_hash(data), lambda lv, ix: nodes[(lv, ix)]
        ):
            nodes[(level, index)] = digest
    return nodes


def reader(nodes):
    return lambda level, index: nodes[(level, index)]


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 64, 100])
def test_roots_and_proofs_match_the_core(count):
    leaves = [i.to_bytes(4, "big") for i in range(count)]
    nodes = build(leaves)
    for size in range(count + 1):
        expected_root = merkle_root(leaves[:size])
        assert tree.root(size, reader(nodes)) == expected_root
        for index in range(size):
            path = tree.inclusion_path(index, size, reader(nodes))
            assert path == inclusion_proof(leaves[:size], index)
            verify_inclusion(leaves[index], index, size, path, expected_root)
        for old in range(size + 1):
            proof = tree.consistency_path(old, size, reader(nodes))
            assert proof == consistency_proof(leaves[:size], old)
            verify_consistency(old, size, merkle_root(leaves[:old]), expected_root, proof)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.data())
def test_large_trees_read_few_nodes(size, data):
    index = data.draw(st.integers(0, size - 1))
    old = data.draw(st.integers(0, size))
    bound = 2 * size.bit_length() ** 2 + 2
    assert len(tree.nodes_needed(lambda n: tree.root(size, n))) <= size.bit_length()
    assert len(tree.nodes_needed(lambda n: tree.inclusion_path(index, size, n))) <= bound
    assert len(tree.nodes_needed(lambda n: tree.consistency_path(old, size, n))) <= bound


def test_stored_nodes_are_only_complete_subtrees():
    nodes = build([bytes([i]) for i in range(6)])
    assert sorted(nodes) == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
        (1, 1),
        (1, 2),
        (2, 0),
    ]


def test_out_of_range_requests_are_refused():
    nodes = build([b"a", b"b"])
    with pytest.raises(ValueError):
        tree.inclusion_path(2, 2, reader(nodes))
    with pytest.raises(ValueError):
        tree.consistency_path(3, 2, reader(nodes))

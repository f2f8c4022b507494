"""Log growth: the native ``grow_log`` (``rust-core/src/log.rs``) creates the same nodes, in
the same order, and the same root as the reference ``merkle.log.grow_log``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recordseal._native import grow_log as native
from recordseal.core import leaf_hash, merkle_root
from recordseal.merkle import log
from recordseal.merkle.log import Growth, LogGap, grow, grow_log

GrowLog = Callable[
    [int, Sequence[bytes], Mapping[tuple[int, int], bytes]],
    tuple[dict[tuple[int, int], bytes], bytes],
]
GENESIS = hashlib.sha256(b"genesis").digest()


def digest(label: object) -> bytes:
    return hashlib.sha256(str(label).encode()).digest()


def frontier_of(size: int) -> dict[tuple[int, int], bytes]:
    """Made-up frontier hashes: both implementations read them the same way."""
    return {node: digest(node) for node in log.frontier(size)}


def test_grow_uses_the_native_core() -> None:
    assert log._grow_log is native


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 5000),
    count=st.integers(0, 600),
    seed=st.integers(0, 2**32),
)
def test_native_and_reference_grow_alike(size: int, count: int, seed: int) -> None:
    leaves = [digest((seed, i)) for i in range(count)]
    stored = frontier_of(size)
    nodes, root = native(size, leaves, stored)
    expected_nodes, expected_root = grow_log(size, leaves, stored)
    assert list(nodes.items()) == list(expected_nodes.items())
    assert root == expected_root


@pytest.fixture(params=["native", "reference"])
def implementation(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """Runs a test of ``grow`` once through each implementation."""
    if request.param == "reference":
        monkeypatch.setattr(log, "_grow_log", grow_log)
    yield request.param


@settings(max_examples=50, deadline=None)
@given(batches=st.lists(st.integers(0, 300), min_size=1, max_size=6))
def test_grow_in_batches_matches_merkle_root(batches: list[int]) -> None:
    """From size 0 (the genesis leaf first), batch after batch, through both implementations;
    each seal's root is the MTH of the whole log."""
    grown: dict[str, tuple[dict[tuple[int, int], bytes], list[bytes]]] = {}
    implementations: list[tuple[str, GrowLog]] = [("native", native), ("reference", grow_log)]
    for name, grow_nodes in implementations:
        stored: dict[tuple[int, int], bytes] = {}
        data, size, roots = [GENESIS], 0, list[bytes]()
        for batch in batches:
            chain_data = [digest((len(data) + i,)) for i in range(batch)]
            pending = [
                (log.first_pending(size) + i, leaf_hash(d)) for i, d in enumerate(chain_data)
            ]
            growth = _grow(size, pending, stored, grow_nodes)
            if growth is None:
                assert size > 0 and batch == 0
                continue
            data += chain_data
            assert (growth.first_index, growth.size) == (max(size, 1), len(data))
            assert growth.root == merkle_root(data)
            stored.update(growth.nodes)
            size, roots = growth.size, [*roots, growth.root]
        grown[name] = (stored, roots)
    assert grown["native"] == grown["reference"]


def _grow(
    size: int,
    pending: list[tuple[int, bytes]],
    stored: dict[tuple[int, int], bytes],
    grow_nodes: GrowLog,
) -> Growth | None:
    """``grow`` through ``grow_nodes`` (a hypothesis test cannot use the monkeypatch fixture)."""
    previous = log._grow_log
    log._grow_log = grow_nodes
    try:
        return grow(size, GENESIS, pending, stored)
    finally:
        log._grow_log = previous


def test_size_zero_with_nothing_pending_appends_the_genesis(implementation: str) -> None:
    growth = grow(0, GENESIS, [], {})
    assert growth == Growth(1, 1, leaf_hash(GENESIS), {(0, 0): leaf_hash(GENESIS)})
    assert grow(1, GENESIS, [], {(0, 0): leaf_hash(GENESIS)}) is None


@pytest.mark.parametrize(
    ("size", "positions", "message"),
    [
        (0, [2], "leaf 2 pending where 1 comes next"),
        (5, [5, 6, 8], "leaf 8 pending where 7 comes next"),
        (5, [5, 5], "leaf 5 pending where 6 comes next"),
        (5, [4], "leaf 4 pending where 5 comes next"),
    ],
)
def test_a_gap_is_refused(
    implementation: str, size: int, positions: list[int], message: str
) -> None:
    pending = [(position, digest(position)) for position in positions]
    with pytest.raises(LogGap, match=message):
        grow(size, GENESIS, pending, frontier_of(size))


def test_a_missing_frontier_node_is_a_key_error(implementation: str) -> None:
    stored = frontier_of(6)
    del stored[(1, 2)]
    with pytest.raises(KeyError):
        grow(6, GENESIS, [(6, digest(6))], stored)


@pytest.mark.parametrize("length", [0, 31, 33])
def test_native_refuses_hashes_of_another_length(length: int) -> None:
    with pytest.raises(ValueError, match=f"leaf hash 1 is {length} bytes, not 32"):
        native(0, [digest(0), bytes(length)], {})
    stored = {(0, 0): bytes(length)}
    with pytest.raises(ValueError, match=rf"stored node \(0, 0\) is {length} bytes, not 32"):
        native(1, [digest(1)], stored)

"""Sealing one (tenant, fleet) log, written once for every backend.

Records take their log positions when they are inserted (a counter per log, in the insert
transaction), so a seal never touches a record row: it reads the leaves from the log's sealed
size on, hashes them into the stored complete-subtree nodes (``merkle.tree``; the native core
does it when it is built) and signs a checkpoint. A backend reads the log's row, the nodes on
its frontier and the pending leaves under its own locks, calls :func:`grow`, and writes what
it returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recordseal.core import leaf_hash
from recordseal.core.backend import extension
from recordseal.merkle import tree


def frontier(size: int) -> set[tree.NodeId]:
    """The complete subtrees of a tree of ``size`` leaves: every node an append or the root
    reads is one of these or one the append creates."""
    return {(level, (size >> level) - 1) for level in range(size.bit_length()) if size >> level & 1}


def first_pending(size: int) -> int:
    """The position of the first leaf a log of sealed ``size`` has not sealed: leaf 0 is the
    genesis root, appended by the first seal, so records start at 1."""
    return max(size, 1)


@dataclass(frozen=True, slots=True)
class Growth:
    """What one seal adds to a log: its new nodes, size and root."""

    first_index: int  # the first record leaf this seal adds (the genesis leaf not counted)
    size: int
    root: bytes
    nodes: dict[tree.NodeId, bytes]


class LogGap(AssertionError):
    """Pending leaves are not the positions that follow the sealed size (never expected:
    positions are assigned densely by the insert transactions)."""


def grow_log(
    size: int, leaf_hashes: Sequence[bytes], stored: Mapping[tree.NodeId, bytes]
) -> tuple[dict[tree.NodeId, bytes], bytes]:
    """Append ``leaf_hashes`` to a log of ``size`` leaves whose frontier nodes are ``stored``:
    every node completed, in the order they complete, and the new root. The reference of the
    native ``grow_log`` (``rust-core/src/log.rs``), which :func:`grow` uses when it is built."""
    created: dict[tree.NodeId, bytes] = {}

    def node(level: int, index: int) -> bytes:
        found = created.get((level, index))
        return found if found is not None else stored[(level, index)]

    for leaf in leaf_hashes:
        for level, index, digest in tree.nodes_completed_by_append(size, leaf, node):
            created[(level, index)] = digest
        size += 1
    return created, tree.root(size, node)


if extension is not None:
    from recordseal._native import grow_log as _grow_log
else:
    _grow_log = grow_log

#: :func:`grow_log`, native when the extension is built: what every seal grows a log with.
grow_nodes = _grow_log


def grow(
    size: int,
    genesis: bytes,
    pending: Sequence[tuple[int, bytes]],
    stored: Mapping[tree.NodeId, bytes],
) -> Growth | None:
    """Append ``pending`` (position, chain leaf) leaves, in position order, to a log of
    ``size`` leaves whose frontier nodes are ``stored``; a log of size 0 first gets leaf 0,
    the ``genesis`` root. None when there is nothing to add."""
    if not pending and size > 0:
        return None
    first_index = first_pending(size)
    positions = [position for position, _ in pending]
    if positions != list(range(first_index, first_index + len(positions))):
        offset = next(i for i, p in enumerate(positions) if p != first_index + i)
        raise LogGap(f"leaf {positions[offset]} pending where {first_index + offset} comes next")
    leaves = [chain_leaf for _, chain_leaf in pending]
    if size == 0:
        leaves.insert(0, leaf_hash(genesis))
    nodes, root = _grow_log(size, leaves, stored)
    return Growth(first_index, size + len(leaves), root, nodes)

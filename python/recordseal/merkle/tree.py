"""RFC 6962 trees kept as stored nodes, for logs too large to re-hash on every seal.

A log stores the hash of every *complete* subtree once it is complete: node ``(level, index)``
covers leaves ``[index * 2**level, (index + 1) * 2**level)``. Appending a leaf adds one node per
level it completes; the root and every proof of RFC 6962 section 2.1 are then computed from
O(log n) stored nodes, whatever the size of the log.

The functions take ``node(level, index) -> bytes``. Which nodes they read depends only on the
sizes and indexes, never on hash values, so an async store can first collect the ids with
:func:`nodes_needed` and fetch them in one query.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

NodeId = tuple[int, int]
NodeReader = Callable[[int, int], bytes]

_PLACEHOLDER = bytes(32)


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _largest_power_of_two_below(n: int) -> int:
    """The k of RFC 6962: the largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def nodes_completed_by_append(
    size: int, leaf_hash: bytes, node: NodeReader
) -> list[tuple[int, int, bytes]]:
    """The nodes that become complete when the leaf with index ``size`` is appended.

    The first is the leaf itself (level 0); each further one joins a completed left sibling.
    """
    created = [(0, size, leaf_hash)]
    level, index, current = 0, size, leaf_hash
    while index % 2 == 1:
        current = node_hash(node(level, index - 1), current)
        level, index = level + 1, index // 2
        created.append((level, index, current))
    return created


def subtree_hash(begin: int, end: int, node: NodeReader) -> bytes:
    """MTH of leaves ``[begin, end)``, where ``begin`` is aligned to the subtree's split."""
    width = end - begin
    if width & (width - 1) == 0:
        level = width.bit_length() - 1
        return node(level, begin >> level)
    k = _largest_power_of_two_below(width)
    return node_hash(subtree_hash(begin, begin + k, node), subtree_hash(begin + k, end, node))


def root(size: int, node: NodeReader) -> bytes:
    """MTH of the first ``size`` leaves; the empty tree's root is SHA-256 of nothing."""
    if size == 0:
        return hashlib.sha256(b"").digest()
    return subtree_hash(0, size, node)


def inclusion_path(index: int, size: int, node: NodeReader) -> list[bytes]:
    """PATH(index, D[0:size]) of RFC 6962 2.1.1, nodes from the leaf upwards."""
    if not 0 <= index < size:
        raise ValueError(f"index {index} is outside a tree of size {size}")

    def path(m: int, begin: int, end: int) -> list[bytes]:
        if end - begin == 1:
            return []
        k = _largest_power_of_two_below(end - begin)
        if m < k:
            return [*path(m, begin, begin + k), subtree_hash(begin + k, end, node)]
        return [*path(m - k, begin + k, end), subtree_hash(begin, begin + k, node)]

    return path(index, 0, size)


def consistency_path(old_size: int, new_size: int, node: NodeReader) -> list[bytes]:
    """PROOF(old_size, D[0:new_size]) of RFC 6962 2.1.2; empty for 0 and equal sizes."""
    if not 0 <= old_size <= new_size:
        raise ValueError(f"no consistency proof from size {old_size} to {new_size}")
    if old_size in (0, new_size):
        return []

    def subproof(m: int, begin: int, end: int, whole: bool) -> list[bytes]:
        n = end - begin
        if m == n:
            return [] if whole else [subtree_hash(begin, end, node)]
        k = _largest_power_of_two_below(n)
        if m <= k:
            return [*subproof(m, begin, begin + k, whole), subtree_hash(begin + k, end, node)]
        return [*subproof(m - k, begin + k, end, False), subtree_hash(begin, begin + k, node)]

    return subproof(old_size, 0, new_size, True)


def nodes_needed(compute: Callable[[NodeReader], object]) -> set[NodeId]:
    """The node ids ``compute`` reads (it is run once on placeholder hashes)."""
    seen: set[NodeId] = set()

    def record(level: int, index: int) -> bytes:
        seen.add((level, index))
        return _PLACEHOLDER

    compute(record)
    return seen

"""RFC 6962 Merkle trees (docs/spec.md section 5).

Trees and proofs are transcribed from RFC 6962 section 2.1; the verifiers from RFC 9162
sections 2.1.3.2 and 2.1.4.2, with the error codes of the spec.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..errors import CommitError

HASH_SIZE = 32
#: The largest tree size (as in the native core, whose sizes are 64-bit).
MAX_SIZE = 2**64 - 1


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""
    return _sha256(b"\x00" + data)


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node: SHA-256(0x01 || left || right)."""
    return _sha256(b"\x01" + left + right)


def _split(n: int) -> int:
    """k, the largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) (section 2.1); the root of no leaves is SHA-256 of the empty string."""
    n = len(leaves)
    if n == 0:
        return _sha256(b"")
    if n == 1:
        return leaf_hash(leaves[0])
    k = _split(n)
    return node_hash(merkle_root(leaves[:k]), merkle_root(leaves[k:]))


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """PATH(m, D[n]) (section 2.1.1): the audit path of ``leaves[index]``, leaf upwards."""
    if not 0 <= index < len(leaves):
        raise CommitError("index_out_of_range", "the index must lie in 0..len(leaves)")
    return _path(index, leaves)


def _path(m: int, leaves: Sequence[bytes]) -> list[bytes]:
    n = len(leaves)
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return [*_path(m, leaves[:k]), merkle_root(leaves[k:])]
    return [*_path(m - k, leaves[k:]), merkle_root(leaves[:k])]


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """PROOF(m, D[n]) (section 2.1.2), from the first ``old_size`` leaves to all of them."""
    if not 0 <= old_size <= len(leaves):
        raise CommitError("size_invalid", "old_size must lie in 0..=len(leaves)")
    if old_size == 0:
        return []
    return _subproof(old_size, leaves, True)


def _subproof(m: int, leaves: Sequence[bytes], complete: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b); ``complete`` is b: D[0:m] is a subtree the verifier knows."""
    n = len(leaves)
    if m == n:
        return [] if complete else [merkle_root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], complete), merkle_root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), merkle_root(leaves[:k])]


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 2.1.3.2: raise CommitError unless ``proof`` puts ``leaf`` at ``index``."""
    # In the order of docs/spec.md section 5: a negative index, a negative size, index >= size.
    if index < 0:
        raise CommitError("index_out_of_range", "the index must be below the tree size")
    if size < 0:
        raise CommitError("size_invalid", "the tree size must not be negative")
    if index >= size:
        raise CommitError("index_out_of_range", "the index must be below the tree size")
    if size > MAX_SIZE:
        raise _beyond_max_size()
    _check_nodes(proof, _path_length(index, size))
    fn, sn = index, size - 1
    r = leaf_hash(leaf)
    for p in proof:
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    _check_root("root", root, r)


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 2.1.4.2: raise CommitError unless the old tree is a prefix of the new one."""
    if old_size < 0 or new_size < 0 or old_size > new_size:
        raise CommitError("size_invalid", "old_size must not exceed new_size")
    if old_size == 0:
        # Every tree extends the empty tree, whatever roots are given.
        _check_nodes(proof, 0)
        return
    if old_size == new_size:
        _check_nodes(proof, 0)
        _check_root("new root", new_root, old_root)
        return
    if new_size > MAX_SIZE:
        raise _beyond_max_size()
    power_of_two = old_size & (old_size - 1) == 0
    # The proof is the end of the audit path of leaf old_size - 1, from the level of the
    # largest complete subtree the old tree ends with; that subtree's root starts it (given
    # as the old root when the old tree is that subtree).
    shift = (old_size & -old_size).bit_length() - 1
    needed = _path_length(old_size - 1, new_size) - shift + (0 if power_of_two else 1)
    _check_nodes(proof, needed)
    path = list(proof)
    if power_of_two:
        # A power of two: the old tree is itself a node of the new tree.
        if len(old_root) != HASH_SIZE:
            _check_root("old root", old_root, b"")
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    _check_root("old root", old_root, fr)
    _check_root("new root", new_root, sr)


def _path_length(index: int, size: int) -> int:
    """How many nodes the audit path of ``index`` in a tree of ``size`` leaves has: those
    below the level where the paths to ``index`` and to the last leaf part (inner), and one
    per level above it where ``index`` is a right child (border)."""
    inner = (index ^ (size - 1)).bit_length()
    return inner + bin(index >> inner).count("1")


def _check_nodes(proof: Sequence[bytes], needed: int) -> None:
    """The node count the sizes call for, then the size of every node."""
    if len(proof) != needed:
        message = f"the proof has {len(proof)} nodes where {needed} are needed"
        raise CommitError("proof_invalid", message)
    if any(len(node) != HASH_SIZE for node in proof):
        raise CommitError("proof_invalid", "every proof node must be 32 bytes")


def _beyond_max_size() -> CommitError:
    return CommitError("proof_invalid", "tree sizes are limited to 2^64 - 1 leaves")


def _check_root(name: str, expected: bytes, computed: bytes) -> None:
    if computed != expected:
        message = (
            f"the proof does not reproduce the {name}: expected {expected.hex()},"
            f" computed {computed.hex()}"
        )
        raise CommitError("root_mismatch", message)

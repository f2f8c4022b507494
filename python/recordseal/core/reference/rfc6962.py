"""RFC 6962 Merkle trees (docs/spec.md section 5).

Trees and proofs are transcribed from RFC 6962 section 2.1; the verifiers from RFC 9162
sections 2.1.3.2 and 2.1.4.2, with the error codes of the spec.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..errors import CommitError

HASH_SIZE = 32


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
        message = f"index {index} is outside a tree of {len(leaves)} leaves"
        raise CommitError("index_out_of_range", message)
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
        message = f"old size {old_size} is not between 0 and the tree size {len(leaves)}"
        raise CommitError("size_invalid", message)
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
    if index < 0:
        raise CommitError("index_out_of_range", f"index {index} is negative")
    if size < 0:
        raise CommitError("size_invalid", f"tree size {size} is negative")
    if index >= size:
        message = f"index {index} is outside a tree of {size} leaves"
        raise CommitError("index_out_of_range", message)
    _check_nodes(proof)
    fn, sn = index, size - 1
    r = leaf_hash(leaf)
    for p in proof:
        if sn == 0:
            raise _wrong_length("inclusion")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise _wrong_length("inclusion")
    _check_root("root", root, r)


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 2.1.4.2: raise CommitError unless the old tree is a prefix of the new one."""
    if old_size < 0 or new_size < 0 or old_size > new_size:
        message = f"sizes {old_size} and {new_size}: need 0 <= old size <= new size"
        raise CommitError("size_invalid", message)
    if old_size == 0:
        # Every tree extends the empty tree, whatever roots are given.
        if proof:
            raise _wrong_length("consistency")
        return
    if old_size == new_size:
        if proof:
            raise _wrong_length("consistency")
        _check_root("new root", new_root, old_root)
        return
    if not proof:
        raise _wrong_length("consistency")
    _check_nodes(proof)
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        # A power of two: the old tree is itself a node of the new tree.
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise _wrong_length("consistency")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise _wrong_length("consistency")
    _check_root("old root", old_root, fr)
    _check_root("new root", new_root, sr)


def _check_nodes(proof: Sequence[bytes]) -> None:
    for position, node in enumerate(proof):
        if len(node) != HASH_SIZE:
            message = f"proof node {position} has {len(node)} bytes, not {HASH_SIZE}"
            raise CommitError("proof_invalid", message)


def _wrong_length(kind: str) -> CommitError:
    return CommitError("proof_invalid", f"{kind} proof has the wrong number of nodes")


def _check_root(name: str, expected: bytes, computed: bytes) -> None:
    if computed != expected:
        message = f"{name} mismatch: expected {expected.hex()}, computed {computed.hex()}"
        raise CommitError("root_mismatch", message)

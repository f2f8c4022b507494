"""Write rfc6962.json: the Certificate Transparency 8-leaf test tree and mutated proofs.

Run from the repository root: ``python tests/vectors/generate_rfc6962.py``.

The leaves, the roots of sizes 1..8 and the known proofs are transcribed from
transparency-dev/merkle ``proof/verify_test.go`` (commit 02194e9afb6c1d95b5381350007963aa70fff472),
which inherited them from Certificate Transparency. Every other good proof is computed below by a
transcription of RFC 6962 section 2.1 (MTH, PATH, PROOF); the script refuses to write anything
unless that transcription reproduces every transcribed root and proof.

Negative cases are made by mutating each good proof, as transparency-dev/merkle does
(``corruptInclusionProof`` / ``corruptConsistencyProof``), plus node-size mutations. Their
expected code follows docs/spec.md section 5, in its order: sizes, then proof length and node
size (``proof_invalid``), then the roots (``root_mismatch``); the root comparison is an
independent transcription of RFC 9162 sections 2.1.3.2 and 2.1.4.2.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

LEAVES = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
]

# roots[size - 1], from verify_test.go.
KNOWN_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
SOME_HASH = "abacaba000000000000000000000000000000000000000000060061e00123456"

# (index, size, proof); verify_test.go numbers leaves from 1, these indexes are 0-based.
KNOWN_INCLUSION = [
    (0, 1, []),
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]

# (old_size, new_size, proof), from verify_test.go.
KNOWN_CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
]


# --- RFC 6962 section 2.1 ------------------------------------------------------------------


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(d: list[bytes]) -> bytes:
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = _split(len(d))
    return hashlib.sha256(b"\x01" + mth(d[:k]) + mth(d[k:])).digest()


def path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = _split(len(d))
    if m < k:
        return [*path(m, d[:k]), mth(d[k:])]
    return [*path(m - k, d[k:]), mth(d[:k])]


def subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    if m == len(d):
        return [] if b else [mth(d)]
    k = _split(len(d))
    if m <= k:
        return [*subproof(m, d[:k], b), mth(d[k:])]
    return [*subproof(m - k, d[k:], False), mth(d[:k])]


def proof(m: int, d: list[bytes]) -> list[bytes]:
    return [] if m in (0, len(d)) else subproof(m, d, True)


# --- RFC 9162 sections 2.1.3.2 and 2.1.4.2, split as docs/spec.md section 5 reports ----------


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def inclusion_error(
    leaf: bytes, index: int, size: int, nodes: list[bytes], root: bytes
) -> str | None:
    if index >= size:
        return "index_out_of_range"
    if any(len(p) != 32 for p in nodes):
        return "proof_invalid"
    fn, sn = index, size - 1
    r = hashlib.sha256(b"\x00" + leaf).digest()
    for p in nodes:
        if sn == 0:
            return "proof_invalid"  # too many nodes
        if fn & 1 or fn == sn:
            r = _node(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        return "proof_invalid"  # too few nodes
    return None if r == root else "root_mismatch"


def consistency_error(
    old: int, new: int, old_root: bytes, new_root: bytes, nodes: list[bytes]
) -> str | None:
    if old > new:
        return "size_invalid"
    if old == 0:
        return "proof_invalid" if nodes else None
    if old == new:
        if nodes:
            return "proof_invalid"
        return None if old_root == new_root else "root_mismatch"
    if not nodes or any(len(p) != 32 for p in nodes):
        return "proof_invalid"
    path_ = [old_root, *nodes] if old & (old - 1) == 0 else list(nodes)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path_[0]
    for c in path_[1:]:
        if sn == 0:
            return "proof_invalid"
        if fn & 1 or fn == sn:
            fr = _node(c, fr)
            sr = _node(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        return "proof_invalid"
    return None if fr == old_root and sr == new_root else "root_mismatch"


# --- mutations ------------------------------------------------------------------------------


def _flip(node: bytes, mask: int) -> bytes:
    return bytes([node[0] ^ mask]) + node[1:]


def inclusion_mutations(leaf, index, size, nodes, root):
    some, empty = bytes.fromhex(SOME_HASH), bytes.fromhex(EMPTY_ROOT)
    yield "index - 1", leaf, index - 1, size, nodes, root
    yield "index + 1", leaf, index + 1, size, nodes, root
    yield "index ^ 2", leaf, index ^ 2, size, nodes, root
    yield "index = size", leaf, size, size, nodes, root
    yield "size * 2", leaf, index, size * 2, nodes, root
    yield "size / 2", leaf, index, size // 2, nodes, root
    yield "size + 1", leaf, index, size + 1, nodes, root
    yield "wrong leaf", b"WrongLeaf", index, size, nodes, root
    yield (
        "leaf hash given as leaf data",
        hashlib.sha256(b"\x00" + leaf).digest(),
        index,
        size,
        nodes,
        root,
    )
    yield "empty root", leaf, index, size, nodes, empty
    yield "random root", leaf, index, size, nodes, some
    yield "short root", leaf, index, size, nodes, b"WrongRoot"
    yield "trailing garbage", leaf, index, size, [*nodes, b""], root
    yield "trailing root", leaf, index, size, [*nodes, root], root
    yield "preceding garbage", leaf, index, size, [b"", *nodes], root
    yield "preceding root", leaf, index, size, [root, *nodes], root
    for i, node in enumerate(nodes):
        yield f"modified proof[{i}] bit 3", leaf, index, size, _edit(nodes, i, _flip(node, 8)), root
        yield (
            f"proof[{i}] with a trailing byte",
            leaf,
            index,
            size,
            _edit(nodes, i, node + b"\x00"),
            root,
        )
        yield (
            f"proof[{i}] truncated to 31 bytes",
            leaf,
            index,
            size,
            _edit(nodes, i, node[:31]),
            root,
        )
    if nodes:
        yield "removed component", leaf, index, size, nodes[:-1], root
    if len(nodes) > 1:
        yield "inserted component", leaf, index, size, [nodes[0], some, *nodes[1:]], root
        yield "swapped components", leaf, index, size, [nodes[1], nodes[0], *nodes[2:]], root


def consistency_mutations(old, new, old_root, new_root, nodes):
    yield "old_size - 1", old - 1, new, old_root, new_root, nodes
    yield "old_size + 1", old + 1, new, old_root, new_root, nodes
    yield "old_size ^ 2", old ^ 2, new, old_root, new_root, nodes
    yield "new_size * 2", old, new * 2, old_root, new_root, nodes
    yield "new_size / 2", old, new // 2, old_root, new_root, nodes
    yield "sizes swapped", new, old, old_root, new_root, nodes
    yield "wrong old root", old, new, b"WrongRoot", new_root, nodes
    yield "wrong new root", old, new, old_root, b"WrongRoot", nodes
    yield "old root flipped", old, new, _flip(old_root, 16), new_root, nodes
    yield "new root flipped", old, new, old_root, _flip(new_root, 16), nodes
    yield "swapped roots", old, new, new_root, old_root, nodes
    yield "empty proof", old, new, old_root, new_root, []
    yield "trailing garbage", old, new, old_root, new_root, [*nodes, b""]
    yield "trailing old root", old, new, old_root, new_root, [*nodes, old_root]
    yield "trailing new root", old, new, old_root, new_root, [*nodes, new_root]
    yield "preceding garbage", old, new, old_root, new_root, [b"", *nodes]
    yield "preceding old root", old, new, old_root, new_root, [old_root, *nodes]
    yield "preceding new root", old, new, old_root, new_root, [new_root, *nodes]
    if nodes:
        yield "preceding proof[0]", old, new, old_root, new_root, [nodes[0], *nodes]
        yield "truncated proof", old, new, old_root, new_root, nodes[:-1]
    for i, node in enumerate(nodes):
        yield (
            f"modified proof[{i}] bit 4",
            old,
            new,
            old_root,
            new_root,
            _edit(nodes, i, _flip(node, 16)),
        )
        yield (
            f"proof[{i}] with a trailing byte",
            old,
            new,
            old_root,
            new_root,
            _edit(nodes, i, node + b"\x00"),
        )
        yield (
            f"proof[{i}] truncated to 31 bytes",
            old,
            new,
            old_root,
            new_root,
            _edit(nodes, i, node[:31]),
        )


def _edit(nodes: list[bytes], i: int, node: bytes) -> list[bytes]:
    out = list(nodes)
    out[i] = node
    return out


def _hexes(nodes: list[bytes]) -> list[str]:
    return [n.hex() for n in nodes]


def main() -> None:
    d = [bytes.fromhex(x) for x in LEAVES]
    roots = {n: mth(d[:n]) for n in range(len(d) + 1)}
    assert roots[0].hex() == EMPTY_ROOT
    assert [roots[n].hex() for n in range(1, 9)] == KNOWN_ROOTS, "MTH does not match CT's roots"
    for index, size, known in KNOWN_INCLUSION:
        assert _hexes(path(index, d[:size])) == known, (index, size)
    for old, new, known in KNOWN_CONSISTENCY:
        assert _hexes(proof(old, d[:new])) == known, (old, new)

    inclusion, consistency, inclusion_neg, consistency_neg = [], [], [], []
    for size in range(1, 9):
        for index in range(size):
            nodes = path(index, d[:size])
            assert inclusion_error(d[index], index, size, nodes, roots[size]) is None
            inclusion.append({"index": index, "size": size, "proof": _hexes(nodes)})
    for new in range(0, 9):
        for old in range(0, new + 1):
            nodes = proof(old, d[:new])
            assert consistency_error(old, new, roots[old], roots[new], nodes) is None
            consistency.append({"old_size": old, "new_size": new, "proof": _hexes(nodes)})

    seen = set()
    for index, size, _ in KNOWN_INCLUSION:
        good = path(index, d[:size])
        for name, leaf, i, n, nodes, root in inclusion_mutations(
            d[index], index, size, good, roots[size]
        ):
            if i < 0:
                continue
            code = inclusion_error(leaf, i, n, nodes, root)
            key = (leaf, i, n, tuple(nodes), root)
            if code is None or key in seen:
                continue
            seen.add(key)
            inclusion_neg.append(
                {
                    "name": f"inclusion {index}/{size}: {name}",
                    "leaf": leaf.hex(),
                    "index": i,
                    "size": n,
                    "proof": _hexes(nodes),
                    "root": root.hex(),
                    "error": {"code": code, "field": None},
                }
            )
    for old, new, _ in [*KNOWN_CONSISTENCY, (0, 8, []), (8, 8, []), (4, 8, None), (3, 7, None)]:
        good = proof(old, d[:new])
        for name, o, n, r1, r2, nodes in consistency_mutations(
            old, new, roots[old], roots[new], good
        ):
            if o < 0:
                continue
            code = consistency_error(o, n, r1, r2, nodes)
            key = (o, n, r1, r2, tuple(nodes))
            if code is None or key in seen:
                continue
            seen.add(key)
            consistency_neg.append(
                {
                    "name": f"consistency {old}->{new}: {name}",
                    "old_size": o,
                    "new_size": n,
                    "old_root": r1.hex(),
                    "new_root": r2.hex(),
                    "proof": _hexes(nodes),
                    "error": {"code": code, "field": None},
                }
            )

    out = {
        "leaves": LEAVES,
        "roots": [{"size": n, "root": roots[n].hex()} for n in range(len(d) + 1)],
        "inclusion": inclusion,
        "consistency": consistency,
        "inclusion_negative": inclusion_neg,
        "consistency_negative": consistency_neg,
    }
    target = Path(__file__).with_name("rfc6962.json")
    target.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"{target}: {len(inclusion)} inclusion, {len(consistency)} consistency, "
        f"{len(inclusion_neg)} + {len(consistency_neg)} negative"
    )


if __name__ == "__main__":
    main()

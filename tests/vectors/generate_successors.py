"""Write ``successors.json``: leaf 0 of successor logs (docs/tlog.md, "Successor logs").

The preimage is spelled out byte by byte here, independently of
``recordseal.merkle.genesis``: the tag, a 4-byte little-endian byte length and the UTF-8
predecessor origin, its size as an 8-byte little-endian integer, its 32-byte root. The worked
example continues the five-leaf log of docs/tlog.md ("The worked example"): its successor's
checkpoint of size 1 is signed with the same log key (seed SHA-256 of
``recordseal docs: log key``) under the successor's own name.
Run: ``.venv/bin/python tests/vectors/generate_successors.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from recordseal.tlog import Checkpoint, Ed25519Signer, sign_checkpoint

TAG = b"recordseal-log-successor-v1"
EXAMPLE = "example.com/recordseal/tenant-a/fleet-1"
EXAMPLE_ROOT = base64.b64decode("NBUVmC1lDiNSDb1U1/zwr6G3DMOhakEdRk3JwayWwwE=")
LOG_SEED = hashlib.sha256(b"recordseal docs: log key").digest()
#: (name, the line's first origin, the predecessor, its size and root, the successor)
CASES = [
    ("the worked example: the five-leaf log of docs/tlog.md", EXAMPLE, EXAMPLE, 5, EXAMPLE_ROOT),
    ("a second successor", EXAMPLE, f"{EXAMPLE}/2", 1, bytes(range(32))),
    ("a legacy fleet's log", "svc.example/fleet-1", "svc.example/fleet-1", 4096, b"\xff" * 32),
    ("a fleet id of digits", "svc.example/acme/7", "svc.example/acme/7", 2**40 + 1, bytes(32)),
    ("UTF-8 lengths are byte counts", "svc.example/\u00e9/f", "svc.example/\u00e9/f", 9, bytes(32)),
]


def preimage(predecessor: str, size: int, root: bytes) -> bytes:
    name = predecessor.encode()
    return TAG + len(name).to_bytes(4, "little") + name + size.to_bytes(8, "little") + root


def successor(first: str, predecessor: str) -> str:
    """``<first>/2`` after the first origin, ``<first>/(n+1)`` after ``<first>/n``."""
    if predecessor == first:
        return f"{first}/2"
    return f"{first}/{int(predecessor.removeprefix(first + '/')) + 1}"


def main() -> None:
    cases = []
    for name, first, predecessor, size, root in CASES:
        data = preimage(predecessor, size, root)
        leaf = hashlib.sha256(data).digest()
        origin = successor(first, predecessor)
        root_1 = hashlib.sha256(b"\x00" + leaf).digest()
        cases.append(
            {
                "name": name,
                "first": first,
                "predecessor": predecessor,
                "size": size,
                "root": root.hex(),
                "successor": origin,
                "preimage": data.hex(),
                "leaf": leaf.hex(),
                # RFC 6962 leaf hash of leaf 0: the successor's root at size 1
                "root_size_1": root_1.hex(),
                "signed_checkpoint": sign_checkpoint(
                    Checkpoint(origin, 1, root_1), Ed25519Signer.from_seed(origin, LOG_SEED)
                ),
            }
        )
    out = Path(__file__).with_name("successors.json")
    out.write_text(
        json.dumps(
            {
                "tag": TAG.decode(),
                "log_seed_recipe": "SHA-256 of the ASCII text 'recordseal docs: log key'",
                "cases": cases,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()

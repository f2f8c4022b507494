"""Write ``genesis.json``: genesis roots of (tenant, fleet) logs (spec panel 2.5, docs/fleets.md).

The preimage is spelled out byte by byte here, independently of
``recordseal.merkle.genesis``: tag, then for tenant and fleet a 4-byte little-endian byte
length and the UTF-8 bytes. ``tenant: null`` is a fleet with no tenant (empty tenant).
Run: ``.venv/bin/python tests/vectors/generate_genesis.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

TAG = b"recordseal-audit-tenant-genesis-v1"
CASES = [
    ("tenant and fleet", "acme", "fleet-1"),
    ("pair a, bc", "a", "bc"),
    ("pair ab, c", "ab", "c"),
    ("equal fleet id, other tenant", "globex", "fleet-1"),
    ("no tenant (legacy fleet)", None, "fleet-1"),
    ("UTF-8 lengths are byte counts", "\u00e9", "f"),
]


def preimage(tenant: str | None, fleet: str) -> bytes:
    t, f = (tenant or "").encode(), fleet.encode()
    return TAG + len(t).to_bytes(4, "little") + t + len(f).to_bytes(4, "little") + f


def main() -> None:
    cases = []
    for name, tenant, fleet in CASES:
        data = preimage(tenant, fleet)
        genesis = hashlib.sha256(data).digest()
        cases.append(
            {
                "name": name,
                "tenant": tenant,
                "fleet": fleet,
                "preimage": data.hex(),
                "genesis": genesis.hex(),
                # RFC 6962 leaf hash of the genesis: the root of the log at size 1
                "root_size_1": hashlib.sha256(b"\x00" + genesis).hexdigest(),
            }
        )
    out = Path(__file__).with_name("genesis.json")
    out.write_text(json.dumps({"tag": TAG.decode(), "cases": cases}, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Write ``subject_keys.json``: the salt and payload keys of subject keys (DESIGN.md 3 and 4).

Each key is HKDF-SHA-256 (RFC 5869) of the 32-byte subject key, no salt, 32 bytes, with the
info ``recordseal/salt-key/v1`` or ``recordseal/payload-key/v1``, computed here with
``cryptography``'s HKDF, independently of ``recordseal``.
Run: ``.venv/bin/python tests/vectors/generate_subject_keys.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SALT_KEY_INFO = b"recordseal/salt-key/v1"
PAYLOAD_KEY_INFO = b"recordseal/payload-key/v1"
CASES = [
    ("all zeros", bytes(32)),
    ("all ones", b"\xff" * 32),
    ("counting", bytes(range(32))),
    # a key that looks random, reproducible from its label
    ("sha256 of a label", hashlib.sha256(b"recordseal subject key vector").digest()),
]


def hkdf(key: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)


def main() -> None:
    cases = [
        {
            "name": name,
            "subject_key": key.hex(),
            "salt_key": hkdf(key, SALT_KEY_INFO).hex(),
            "payload_key": hkdf(key, PAYLOAD_KEY_INFO).hex(),
        }
        for name, key in CASES
    ]
    document = {
        "salt_key_info": SALT_KEY_INFO.decode(),
        "payload_key_info": PAYLOAD_KEY_INFO.decode(),
        "cases": cases,
    }
    out = Path(__file__).with_name("subject_keys.json")
    out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()

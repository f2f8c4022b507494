"""Write ``malformed.json``: bundles that are malformed (docs/bundle.md, "A malformed
bundle"), each as the exact text a verifier reads, and what every verifier reports for it:
verdict ``FAILED``, check 1 failed naming the member, checks 2-7 unchecked, no record and no
disclosed values.

The bundles are the verifier tests' factory's (``tests/verify/factory.py``) good bundle with
one member spoilt; the expected outcome is written here by hand from docs/bundle.md, and the
script refuses to write unless the Python verifier gives it.
Run: ``.venv/bin/python tests/vectors/generate_malformed.py`` from the repository root.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from tests.verify.factory import World  # noqa: E402

from recordseal.verify import load_key_directory, load_trust_store, verify_bundle  # noqa: E402

Doc = dict[str, Any]
UNRUN = ["failed"] + ["unchecked"] * 6


def spoilt(bundle: bytes, change: Callable[[Doc], None]) -> str:
    document = json.loads(bundle)
    change(document)
    return json.dumps(document)


def cases(world: World) -> list[tuple[str, str, str]]:
    """(name, bundle text, the member check 1's detail names)."""
    good = world.bundle()

    def token(text: str) -> Callable[[Doc], None]:
        return lambda d: d["seal"].update(timestamps=[{"authority": "tsa.example", "token": text}])

    return [
        ("an RFC 3161 token that is not base64", spoilt(good, token("not base64!")),
         "$.seal.timestamps[0].token"),
        ("an RFC 3161 token in unpadded base64", spoilt(good, token("AAA")),
         "$.seal.timestamps[0].token"),
        ("a consistency hash that is not base64",
         spoilt(good, lambda d: d["seal"]["previous_consistency"].__setitem__(0, "z!")),
         "$.seal.previous_consistency[0]"),
        ("a salt in upper-case hex",
         spoilt(good, lambda d: d["fields"][0].update(salt=d["fields"][0]["salt"].upper())),
         "$.fields[0].salt"),
        ("not JSON", good.decode()[:-1], ""),
    ]  # fmt: skip


def main() -> None:
    world = World()
    keys, trust = world.keys_document(), world.trust_document()
    directory = load_key_directory(json.dumps(keys))
    store = load_trust_store(json.dumps(trust))
    written = []
    for name, text, member in cases(world):
        result = verify_bundle(text.encode(), directory, store)
        got = (result.verdict, [c.status for c in result.checks], result.record, result.disclosed)
        detail = result.check(1).detail
        if got != ("FAILED", UNRUN, None, {}) or not detail.startswith("malformed bundle: "):
            raise SystemExit(f"{name}: the verifier gives {got}, {detail!r}")
        if member not in detail:
            raise SystemExit(f"{name}: check 1 does not name {member}: {detail!r}")
        expected = {"verdict": "FAILED", "statuses": UNRUN, "record": None, "disclosed": {},
                    "detail_1": "malformed bundle: ", "member": member}  # fmt: skip
        written.append({"name": name, "bundle_text": text, "expected": expected})
    document = {"keys": keys, "trust": trust, "cases": written}
    out = Path(__file__).with_name("malformed.json")
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""Offline verification rate, as a table: bundles per second on one core, and each rate as a
ratio to one Ed25519 signature verification (the least a bundle costs: its header signature),
measured just before and just after each case, so a machine whose load changes during the run
still gives comparable ratios.

    .venv/bin/python benchmarks/verify_rate.py [--seconds 1.0]

The cases are those of ``test_verify_bench.py`` (20-field and 4,096-field bundles of one log,
witnessed or not; one bundle alone, or many with one ``Verifier``). Each figure is the best
of five rounds of at least ``--seconds`` each, so a busy machine costs precision, not the
ratio's meaning. On a package without ``Verifier`` (before issue 19), "many" is
``verify_bundle`` per bundle.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).parent))

from payloads import DECLARATIONS_1K, record_1k, record_4096
from recordseal import verify
from verify_world import Bundles, make_bundles


def best_rate(work: Callable[[], object], items: int, seconds: float) -> float:
    """Items per second: the best of five rounds, each repeating ``work`` for ``seconds``."""
    best = 0.0
    for _ in range(5):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds or done == 0:
            work()
            done += items
        best = max(best, done / elapsed)
    return best


def cases(seconds: float) -> list[tuple[str, float, float]]:
    """(case, bundles/s, Ed25519 verifications/s measured around it)."""
    key = Ed25519PrivateKey.generate()
    message = b"recordseal/header/v1\x00" + b"h" * 480
    signature, public = key.sign(message), key.public_key()

    def reference() -> float:
        return best_rate(functools.partial(public.verify, signature, message), 1, seconds / 2)

    worlds: list[tuple[str, Bundles, bool]] = [
        ("20 fields, witnessed", make_bundles(record_1k(), DECLARATIONS_1K, 64), True),
        (
            "20 fields, witnessed, ML-DSA-44",
            make_bundles(record_1k(), DECLARATIONS_1K, 64, post_quantum=True),
            True,
        ),
        (
            "20 fields, no witness",
            make_bundles(record_1k(), DECLARATIONS_1K, 64, witnessed=False),
            False,
        ),
        ("4096 fields, witnessed", make_bundles(record_4096(), {}, 4, rounds=2), True),
        (
            "4096 fields, no witness",
            make_bundles(record_4096(), {}, 4, rounds=2, witnessed=False),
            False,
        ),
    ]
    rows = []
    for name, world, witnessed in worlds:
        keys = verify.load_key_directory(world.keys)
        trust = verify.load_trust_store(world.trust) if witnessed else None
        bundle = world.bundles[len(world.bundles) // 2]
        one = functools.partial(verify.verify_bundle, bundle, keys, trust)
        many = _many(world, keys, trust)
        for label, work, items in [
            ("one bundle", one, 1),
            ("many of one log", many, len(world.bundles)),
        ]:
            before = reference()
            rate = best_rate(work, items, seconds)
            rows.append((f"{name}, {label}", rate, (before + reference()) / 2))
    return rows


def _many(world: Bundles, keys: object, trust: object) -> Callable[[], object]:
    factory = getattr(verify, "Verifier", None)
    if factory is None:
        return lambda: [verify.verify_bundle(b, keys, trust) for b in world.bundles]
    verifier = factory(keys, trust)
    return lambda: [verifier.verify(b) for b in world.bundles]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="length of a round (1.0)")
    rows = cases(parser.parse_args().seconds)
    width = max(len(name) for name, _, _ in rows)
    print(f"{'case':<{width}}  {'bundles/s/core':>14}  {'Ed25519/s':>10}  {'ratio':>7}")
    for name, rate, reference in rows:
        print(f"{name:<{width}}  {rate:>14,.1f}  {reference:>10,.0f}  {rate / reference:>7.4f}")


if __name__ == "__main__":
    main()

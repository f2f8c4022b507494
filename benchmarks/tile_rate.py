"""How fast tiles are served (docs/tlog.md, "Tiles"), as ratios measured in one run.

    .venv/bin/python benchmarks/tile_rate.py [--seconds 1.0]

A SQLite store holds one log of ``SMALL`` and one of ``LARGE`` leaves (random leaf hashes,
every complete subtree node stored, as a seal stores them). Measured, each the best of five
rounds of ``--seconds``:

- full level-0 tiles served by ``TileService`` from the small and the large log: the ratio
  shows whether the cost grows with the log (it should not: one range read);
- the level-1 tile ``tile/1/000`` of the large log served, against the same 256 hashes
  recomputed from the 65,536 leaf hashes they cover (what serving costs without stored
  interior nodes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from recordseal.merkle import tree
from recordseal.merkle.log import grow_nodes
from recordseal.services.tiles import OPERATOR, TileService
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.rows import LogRow
from recordseal.tlog.tiles import Tile

SMALL = 1 + 4 * 256
LARGE = 1 + 4 * 65536
SERVICE = "bench.local"


def fill(database: Path, tenant: str, size: int) -> None:
    """A log of ``size`` random leaves, with every complete subtree node stored."""
    nodes, root = grow_nodes(0, [os.urandom(32) for _ in range(size)], {})
    with sqlite3.connect(database) as conn:
        log_id = conn.execute(
            "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES (?, 'default', ?, ?, ?)"
            " RETURNING id",
            (tenant, f"{SERVICE}/{tenant}/default", size, root),
        ).fetchone()[0]
        conn.executemany(
            "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)",
            [(log_id, level, index, digest) for (level, index), digest in nodes.items()],
        )
        conn.execute(
            "INSERT INTO checkpoints (log_id, size, root, note, created_at)"
            " VALUES (?, ?, ?, '', '')",
            (log_id, size, root),
        )


async def best_rate(work: Callable[[], Awaitable[object]], seconds: float) -> float:
    """Calls per second: the best of five rounds of ``seconds`` each."""
    best = 0.0
    for _ in range(5):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds or done == 0:
            await work()
            done += 1
        best = max(best, done / elapsed)
    return best


async def measure(folder: Path, seconds: float) -> dict[str, float]:
    settings = Settings(data_dir=folder)
    store = open_store(settings)
    await store.open()
    await store.close()
    fill(settings.database_path, "small", SMALL)
    fill(settings.database_path, "large", LARGE)
    store = open_store(settings)
    await store.open()
    try:
        tiles = TileService(store.logs, SERVICE)
        small = await tiles.log(f"{SERVICE}/small/default", OPERATOR)
        large = await tiles.log(f"{SERVICE}/large/default", OPERATOR)
        pick = random.Random(1)

        def level_0(log: LogRow, count: int) -> Callable[[], Awaitable[bytes]]:
            return lambda: tiles.tile(log, Tile(0, pick.randrange(count)))

        async def recompute() -> bytes:
            leaves = await store.logs.tile_hashes(large.log.origin, 0, 0, 65536)
            nodes = {(0, i): leaf for i, leaf in enumerate(leaves)}

            def node(level: int, index: int) -> bytes:
                found = nodes.get((level, index))
                if found is None:
                    left, right = node(level - 1, 2 * index), node(level - 1, 2 * index + 1)
                    found = nodes[(level, index)] = tree.node_hash(left, right)
                return found

            return b"".join(node(8, i) for i in range(256))

        async def level_1() -> bytes:
            return await tiles.tile(large, Tile(1, 0))

        assert await recompute() == await level_1()
        return {
            "tile/0/N, small log": await best_rate(level_0(small, SMALL // 256), seconds),
            "tile/0/N, large log": await best_rate(level_0(large, LARGE // 256), seconds),
            "tile/1/000, served": await best_rate(level_1, seconds),
            "tile/1/000, recomputed from leaves": await best_rate(recompute, seconds),
        }
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    seconds = parser.parse_args().seconds
    with tempfile.TemporaryDirectory() as folder:
        rates = asyncio.run(measure(Path(folder), seconds))
    for name, rate in rates.items():
        print(f"{name:40} {rate:10,.0f} /s")
    large, small = rates["tile/0/N, large log"], rates["tile/0/N, small log"]
    print(f"large / small log, level 0:  {large / small:.2f}")
    served, recomputed = rates["tile/1/000, served"], rates["tile/1/000, recomputed from leaves"]
    print(f"served / recomputed, level 1: {served / recomputed:.0f}")


if __name__ == "__main__":
    main()

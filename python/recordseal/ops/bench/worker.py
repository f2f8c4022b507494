"""One core's side of ``recordseal bench``: ``python -m recordseal.ops.bench.worker DIR``, run
with ``RECORDSEAL_CORE`` set to the core it times (``core/backend.py``), the bundle of
``world.py`` in ``DIR``. It reads one request a line on standard input and answers one line
on standard output, so the command can alternate the two cores round by round:

- ``{"case": NAME, "calls": 0, "seconds": S}``: call the case until ``S`` seconds have passed
  (at least once); answer ``{"per_call": seconds, "fingerprint": hex}``, the result's bytes.
- ``{"case": NAME, "calls": N}``: time ``N`` calls in a row; answer ``{"seconds": total}``.

Its first line says which core runs: ``{"backend": ..., "profile": ..., "extension": ...}``.
Times are the process's CPU time (``time.process_time``): on a shared machine, the time it
waited for a CPU is not counted (every case runs on one thread). The collector runs as it does
in the service: a figure includes what its garbage costs; the inputs of each case are frozen
out of its reach (``gc.freeze``) once built.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from recordseal.core import backend
from recordseal.ops.bench.cases import BY_NAME, Call
from recordseal.ops.bench.world import World


class Request(msgspec.Struct, frozen=True):
    case: str
    calls: int
    seconds: float = 0.0


def read_world(directory: Path) -> World:
    return World(*(directory.joinpath(name).read_bytes() for name in ("bundle", "keys", "trust")))


def write_world(world: World, directory: Path) -> None:
    for name in ("bundle", "keys", "trust"):
        directory.joinpath(name).write_bytes(getattr(world, name))


def estimate(call: Call, seconds: float) -> tuple[float, Any]:
    """Seconds per call over at least ``seconds`` (one call at least), and the last result."""
    calls, start = 0, time.process_time()
    while True:
        result = call()
        calls += 1
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return elapsed / calls, result


def timed(call: Call, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        call()
    return time.process_time() - start


def main(directory: str) -> None:
    world = read_world(Path(directory))
    built: dict[str, Call] = {}
    extension = backend.extension
    hello = {
        "backend": backend.BACKEND,
        "profile": getattr(extension, "BUILD_PROFILE", None),
        "extension": getattr(extension, "__file__", None),
    }
    out = sys.stdout
    out.write(msgspec.json.encode(hello).decode() + "\n")
    out.flush()
    for line in sys.stdin:
        request = msgspec.json.decode(line, type=Request)
        case = BY_NAME[request.case]
        try:
            call = built.get(case.name)
            if call is None:
                call = built[case.name] = case.build(world)
                # The inputs live for the whole run: out of the collector's way, so that what
                # earlier cases left behind does not change what a collection costs.
                gc.collect()
                gc.freeze()
            if request.calls == 0:
                per_call, result = estimate(call, request.seconds)
                answer = {"per_call": per_call, "fingerprint": case.fingerprint(result).hex()}
            else:
                answer = {"seconds": timed(call, request.calls)}
        # Boundary of one case in the worker process: whatever the case raised is sent to
        # the command, which names the case and stops.
        except Exception as error:
            answer = {"error": f"{type(error).__name__}: {error}"}
        out.write(msgspec.json.encode(answer).decode() + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1])

"""What one ingested record costs the service's Python, in process, with no HTTP server.

    PYTHONPATH=python .venv/bin/python benchmarks/profile_ingest.py [--batch 100]
        [--requests 200] [--subjects 997] [--profile FILE]

Builds the application (``create_app``) on a fresh SQLite data directory and calls it as an
ASGI application, request after request, with the load script's ~1 KB record (single posts to
``/v1/records``, or batches to ``/v1/records:batch``). Prints, per record:

- CPU µs: the process's CPU time (every thread: rayon's too) over the timed requests, divided
  by the records they stored: the service's own work, with neither the HTTP server nor wrk;
  and the part of it spent on the event loop's thread (Python, and what the core does there);
- Python calls: the function calls ``cProfile`` counts over the same requests (a second pass,
  profiled), builtins included, and those of Python functions alone.

Both passes run after a warm-up (``--no-calls``: the first alone, for a sampling profiler);
the store's group commit, the sealer and every middleware run as in ``recordseal serve`` (one
worker). ``--profile FILE`` writes the cProfile statistics.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from payloads import load_record  # noqa: E402


def body_of(batch: int, request: int, subjects: int) -> bytes:
    record = load_record("")

    def subject(k: int) -> str:
        index = request * max(batch, 1) + k
        return f"subject-{index % subjects if subjects else index}"

    if not batch:
        return json.dumps({**record, "subject_id": subject(0)}).encode()
    records = [{**record, "subject_id": subject(k)} for k in range(batch)]
    return json.dumps({"records": records}).encode()


async def call(app: Any, path: str, body: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    """One request through the ASGI application; its status."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def drive(args: argparse.Namespace) -> None:
    from recordseal.ops.tokens import create_token
    from recordseal.settings import Settings
    from recordseal.web.app import create_app
    from recordseal.web.gc_tuning import tune_collector

    tune_collector()  # as a serving process does (recordseal.web.asgi)

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        app = create_app(settings)
        async with app.lifespan():
            token = await create_token(settings, "load", "profile")
            auth = [(b"authorization", f"Bearer {token}".encode())]
            stream = json.dumps({"name": "load"}).encode()
            assert await call(app, "/v1/streams", stream, auth) == 201
            path = "/v1/records:batch" if args.batch else "/v1/records"
            per_request = max(args.batch, 1)
            expected = 200 if args.batch else 201
            bodies = [body_of(args.batch, n, args.subjects) for n in range(3 * args.requests)]

            async def run(chunk: list[bytes]) -> None:
                # ``concurrency`` requests in flight, as a server's connections would be.
                for at in range(0, len(chunk), args.concurrency):
                    statuses = await asyncio.gather(
                        *(call(app, path, b, auth) for b in chunk[at : at + args.concurrency])
                    )
                    assert set(statuses) == {expected}, statuses

            await run(bodies[: args.requests])  # warm-up
            started, cpu = time.perf_counter(), time.process_time()
            main = time.thread_time()
            await run(bodies[args.requests : 2 * args.requests])
            main = time.thread_time() - main
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - started
            records = args.requests * per_request
            profiler = cProfile.Profile()
            if args.calls:
                profiler.enable()
                await run(bodies[2 * args.requests :])
                profiler.disable()
    shape = f"batches of {args.batch}" if args.batch else "single records"
    line = (
        f"{shape}, {args.requests} requests, {args.concurrency} in flight:"
        f" CPU {cpu / records * 1e6:.1f} us/record ({main / records * 1e6:.1f} on the event"
        f" loop's thread), {records / wall:.0f} records/s in process"
    )
    if not args.calls:
        print(line)
        return
    stats = pstats.Stats(profiler)
    total = stats.total_calls  # type: ignore[attr-defined]
    python = sum(
        calls
        for (file, _, _), (_, calls, _, _, _) in stats.stats.items()  # type: ignore[attr-defined]
        if file != "~"
    )
    if args.profile:
        stats.dump_stats(args.profile)
    print(
        f"{line}, {total / records:.1f} calls/record ({python / records:.1f} of Python functions)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=0, help="records per batch (0: singles)")
    parser.add_argument("--requests", type=int, default=200, help="requests per pass")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--subjects", type=int, default=997, help="distinct subjects (0: new)")
    parser.add_argument("--profile", help="write the cProfile statistics to this file")
    parser.add_argument(
        "--no-calls",
        dest="calls",
        action="store_false",
        help="skip the profiled pass (under a sampling profiler such as py-spy)",
    )
    asyncio.run(drive(parser.parse_args()))


if __name__ == "__main__":
    main()

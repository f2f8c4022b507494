"""The ``bench`` subcommand: its arguments, and the run that prints, saves, compares and draws
its results (docs/performance.md). Exit 0 when done, 1 when ``--compare`` found a regression
beyond ``--fail-over`` (each regressed operation named on standard error), 2 when the run
could not be made (a core that does not start, a baseline that is no result of this schema,
no wrk for ``--service``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from recordseal.ops.bench.defaults import (
    FAIL_OVER,
    ROUND_SECONDS,
    ROUNDS,
    SERVICE_ROUNDS,
    SERVICE_SECONDS,
)


def threshold(text: str) -> float:
    """``15%`` or ``15`` as 0.15: a regression threshold, more than 0."""
    try:
        value = float(text.strip().removesuffix("%")) / 100
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no percentage (15%)") from None
    if not 0 < value < 10:
        raise argparse.ArgumentTypeError("the threshold must lie between 0% and 1000%")
    return value


def register(commands: Any) -> None:
    bench = commands.add_parser(
        "bench",
        help="time the core's operations, native against the pure-Python reference",
        description="Time every core operation on the native core and on the pure-Python"
        " reference, side by side (docs/performance.md).",
    )
    bench.add_argument(
        "--rounds", type=int, default=None,
        help=f"interleaved rounds ({ROUNDS}; with --service {SERVICE_ROUNDS})",
    )  # fmt: skip
    bench.add_argument(
        "--round-seconds", type=float, default=ROUND_SECONDS, metavar="S",
        help=f"CPU time given to each core per round and operation ({ROUND_SECONDS})",
    )  # fmt: skip
    bench.add_argument(
        "--quick", action="store_true",
        help="a smoke run: 3 rounds of a few milliseconds (checks the command, not for figures)",
    )  # fmt: skip
    bench.add_argument(
        "--only", action="append", default=None, metavar="TEXT",
        help="only the operations whose name holds TEXT (repeatable)",
    )  # fmt: skip
    bench.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    bench.add_argument(
        "--compare", type=Path, metavar="BASELINE",
        help="compare with a saved --json result; exit 1 on a regression beyond --fail-over",
    )  # fmt: skip
    bench.add_argument(
        "--fail-over", type=threshold, default=FAIL_OVER, metavar="PCT",
        help="what --compare calls a regression: a native time grown, or a ratio shrunk, by"
        " more than PCT (15%%)",
    )  # fmt: skip
    bench.add_argument(
        "--plot", type=Path, metavar="FILE", help="draw the results (FILE.svg or FILE.png)"
    )
    bench.add_argument(
        "--service", action="store_true",
        help="instead, drive the ingest routes of a service on each core with wrk, same load,"
        " same run, and print both rates and their ratio",
    )  # fmt: skip
    bench.add_argument(
        "--seconds", type=float, default=SERVICE_SECONDS,
        help=f"with --service: length of each round of wrk ({SERVICE_SECONDS:g})",
    )  # fmt: skip
    bench.set_defaults(run=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    from recordseal.ops.bench.errors import BenchError
    from recordseal.ops.bench.session import session

    try:
        return session(args)
    except BenchError as refused:
        print(f"recordseal bench: {refused}", file=sys.stderr)
        return 2

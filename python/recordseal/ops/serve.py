"""``recordseal serve``: the service, its workers and, for a try-out, a demo witness."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from recordseal.ops.options import data_dir_option, database_url_option
from recordseal.settings import from_env


def register(commands: Any) -> None:
    serve = commands.add_parser("serve", help="start the service")
    data_dir_option(serve)
    serve.add_argument(
        "--host", default=None, help="address to listen on (RECORDSEAL_HOST; 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=None, help="port (RECORDSEAL_PORT; 8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    serve.add_argument(
        "--demo-witness",
        type=Path,
        default=None,
        metavar="DIR",
        help="also run a demo witness on this machine, its key and state in DIR, for every log"
        " of this service (make run); production names independent witnesses instead",
    )
    database_url_option(serve)
    serve.set_defaults(run=_serve)


def _serve(args: argparse.Namespace) -> int:
    from recordseal.serve import serve
    from recordseal.web.orphan_guard import SUPERVISOR_VARIABLE
    from recordseal.web.preflight import preflight

    settings = from_env(
        data_dir=args.data_dir, port=args.port, host=args.host, database_url=args.database_url
    )
    refusal = preflight(settings)
    if refusal is not None:
        print(f"recordseal: {refusal.message}", file=sys.stderr)
        return refusal.exit_code
    os.environ[SUPERVISOR_VARIABLE] = str(os.getpid())  # workers end with this process
    return serve(settings, args.workers, args.demo_witness)

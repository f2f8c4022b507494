"""``make run`` starts at once when nothing changed (issue 33, item 9): what each process of
``recordseal serve --demo-witness`` imports, and which process imports it. The time itself is
measured by ``benchmarks/serve_start.py`` (a benchmark, as a ratio), never asserted here.

- the command line loads what the command run needs: ``serve`` and ``witness serve`` start
  without the web framework, the HTTP client or the client library;
- the service's application is imported once, by ``serve``, while the demo witness starts,
  and the workers granian forks from it start with it; likewise the witness's application, by
  ``witness serve`` before its worker is forked.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from tests.servers import free_port, kill_service, start_service

#: Modules the command line itself must not load: each is a command's own (the metrics'
#: library, which ``serve`` sets up before it is first imported, among them).
HEAVY = (
    "litestar",
    "httpx",
    "recordseal.client.session",
    "recordseal.witness.app",
    "prometheus_client",
)


def test_the_command_line_loads_no_command_s_heavy_modules() -> None:
    probe = f"import sys, recordseal.cli; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def imported(log: str, module: str, nested: bool = False) -> int:
    """How many processes imported ``module`` (``-X importtime`` lines of every process);
    ``nested``: only as another module's import (indented under it)."""
    indent = r"\s{3,}" if nested else r"\s+"
    return len(re.findall(rf"^import time:.*\|{indent}{re.escape(module)}$", log, re.MULTILINE))


def test_serve_imports_the_applications_once_and_forks_the_workers_with_them(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = start_service(
        data,
        port,
        workers=2,
        env={"PYTHONPROFILEIMPORTTIME": "1"},  # every process says what it imports
        args=["--demo-witness", str(data / "demo-witness")],
    )
    log_path = data / f"server-{port}.log"
    try:
        deadline = time.monotonic() + 120  # both workers started: granian says so
        while not all(f"Started worker-{n}" in log_path.read_text() for n in (1, 2)):
            assert time.monotonic() < deadline, log_path.read_text()[-4000:]
            time.sleep(0.1)
    finally:
        kill_service(server)
    log = log_path.read_text()
    # Each worker imports its entry point, whose application modules it already has.
    assert imported(log, "recordseal.web.asgi") == 2
    assert imported(log, "recordseal.web.app", nested=True) == 0
    assert imported(log, "recordseal.witness.app") == 1  # witness serve's, not its worker's

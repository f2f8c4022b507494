"""``serve --demo-witness``: the witness lives and dies with the service."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx

from tests.servers import free_port, kill_service, start_service


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_the_demo_witness_stops_when_serve_is_killed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = start_service(data, free_port(), args=["--demo-witness", str(tmp_path / "witness")])
    try:
        (witness,) = json.loads((data / "service.json").read_text())["witnesses"]
        assert answers(witness["url"])
        os.kill(server.pid, signal.SIGKILL)  # the supervisor alone, as the OOM killer would
        deadline = time.monotonic() + 15
        while answers(witness["url"]):
            assert time.monotonic() < deadline, "the demo witness outlived serve"
            time.sleep(0.2)
    finally:
        kill_service(server)


def test_a_witness_that_cannot_start_stops_serve_with_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(tmp_path / "data"),
         "--port", str(free_port()), "--demo-witness", str(blocker)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("recordseal: "), done.stderr
    assert "Traceback" not in done.stderr


def test_a_witness_directory_of_another_data_directory_is_refused_naming_the_fix(
    tmp_path: Path,
) -> None:
    """A demo witness remembers the histories of one data directory's logs; started for a new
    data directory it refused every checkpoint of the same origins (and fenced the logs)."""
    import subprocess
    import sys

    witness = tmp_path / "witness"
    (tmp_path / "first").mkdir()
    server = start_service(tmp_path / "first", free_port(), args=["--demo-witness", str(witness)])
    kill_service(server)
    (tmp_path / "second").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(tmp_path / "second"),
         "--port", str(free_port()), "--demo-witness", str(witness)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"recordseal: the demo witness directory {witness} belongs to another")
    assert "such as DATA_DIR/demo-witness" in last
    assert "Traceback" not in done.stderr

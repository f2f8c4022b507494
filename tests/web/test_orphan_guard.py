"""A worker ends when its supervisor is killed even if its Python can no longer run (issue 33,
item 12).

granian 2.8 serves the application here as ``recordseal serve`` does (a supervisor forking
its workers), with an application whose lifespan startup never finishes: there, a second stop
signal blocks the worker for good inside granian, holding its GIL (the worker's stop channel
holds one signal, and the call that sends another waits without releasing the GIL). The
supervisor is then SIGKILLed; the worker must still end, and leave the port free.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recordseal.web.orphan_guard import SUPERVISOR_VARIABLE
from tests.processes import children, kill_all, process, wait_gone
from tests.servers import ROOT, free_port
from tests.web.stalled_app import MARKER_VARIABLE

SUPERVISE = f"""
import os, sys
os.environ[{SUPERVISOR_VARIABLE!r}] = str(os.getpid())  # as recordseal serve does
os.execv(sys.executable, [sys.executable, "-m", "granian", *sys.argv[1:]])
"""


def start_stalled(tmp_path: Path, port: int) -> tuple[subprocess.Popen[bytes], int]:
    """The supervisor, and its worker's pid once the worker's startup has begun."""
    marker = tmp_path / "worker.pid"
    output = tmp_path / "granian.log"
    with output.open("wb") as log:  # the child keeps its own descriptor
        supervisor = subprocess.Popen(
            [sys.executable, "-c", SUPERVISE, "--interface", "asgi", "--host", "127.0.0.1",
             "--port", str(port), "--workers", "1", "tests.web.stalled_app:app"],
            cwd=ROOT, env={**os.environ, MARKER_VARIABLE: str(marker)},
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while not marker.exists() and supervisor.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not marker.exists():
        os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
        pytest.fail(f"the worker did not start:\n{output.read_text(errors='replace')[-4000:]}")
    return supervisor, int(marker.read_text())


@pytest.mark.parametrize("stray_signal", [None, signal.SIGINT], ids=["killed", "stopped, killed"])
def test_a_starting_worker_ends_when_its_supervisor_is_killed(
    tmp_path: Path, stray_signal: signal.Signals | None
) -> None:
    """``killed``: the supervisor alone is SIGKILLed, and the worker gets the kernel's
    SIGTERM and nothing more from supervision (a second signal of its own would block it).
    ``stopped, killed``: the worker also got a stop signal of its own first (as when a Ctrl-C
    is followed by ``kill -9`` of the supervisor), so the kernel's SIGTERM blocks it for good
    and only a kill from outside its interpreter ends it."""
    port = free_port()
    supervisor, pid = start_stalled(tmp_path, port)
    worker = process(pid)
    service = [worker, *children(pid)]  # the worker and its watchdog
    try:
        assert int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == (
            supervisor.pid
        )
        if stray_signal is not None:
            os.kill(pid, stray_signal)
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
        survivors = wait_gone(service)
        assert not survivors, f"outlived its supervisor: {survivors}"
        with socket.socket() as probe:  # nothing holds the port
            assert probe.connect_ex(("127.0.0.1", port)) != 0
    finally:
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGKILL)
            supervisor.wait()
        kill_all(service)

"""The demo witness of ``recordseal serve --demo-witness DIR`` (``make run`` uses it).

A witness is only worth something when someone independent runs it; a first run on one
machine still deserves bundles that reach ``VERIFIED``. So ``serve`` can start a witness as a
process of its own, with its own key and state in ``DIR``, labelled everywhere as a *demo
witness on this machine*: its trust-store name says so, its ``/health`` answers ``"demo":
true``, and it logs a warning at start. It witnesses every log of the service, including
logs created later (new tenants, new fleets), through a log family (docs/tlog.md): the
service's log key under the service's origin. It stops with ``serve``, and dies with it.
It follows the data directory's log keys while it runs: ``serve`` rewrites its family file
(:data:`FAMILIES_FILE`, read again by the witness whenever it changes) within
:data:`FOLLOW_SECONDS` of ``recordseal keys rotate log``, so the log is witnessed through a
rotation and after ``--complete`` without a restart.

Its memory belongs to one data directory: a witness remembers each origin's history, and a
new data directory signs new histories under the same origins, which it would refuse for good.
So ``DIR`` records the log key it witnesses (:data:`FAMILY_FILE`), and a directory made for
another data directory's key is refused at start, naming the fix; ``make run`` keeps it in
the data directory (``DATA_DIR/demo-witness``), so removing one removes the other.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

from recordseal.ledger.errors import RecordServiceError
from recordseal.witness.families import write_family_file

#: The witness's key name, and its name in the service's witness list and trust stores.
KEY_NAME = "demo-witness.localhost"
LABEL = "demo witness on this machine"
START_SECONDS = 30
#: In the witness's directory: the vkey of the log family (data directory) it witnesses.
FAMILY_FILE = "log-family.vkey"
#: In the witness's directory: the family vkey of every log key, which the witness follows.
FAMILIES_FILE = "log-families.vkeys"
#: How often ``serve`` looks for a new log key to give the demo witness.
FOLLOW_SECONDS = 2.0
_PR_SET_PDEATHSIG = 1

log = logging.getLogger("recordseal.demo_witness")


class DemoWitnessError(RecordServiceError, RuntimeError):
    """The demo witness did not start (a start of ``serve`` stops on it)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the witness gets SIGTERM when ``serve`` (``parent``) dies, even by SIGKILL; a
    ``serve`` already gone when that was asked for is not waited for (no witness starts)."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)


@contextmanager
def demo_witness(
    directory: Path,
    family_vkeys: Callable[[], list[str]],
    log_format: str,
    meanwhile: Callable[[], None] = lambda: None,
) -> Iterator[dict[str, Any]]:
    """Run the demo witness for the logs under ``family_vkeys()`` (one per log key, the first
    key's first: a rotation adds keys, never changes the first), followed every
    FOLLOW_SECONDS; yield its entry for ``RECORDSEAL_WITNESSES`` once it answers; stop it on
    exit. ``meanwhile`` runs while the witness starts."""
    vkeys = family_vkeys()
    _claim(directory, vkeys[0])  # the data directory's first log key names it
    families = directory / FAMILIES_FILE
    write_family_file(families, vkeys)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "recordseal.cli", "witness", "serve", "--demo",
        "--data-dir", str(directory), "--name", KEY_NAME, "--host", "127.0.0.1",
        "--port", str(port), "--log-format", log_format, "--logs-under-file", str(families),
    ]  # fmt: skip
    process = subprocess.Popen(command, preexec_fn=partial(_die_with_parent, os.getpid()))
    stop = threading.Event()
    follower = threading.Thread(
        target=_follow, args=(families, family_vkeys, stop), name="demo-witness-keys", daemon=True
    )
    try:
        meanwhile()
        vkey = _wait_for_health(process, url)
        follower.start()
        yield {"name": LABEL, "url": url, "vkey": vkey}
    finally:
        stop.set()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _follow(families: Path, family_vkeys: Callable[[], list[str]], stop: threading.Event) -> None:
    """Give the witness every log key of the data directory, as they come."""
    while not stop.wait(FOLLOW_SECONDS):
        try:
            if write_family_file(families, family_vkeys()):
                log.info("demo_witness.log_keys_followed", extra={"file": str(families)})
        except (OSError, ValueError, RuntimeError) as error:  # mid-change: the next round
            log.warning("demo_witness.log_keys_unread", extra={"reason": str(error)})


def _claim(directory: Path, family_vkey: str) -> None:
    """Bind ``directory`` to the log key of one data directory (on first use)."""
    marker = directory / FAMILY_FILE
    try:
        known = marker.read_text().strip()
    except FileNotFoundError:
        marker.write_text(family_vkey + "\n")
        return
    if known != family_vkey:
        raise DemoWitnessError(
            f"the demo witness directory {directory} belongs to another data directory (it"
            f" witnesses the logs signed by {known}; this one signs with {family_vkey}), and"
            " would refuse this service's logs as another history of them: give --demo-witness"
            " a directory of this data directory's own, such as DATA_DIR/demo-witness"
            " (make run's default)"
        )


def _wait_for_health(process: subprocess.Popen[bytes], url: str) -> str:
    import httpx

    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DemoWitnessError(f"the demo witness exited with status {process.returncode}")
        try:
            answer = httpx.get(f"{url}/health", timeout=1)
            if answer.status_code == 200:
                vkey: str = answer.json()["witness"]
                return vkey
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise DemoWitnessError(f"the demo witness did not answer on {url} within {START_SECONDS} s")
